# Tests of db/: included from tests/CMakeLists.txt. Host-only, no GPU.

# The test-only messages of the row mapping's tests (tests/db/testdata), generated as
# proto/CMakeLists.txt does the API's; they import ablation/v1 from proto/ and link its code.
set(DB_TESTDATA_GEN ${CMAKE_CURRENT_BINARY_DIR}/db_testdata_generated)
set(DB_TESTDATA_PROTO ${CMAKE_CURRENT_SOURCE_DIR}/db/testdata/row_mapping_test.proto)
set(DB_TESTDATA_OUT ${DB_TESTDATA_GEN}/tests/db/testdata/row_mapping_test)
file(MAKE_DIRECTORY ${DB_TESTDATA_GEN})
add_custom_command(
  OUTPUT ${DB_TESTDATA_OUT}.pb.cc ${DB_TESTDATA_OUT}.pb.h
  COMMAND protobuf::protoc
    --proto_path=${CMAKE_SOURCE_DIR}
    --proto_path=${CMAKE_SOURCE_DIR}/proto
    --cpp_out=${DB_TESTDATA_GEN}
    ${DB_TESTDATA_PROTO}
  DEPENDS ${DB_TESTDATA_PROTO} protobuf::protoc
  COMMENT "protoc row_mapping_test.proto")

add_executable(db_tests
  ${CMAKE_CURRENT_SOURCE_DIR}/db/migrations_test.cc
  ${CMAKE_CURRENT_SOURCE_DIR}/db/migration_v5_test.cc
  ${CMAKE_CURRENT_SOURCE_DIR}/db/migration_v8_test.cc
  ${CMAKE_CURRENT_SOURCE_DIR}/db/migration_v23_test.cc
  ${CMAKE_CURRENT_SOURCE_DIR}/db/page_token_test.cc
  ${CMAKE_CURRENT_SOURCE_DIR}/db/records_test.cc
  ${CMAKE_CURRENT_SOURCE_DIR}/db/row_mapping_test.cc
  ${CMAKE_CURRENT_SOURCE_DIR}/db/sqlite_test.cc
  ${CMAKE_CURRENT_SOURCE_DIR}/db/store_concurrency_test.cc
  ${CMAKE_CURRENT_SOURCE_DIR}/db/store_query_test.cc
  ${CMAKE_CURRENT_SOURCE_DIR}/db/store_results_test.cc
  ${CMAKE_CURRENT_SOURCE_DIR}/db/store_runs_test.cc
  ${CMAKE_CURRENT_SOURCE_DIR}/db/store_history_test.cc
  ${CMAKE_CURRENT_SOURCE_DIR}/db/store_fleet_test.cc
  ${CMAKE_CURRENT_SOURCE_DIR}/db/fleet_conninfo_test.cc
  ${CMAKE_CURRENT_SOURCE_DIR}/db/store_user_kernels_test.cc
  ${DB_TESTDATA_OUT}.pb.cc)
target_include_directories(db_tests PRIVATE ${DB_TESTDATA_GEN})
# SQLite directly too: the tests build old databases by hand and look at what is on disk.
# ablation_fleet: the fleet database's connection strings and globs (fleet_conninfo_test.cc; no
# server: tests/e2e/fleet_e2e_test.cc has one).
target_link_libraries(db_tests PRIVATE ablation_db ablation_fleet GTest::gtest_main GTest::gmock
  SQLite::SQLite3)
gtest_discover_tests(db_tests PROPERTIES LABELS db)

# The dashboard views over rows written through db::Store, on their own: tests/deploy/deploy.cmake builds
# the same file into dashboard_tests beside the end-to-end dashboard test, which needs the daemon;
# here it needs only ablation_db. Prefixed so that the two do not share ctest names.
add_executable(db_views_tests ${CMAKE_CURRENT_SOURCE_DIR}/db/dashboard_views_test.cc)
target_link_libraries(db_views_tests PRIVATE ablation_db GTest::gtest_main SQLite::SQLite3)
gtest_discover_tests(db_views_tests TEST_PREFIX "db." PROPERTIES LABELS db)

# ---- the counters' table
add_executable(counters_db_tests ${CMAKE_CURRENT_SOURCE_DIR}/db/store_counters_test.cc)
target_link_libraries(counters_db_tests PRIVATE ablation_db GTest::gtest_main GTest::gmock
  SQLite::SQLite3)
gtest_discover_tests(counters_db_tests TEST_PREFIX "counters." PROPERTIES LABELS db)

