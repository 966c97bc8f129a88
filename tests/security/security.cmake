# Security: the daemon as a hostile client meets it (tokens, roles, TLS with a CA made at run
# time, exposed listeners) and hostile inputs (oversized or control-character text, plans of
# millions of items, wrapping shapes, non-finite timings) as regression tests. Real daemon,
# fake worker, loopback only. Included from tests/CMakeLists.txt; paths relative to tests/.
add_executable(security_tests
  ${CMAKE_CURRENT_SOURCE_DIR}/security/security_e2e_test.cc
  ${CMAKE_CURRENT_SOURCE_DIR}/security/hostile_inputs_test.cc
  ${CMAKE_CURRENT_SOURCE_DIR}/security/memory_bounds_test.cc
  ${CMAKE_CURRENT_SOURCE_DIR}/security/storage_limits_test.cc
  ${CMAKE_CURRENT_SOURCE_DIR}/e2e/harness.cc)
target_link_libraries(security_tests PRIVATE ablation_proto ablation_db ablation_metrics
  GTest::gmock GTest::gtest_main Threads::Threads)
target_include_directories(security_tests PRIVATE ${CMAKE_SOURCE_DIR})
target_compile_definitions(security_tests PRIVATE
  ABLATIOND_PATH="$<TARGET_FILE:ablationd>"
  CLIENT_PATH="$<TARGET_FILE:ablation-client>"
  FAKE_WORKER_PATH="$<TARGET_FILE:fake-worker>")
add_dependencies(security_tests ablationd ablation-client fake-worker)
# 240 s: the rapid-reset test waits up to 180 s for the daemon to answer its bursts' calls when
# other tests share the cores (memory_bounds_test.cc).
gtest_discover_tests(security_tests DISCOVERY_TIMEOUT 60 PROPERTIES LABELS security TIMEOUT 240)
