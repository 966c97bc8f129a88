# Tests of the simt and tf32 families and of the cuBLAS entries per dtype (included from
# tests/CMakeLists.txt).

# ---- CPU: catalog (names, dtypes, parameters, refusals)
add_executable(ladders_catalog_tests kernels/ladders_catalog_test.cc)
target_link_libraries(ladders_catalog_tests PRIVATE ablation_kernel_catalog GTest::gtest_main)
target_include_directories(ladders_catalog_tests PRIVATE ${CMAKE_SOURCE_DIR})
gtest_discover_tests(ladders_catalog_tests DISCOVERY_TIMEOUT 60)

# ---- GPU (label gpu): skipped with the reason where there is no device
add_executable(ladders_gpu_tests gpu/ladders_gpu_test.cc)
target_link_libraries(ladders_gpu_tests PRIVATE ablation_kernels GTest::gtest_main)
target_include_directories(ladders_gpu_tests PRIVATE ${CMAKE_SOURCE_DIR})
gtest_discover_tests(ladders_gpu_tests DISCOVERY_TIMEOUT 60
  PROPERTIES LABELS gpu TIMEOUT 600 SKIP_REGULAR_EXPRESSION "\\[  SKIPPED \\]")

# ---- timing: kernels_timing M N K fp32 simt_ | tf32 tf32_ | int8 cublas_ (tests/kernels.cmake)
