# NVML telemetry and clock locking, tested against a stand-in NVML (libfake-nvml.so) that records
# its calls: no test here may reach a real GPU's clock controls.

# The stand-in library, loaded by path exactly as the daemon loads libnvidia-ml.so.1.
add_library(fake-nvml SHARED ${CMAKE_CURRENT_LIST_DIR}/support/fake_nvml.cc)
set_target_properties(fake-nvml PROPERTIES
  LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests
  CXX_VISIBILITY_PRESET hidden)

add_executable(nvml_tests
  ${CMAKE_CURRENT_LIST_DIR}/core/nvml_test.cc
  ${CMAKE_CURRENT_LIST_DIR}/core/clock_lock_test.cc
  ${CMAKE_CURRENT_LIST_DIR}/core/telemetry_test.cc)
target_link_libraries(nvml_tests PRIVATE ablation_core GTest::gmock GTest::gtest_main ${CMAKE_DL_LIBS})
target_compile_definitions(nvml_tests PRIVATE FAKE_NVML_PATH="$<TARGET_FILE:fake-nvml>")
add_dependencies(nvml_tests fake-nvml)
gtest_discover_tests(nvml_tests DISCOVERY_TIMEOUT 60 PROPERTIES LABELS nvml TIMEOUT 60)
