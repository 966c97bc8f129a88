# The daemon's Prometheus metrics (server/core/metrics, server/metrics): the registry and its text
# format, the hooks in the core, the HTTP endpoint; then Debian's real Prometheus scraping a
# daemon that runs with the fake worker. Included from tests/CMakeLists.txt; paths relative to tests/. CPU only.

add_executable(metrics_tests
  ${CMAKE_CURRENT_SOURCE_DIR}/metrics/metrics_test.cc
  ${CMAKE_CURRENT_SOURCE_DIR}/metrics/daemon_metrics_test.cc
  ${CMAKE_CURRENT_SOURCE_DIR}/metrics/endpoint_test.cc
  ${CMAKE_CURRENT_SOURCE_DIR}/metrics/endpoint_ipv6_test.cc
  ${CMAKE_CURRENT_SOURCE_DIR}/metrics/process_test.cc)
target_link_libraries(metrics_tests PRIVATE ablation_metrics GTest::gtest_main)
target_include_directories(metrics_tests PRIVATE ${CMAKE_SOURCE_DIR})
gtest_discover_tests(metrics_tests DISCOVERY_TIMEOUT 60 PROPERTIES LABELS metrics TIMEOUT 120)

# /metrics of a real ablationd (fake worker, stand-in NVML) read at each step of a run, and Debian's
# real Prometheus scraping it (skipped, saying so, where the prometheus binary is missing).
set(ABLATION_METRICS_PYTEST_ENV
  "PYTHONPATH=${CMAKE_BINARY_DIR}/python:${CMAKE_SOURCE_DIR}/tests/python"
  "PYTHONDONTWRITEBYTECODE=1"
  "ABLATIOND=$<TARGET_FILE:ablationd>"
  "ABLATION_CLIENT=$<TARGET_FILE:ablation-client>"
  "FAKE_WORKER=$<TARGET_FILE:fake-worker>"
  "FAKE_NVML=$<TARGET_FILE:fake-nvml>")
foreach(name metrics_e2e prometheus)
  add_test(NAME metrics.${name}
    COMMAND ${ABLATION_PYTHON} -m pytest -q -rs -p no:cacheprovider
            ${CMAKE_CURRENT_SOURCE_DIR}/metrics/${name}_test.py
    WORKING_DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR}/metrics)
  set_tests_properties(metrics.${name} PROPERTIES LABELS metrics TIMEOUT 300
    ENVIRONMENT "${ABLATION_METRICS_PYTEST_ENV}")
endforeach()
# pytest -rs prints the reason of a skip; ctest then counts the test skipped, not passed.
set_tests_properties(metrics.prometheus PROPERTIES
  SKIP_REGULAR_EXPRESSION "SKIPPED .*prometheus is not installed")
