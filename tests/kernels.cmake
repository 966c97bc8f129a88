# Tests of kernels/ (included from tests/CMakeLists.txt).

# ---- CPU: catalog, reference, host helpers (no CUDA needed to run)
add_executable(kernels_catalog_tests
  kernels/catalog_test.cc
  kernels/reference_test.cc
  kernels/element_values_test.cc
  kernels/smem2reg_catalog_test.cc
  kernels/sm90_catalog_test.cc)
target_link_libraries(kernels_catalog_tests PRIVATE ablation_kernel_catalog GTest::gtest_main)
gtest_discover_tests(kernels_catalog_tests DISCOVERY_TIMEOUT 60)

# ---- GPU (label gpu): skipped with the reason where there is no device
add_executable(kernels_gpu_tests gpu/kernels_gpu_test.cc gpu/smem2reg_gpu_test.cc)
target_link_libraries(kernels_gpu_tests PRIVATE ablation_kernels GTest::gtest_main)
target_include_directories(kernels_gpu_tests PRIVATE ${CMAKE_SOURCE_DIR})
gtest_discover_tests(kernels_gpu_tests DISCOVERY_TIMEOUT 60
  PROPERTIES LABELS gpu TIMEOUT 600 SKIP_REGULAR_EXPRESSION "\\[  SKIPPED \\]")

# The Hopper ladder (sm90 family): skipped where the device is not compute capability 9.0.
add_executable(sm90_gpu_tests gpu/sm90_gpu_test.cc)
target_link_libraries(sm90_gpu_tests PRIVATE ablation_kernels GTest::gtest_main)
target_include_directories(sm90_gpu_tests PRIVATE ${CMAKE_SOURCE_DIR})
gtest_discover_tests(sm90_gpu_tests DISCOVERY_TIMEOUT 60
  PROPERTIES LABELS gpu TIMEOUT 600 SKIP_REGULAR_EXPRESSION "\\[  SKIPPED \\]")

# ---- timing tool (not a test) of every family: kernels_timing [M N K] [dtype] [name-prefix] [samples]
#      (tests/gpu/{kernels,ladders,pipe}_device_run.sh call it)
add_executable(kernels_timing gpu/kernels_timing.cc)
target_link_libraries(kernels_timing PRIVATE ablation_kernels)
target_include_directories(kernels_timing PRIVATE ${CMAKE_SOURCE_DIR})

# ---- tuning tool of the sm90 family (not a test): sm90_tune [M N K] [samples]
add_executable(sm90_tune gpu/sm90_tune.cu)
set_target_properties(sm90_tune PROPERTIES CUDA_ARCHITECTURES OFF)
target_compile_options(sm90_tune PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:-gencode=arch=compute_90a,code=sm_90a>)
target_link_libraries(sm90_tune PRIVATE ablation_kernels)
target_include_directories(sm90_tune PRIVATE ${CMAKE_SOURCE_DIR})
