# Tests of the pipe_ family (kernels/pipe/; included from tests/CMakeLists.txt).

# ---- CPU: catalog entries, names, refusals
add_executable(pipe_catalog_tests kernels/pipe_catalog_test.cc)
target_link_libraries(pipe_catalog_tests PRIVATE ablation_kernel_catalog GTest::gtest_main)
gtest_discover_tests(pipe_catalog_tests DISCOVERY_TIMEOUT 60)

# ---- GPU (label gpu): skipped with the reason where there is no device
add_executable(pipe_gpu_tests gpu/pipe_gpu_test.cc)
target_link_libraries(pipe_gpu_tests PRIVATE ablation_kernels GTest::gtest_main)
target_include_directories(pipe_gpu_tests PRIVATE ${CMAKE_SOURCE_DIR})
gtest_discover_tests(pipe_gpu_tests DISCOVERY_TIMEOUT 60
  PROPERTIES LABELS gpu TIMEOUT 600 SKIP_REGULAR_EXPRESSION "\\[  SKIPPED \\]")

# ---- timing: kernels_timing M N K {fp16|int8|fp32} pipe_ [samples] (tests/kernels.cmake)
