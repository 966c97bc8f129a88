# The test doubles the other tests run against: a worker (the protocol without a GPU) and a
# stand-in NVML that records its calls, so that no test reaches a real GPU's clock controls.
# Included from tests/CMakeLists.txt: paths are relative to tests/.

# ---- the worker test double (never installed)
add_executable(fake-worker support/fake_worker.cc)
target_link_libraries(fake-worker PRIVATE ablation_protocol ablation_kernel_catalog
  ablation_user_kernels)
set_target_properties(fake-worker PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests)


# The stand-in library, loaded by path exactly as the daemon loads libnvidia-ml.so.1.
add_library(fake-nvml SHARED ${CMAKE_CURRENT_SOURCE_DIR}/support/fake_nvml.cc)
target_include_directories(fake-nvml PRIVATE ${PROJECT_SOURCE_DIR})  # tests/support/fake_power.h
set_target_properties(fake-nvml PROPERTIES
  LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests
  CXX_VISIBILITY_PRESET hidden)
