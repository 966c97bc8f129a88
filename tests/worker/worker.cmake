# Tests of the worker process (server/worker). Included from tests/CMakeLists.txt; paths relative to tests/.
#
# worker_cpu_tests run anywhere (CI has no GPU): framing, statistics and stopping rule, the L2
# plan, batch size and warm-up policy, the resident inputs (on a fake device), clocks from
# probes, the statistics and reference check of replies, occupancy limiter, identity formatting,
# a window's samples as they come back, the worker binary itself (with or without a device) and
# its test double.
add_executable(worker_cpu_tests
  worker/framing_test.cc
  worker/sampling_test.cc
  worker/sample_plan_test.cc
  worker/resident_inputs_test.cc
  worker/clocks_test.cc
  worker/window_stats_test.cc
  worker/verify_reference_test.cc
  worker/occupancy_limits_test.cc
  worker/identity_test.cc
  worker/window_samples_test.cc
  worker/worker_process_test.cc
  worker/fake_worker_test.cc
  worker/l2_flush_test.cc)
target_include_directories(worker_cpu_tests PRIVATE ${CMAKE_SOURCE_DIR})
target_link_libraries(worker_cpu_tests PRIVATE
  ablation_protocol ablation_worker_resident ablation_worker_stats ablation_worker_l2
  ablation_proto CUDA::cudart_static GTest::gtest_main)
target_compile_definitions(worker_cpu_tests PRIVATE
  ABLATION_WORKER_BIN="$<TARGET_FILE:ablation-worker>"
  FAKE_WORKER_BIN="$<TARGET_FILE:fake-worker>")
add_dependencies(worker_cpu_tests ablation-worker fake-worker)
gtest_discover_tests(worker_cpu_tests DISCOVERY_MODE PRE_TEST PROPERTIES TIMEOUT 120)

# The test double (defined in tests/CMakeLists.txt) fills its replies with the worker's own code.

# worker_gpu_tests need a device (label gpu); without one each test skips with the reason. The
# worker through its binary, and the GPU reference GEMM it verifies against, directly.
add_executable(worker_gpu_tests worker/gpu/worker_test.cc worker/gpu/worker_timing_test.cc
  worker/gpu/reference_gpu_test.cc worker/gpu/l2_flush_gpu_test.cu)
target_include_directories(worker_gpu_tests PRIVATE ${CMAKE_SOURCE_DIR})
target_link_libraries(worker_gpu_tests PRIVATE
  ablation_protocol ablation_worker_stats ablation_worker_l2 ablation_proto ablation_kernels
  CUDA::cudart_static GTest::gtest_main)
target_compile_definitions(worker_gpu_tests PRIVATE
  ABLATION_WORKER_BIN="$<TARGET_FILE:ablation-worker>")
add_dependencies(worker_gpu_tests ablation-worker)
gtest_discover_tests(worker_gpu_tests DISCOVERY_MODE PRE_TEST
  PROPERTIES LABELS gpu TIMEOUT 600 SKIP_REGULAR_EXPRESSION "\\[  SKIPPED \\]")
