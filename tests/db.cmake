# Tests of db/: included from tests/CMakeLists.txt. Host-only, no GPU.
add_executable(db_tests
  ${CMAKE_CURRENT_LIST_DIR}/db/migrations_test.cc
  ${CMAKE_CURRENT_LIST_DIR}/db/page_token_test.cc
  ${CMAKE_CURRENT_LIST_DIR}/db/sqlite_test.cc
  ${CMAKE_CURRENT_LIST_DIR}/db/store_test.cc)
# SQLite directly too: the tests build old databases by hand and look at what is on disk.
target_link_libraries(db_tests PRIVATE ablation_db GTest::gtest_main GTest::gmock SQLite::SQLite3)
gtest_discover_tests(db_tests PROPERTIES LABELS db)
