# Tests of the report logic (client/report/: statistics, sections, renderers, compare), of the
# client commands around it, and of the presets the report's sections come from. Included from
# tests/CMakeLists.txt; paths relative to this file.

# What a daemon serves of its presets and variants: the daemon's own catalog code.
add_library(ablation_served_presets STATIC
  ${CMAKE_CURRENT_SOURCE_DIR}/client/support/served_catalog.cc)
target_include_directories(ablation_served_presets PUBLIC ${CMAKE_SOURCE_DIR})
target_link_libraries(ablation_served_presets PUBLIC ablation_core GTest::gtest)

add_executable(report_tests
  ${CMAKE_CURRENT_SOURCE_DIR}/client/report/stats_test.cc
  ${CMAKE_CURRENT_SOURCE_DIR}/client/report/report_test.cc
  ${CMAKE_CURRENT_SOURCE_DIR}/client/report/sections_test.cc
  ${CMAKE_CURRENT_SOURCE_DIR}/client/report/compare_test.cc
  ${CMAKE_CURRENT_SOURCE_DIR}/client/report/sweep_test.cc
  ${CMAKE_CURRENT_SOURCE_DIR}/client/report/counters_report_test.cc
  ${CMAKE_CURRENT_SOURCE_DIR}/client/report/charts_test.cc
  ${CMAKE_CURRENT_SOURCE_DIR}/client/report/answer_test.cc)
target_link_libraries(report_tests PRIVATE ablation_client_lib ablation_served_presets
  ablation_db GTest::gmock GTest::gtest_main)
# Real H200 ncu output, made into stored counters by the daemon's own parser and counter table.
target_compile_definitions(report_tests PRIVATE
  NCU_TESTDATA_DIR="${CMAKE_CURRENT_SOURCE_DIR}/core/testdata/ncu")
gtest_discover_tests(report_tests
  TEST_PREFIX "report."
  PROPERTIES LABELS client
  DISCOVERY_TIMEOUT 30)
