# deploy/k8s checked offline (tests/k8s/k8s_test.py: python3-yaml, the daemon's own --help,
# promtool, kubectl kustomize where a kubectl is installed; the fake worker where a run must be
# stored without a GPU). Included from tests/CMakeLists.txt; paths relative to tests/.
add_test(NAME k8s.manifests
  COMMAND ${ABLATION_PYTHON} -m pytest -q -rs -p no:cacheprovider ${CMAKE_CURRENT_SOURCE_DIR}/k8s/k8s_test.py
  WORKING_DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR}/k8s)
set_tests_properties(k8s.manifests PROPERTIES LABELS "deploy;k8s" TIMEOUT 120
  ENVIRONMENT "PYTHONDONTWRITEBYTECODE=1;ABLATIOND=$<TARGET_FILE:ablationd>;ABLATION_CLIENT=$<TARGET_FILE:ablation-client>;FAKE_WORKER=$<TARGET_FILE:fake-worker>;ABLATION_SOURCE_DIR=${CMAKE_SOURCE_DIR}")
