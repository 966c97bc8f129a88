# Tests of kernels/: the catalog (CPU) and each family on a GPU (label gpu).
# Included from tests/CMakeLists.txt: paths are relative to tests/.

# ---- CPU: catalog, reference, host helpers (no CUDA needed to run)
add_executable(kernels_catalog_tests
  kernels/catalog_test.cc
  kernels/reference_test.cc
  kernels/element_values_test.cc
  kernels/smem2reg_catalog_test.cc
  kernels/sm90_catalog_test.cc
  kernels/sm90_buckets_test.cc)
target_link_libraries(kernels_catalog_tests PRIVATE ablation_kernel_catalog GTest::gtest_main)
gtest_discover_tests(kernels_catalog_tests DISCOVERY_TIMEOUT 60)

# ---- GPU (label gpu): skipped with the reason where there is no device
add_executable(kernels_gpu_tests kernels/gpu/kernels_gpu_test.cc kernels/gpu/smem2reg_gpu_test.cc)
target_link_libraries(kernels_gpu_tests PRIVATE ablation_kernels GTest::gtest_main)
target_include_directories(kernels_gpu_tests PRIVATE ${CMAKE_SOURCE_DIR})
gtest_discover_tests(kernels_gpu_tests DISCOVERY_TIMEOUT 60
  PROPERTIES LABELS gpu TIMEOUT 600 SKIP_REGULAR_EXPRESSION "\\[  SKIPPED \\]")

# The Hopper ladder (sm90 family): skipped where the device is not compute capability 9.0.
add_executable(sm90_gpu_tests kernels/gpu/sm90_gpu_test.cc kernels/gpu/sm90_fp8_gpu_test.cc)
target_link_libraries(sm90_gpu_tests PRIVATE ablation_kernels GTest::gtest_main)
target_include_directories(sm90_gpu_tests PRIVATE ${CMAKE_SOURCE_DIR})
gtest_discover_tests(sm90_gpu_tests DISCOVERY_TIMEOUT 60
  PROPERTIES LABELS gpu TIMEOUT 600 SKIP_REGULAR_EXPRESSION "\\[  SKIPPED \\]")

# ---- CPU: catalog entries, names, refusals
add_executable(pipe_catalog_tests kernels/pipe_catalog_test.cc)
target_link_libraries(pipe_catalog_tests PRIVATE ablation_kernel_catalog GTest::gtest_main)
gtest_discover_tests(pipe_catalog_tests DISCOVERY_TIMEOUT 60)

# ---- GPU (label gpu): skipped with the reason where there is no device
add_executable(pipe_gpu_tests kernels/gpu/pipe_gpu_test.cc)
target_link_libraries(pipe_gpu_tests PRIVATE ablation_kernels GTest::gtest_main)
target_include_directories(pipe_gpu_tests PRIVATE ${CMAKE_SOURCE_DIR})
gtest_discover_tests(pipe_gpu_tests DISCOVERY_TIMEOUT 60
  PROPERTIES LABELS gpu TIMEOUT 600 SKIP_REGULAR_EXPRESSION "\\[  SKIPPED \\]")

# ---- timing: kernels_timing M N K {fp16|int8|fp32} pipe_ [samples] (tools/)


# ---- CPU: catalog (names, dtypes, parameters, refusals)
add_executable(ladders_catalog_tests kernels/ladders_catalog_test.cc)
target_link_libraries(ladders_catalog_tests PRIVATE ablation_kernel_catalog GTest::gtest_main)
target_include_directories(ladders_catalog_tests PRIVATE ${CMAKE_SOURCE_DIR})
gtest_discover_tests(ladders_catalog_tests DISCOVERY_TIMEOUT 60)

# ---- GPU (label gpu): skipped with the reason where there is no device
add_executable(ladders_gpu_tests kernels/gpu/ladders_gpu_test.cc)
target_link_libraries(ladders_gpu_tests PRIVATE ablation_kernels GTest::gtest_main)
target_include_directories(ladders_gpu_tests PRIVATE ${CMAKE_SOURCE_DIR})
gtest_discover_tests(ladders_gpu_tests DISCOVERY_TIMEOUT 60
  PROPERTIES LABELS gpu TIMEOUT 600 SKIP_REGULAR_EXPRESSION "\\[  SKIPPED \\]")

# ---- timing: kernels_timing M N K fp32 simt_ | tf32 tf32_ | int8 cublas_ (tools/)

# ---- Verify against planted bugs (test-only kernels, never in the worker binary)
add_executable(planted_bugs_tests kernels/gpu/planted_bugs.cu kernels/gpu/planted_bugs_test.cc)
target_link_libraries(planted_bugs_tests PRIVATE ablation_worker_lib GTest::gtest_main)
target_include_directories(planted_bugs_tests PRIVATE ${CMAKE_SOURCE_DIR})
gtest_discover_tests(planted_bugs_tests DISCOVERY_TIMEOUT 60
  PROPERTIES LABELS gpu TIMEOUT 600 SKIP_REGULAR_EXPRESSION "${ABLATION_SKIP_REGEX}")

# ---- CPU: a user kernel's manifest (kernels/user): parsing, refusals, knob sets, launch, ladder
add_executable(user_kernel_tests kernels/user/manifest_test.cc kernels/user/contract_plan_test.cc)
target_link_libraries(user_kernel_tests PRIVATE ablation_user_kernels GTest::gtest_main)
target_compile_definitions(user_kernel_tests PRIVATE SOURCE_DIR="${CMAKE_SOURCE_DIR}")
gtest_discover_tests(user_kernel_tests TEST_PREFIX "user." DISCOVERY_TIMEOUT 60)

# ---- CPU: compiling a user kernel with NVRTC, in this process and as the daemon's child process
# (ablation-compile); NVRTC needs no GPU
add_executable(user_compile_tests compile/nvrtc_test.cc compile/ptx_test.cc compile/cubin_test.cc
  core/userkernels/compiler_test.cc
  core/userkernels/compiler_sandbox_test.cc core/userkernels/user_kernels_test.cc
  core/userkernels/user_kernel_bounds_test.cc)
target_link_libraries(user_compile_tests PRIVATE ablation_user_compile ablation_core
  SQLite::SQLite3 GTest::gmock GTest::gtest_main)
target_compile_definitions(user_compile_tests PRIVATE
  COMPILER_PATH="$<TARGET_FILE:ablation-compile>" SOURCE_DIR="${CMAKE_SOURCE_DIR}")
add_dependencies(user_compile_tests ablation-compile)
gtest_discover_tests(user_compile_tests TEST_PREFIX "user." DISCOVERY_TIMEOUT 60
  PROPERTIES TIMEOUT 120)
