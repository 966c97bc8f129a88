# Tests of the hardware-counter path (server/core/inspect/profiler.h): the counter table, the ncu CSV parser
# on real H200 output (tests/core/testdata/ncu), the profile of one launch against a stand-in
# ncu, the counters table, and the client's columns. Included from tests/CMakeLists.txt; CPU only.
add_executable(counters_core_tests
  ${CMAKE_CURRENT_LIST_DIR}/core/counter_catalog_test.cc
  ${CMAKE_CURRENT_LIST_DIR}/core/ncu_csv_test.cc
  ${CMAKE_CURRENT_LIST_DIR}/core/profiler_test.cc)
target_link_libraries(counters_core_tests PRIVATE ablation_core GTest::gtest_main)
target_include_directories(counters_core_tests PRIVATE ${CMAKE_SOURCE_DIR})
target_compile_definitions(counters_core_tests PRIVATE
  NCU_TESTDATA_DIR="${CMAKE_CURRENT_LIST_DIR}/core/testdata/ncu")
gtest_discover_tests(counters_core_tests TEST_PREFIX "counters." DISCOVERY_TIMEOUT 60)

add_executable(counters_db_tests ${CMAKE_CURRENT_LIST_DIR}/db/store_counters_test.cc)
target_link_libraries(counters_db_tests PRIVATE ablation_db GTest::gtest_main GTest::gmock
  SQLite::SQLite3)
gtest_discover_tests(counters_db_tests TEST_PREFIX "counters." PROPERTIES LABELS db)

# Daemon + client over real gRPC and SQLite, the fake worker and a stand-in ncu.
add_executable(counters_e2e_tests ${CMAKE_CURRENT_LIST_DIR}/e2e/profile_e2e_test.cc
  ${CMAKE_CURRENT_LIST_DIR}/e2e/harness.cc)
target_link_libraries(counters_e2e_tests PRIVATE ablation_proto ablation_db GTest::gmock
  GTest::gtest_main Threads::Threads SQLite::SQLite3)
target_include_directories(counters_e2e_tests PRIVATE ${CMAKE_SOURCE_DIR})
target_compile_definitions(counters_e2e_tests PRIVATE
  ABLATIOND_PATH="$<TARGET_FILE:ablationd>"
  CLIENT_PATH="$<TARGET_FILE:ablation-client>"
  FAKE_WORKER_PATH="$<TARGET_FILE:fake-worker>"
  NCU_TESTDATA_DIR="${CMAKE_CURRENT_LIST_DIR}/core/testdata/ncu")
add_dependencies(counters_e2e_tests ablationd ablation-client fake-worker)
gtest_discover_tests(counters_e2e_tests TEST_PREFIX "counters." DISCOVERY_TIMEOUT 60
  PROPERTIES TIMEOUT 300)

add_executable(counters_client_tests ${CMAKE_CURRENT_LIST_DIR}/client/render_counters_test.cc)
target_link_libraries(counters_client_tests PRIVATE ablation_client_lib GTest::gtest_main)
gtest_discover_tests(counters_client_tests TEST_PREFIX "counters." PROPERTIES LABELS client)

# The Profile handler in-process over the real core.
add_executable(counters_rpc_tests ${CMAKE_CURRENT_LIST_DIR}/rpc/profile_service_test.cc)
target_link_libraries(counters_rpc_tests PRIVATE ablation_rpc GTest::gtest_main)
target_include_directories(counters_rpc_tests PRIVATE ${CMAKE_SOURCE_DIR})
target_compile_definitions(counters_rpc_tests PRIVATE
  NCU_TESTDATA_DIR="${CMAKE_CURRENT_LIST_DIR}/core/testdata/ncu")
gtest_discover_tests(counters_rpc_tests TEST_PREFIX "counters." DISCOVERY_TIMEOUT 60)
