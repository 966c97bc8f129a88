# The Python package (python/ablationd, stubs generated into <build>/python) against a real
# ablationd with the fake worker on loopback, through pytest (python3-pytest) under Debian's
# interpreter (python/CMakeLists.txt says why that one). Included from tests/CMakeLists.txt; paths relative to tests/.

set(ABLATION_PYTEST_ENV
  "PYTHONPATH=${CMAKE_BINARY_DIR}/python:${CMAKE_CURRENT_SOURCE_DIR}/python"
  "PYTHONDONTWRITEBYTECODE=1"
  "MPLBACKEND=Agg"
  "ABLATIOND=$<TARGET_FILE:ablationd>"
  "ABLATION_CLIENT=$<TARGET_FILE:ablation-client>"
  "FAKE_WORKER=$<TARGET_FILE:fake-worker>"
  "ABLATION_COMPILE=$<TARGET_FILE:ablation-compile>"
  "ABLATION_SOURCE_DIR=${CMAKE_SOURCE_DIR}")

# One ctest per file: pytest -q prints its own "N passed" line, and a failure names its file.
foreach(name frames client report notebook demo install history tls bucket_table ptx_compare)
  add_test(NAME python.${name}
    COMMAND ${ABLATION_PYTHON} -m pytest -q -p no:cacheprovider
            ${CMAKE_CURRENT_SOURCE_DIR}/python/test_${name}.py
    WORKING_DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR}/python)
  set_tests_properties(python.${name} PROPERTIES LABELS python TIMEOUT 300
    ENVIRONMENT "${ABLATION_PYTEST_ENV}")
endforeach()
