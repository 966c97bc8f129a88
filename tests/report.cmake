# Tests of the report logic (client/report/: statistics, tables, renderers, compare) and of the
# client commands around it. Included from tests/CMakeLists.txt; paths relative to this file.
add_executable(report_tests
  ${CMAKE_CURRENT_LIST_DIR}/client/report/stats_test.cc
  ${CMAKE_CURRENT_LIST_DIR}/client/report/report_test.cc
  ${CMAKE_CURRENT_LIST_DIR}/client/report/compare_test.cc
  ${CMAKE_CURRENT_LIST_DIR}/client/report/sweep_test.cc)
target_link_libraries(report_tests PRIVATE ablation_client_lib GTest::gmock GTest::gtest_main)
gtest_discover_tests(report_tests
  TEST_PREFIX "report."
  PROPERTIES LABELS client
  DISCOVERY_TIMEOUT 30)
