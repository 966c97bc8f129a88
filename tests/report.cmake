# Tests of the report logic (client/report/: statistics, sections, renderers, compare), of the
# client commands around it, and of the presets the report's sections come from. Included from
# tests/CMakeLists.txt; paths relative to this file.

# What a daemon serves of its presets and variants, built from the daemon's own parser
# (server/core/presets.cc) and the kernel catalog, without the rest of the core.
add_library(ablation_served_presets STATIC
  ${CMAKE_SOURCE_DIR}/server/core/presets.cc
  ${CMAKE_SOURCE_DIR}/server/core/variant_names.cc
  ${CMAKE_SOURCE_DIR}/server/core/config.cc
  ${CMAKE_BINARY_DIR}/generated/builtin_presets.cc
  ${CMAKE_CURRENT_LIST_DIR}/client/support/served_catalog.cc
  ${CMAKE_CURRENT_LIST_DIR}/client/support/plan_run_stub.cc)
target_include_directories(ablation_served_presets PUBLIC ${CMAKE_SOURCE_DIR}
  ${CMAKE_BINARY_DIR}/generated)
target_link_libraries(ablation_served_presets PUBLIC ablation_proto ablation_kernel_catalog
  tomlplusplus::tomlplusplus GTest::gtest)

add_executable(report_tests
  ${CMAKE_CURRENT_LIST_DIR}/client/report/stats_test.cc
  ${CMAKE_CURRENT_LIST_DIR}/client/report/report_test.cc
  ${CMAKE_CURRENT_LIST_DIR}/client/report/sections_test.cc
  ${CMAKE_CURRENT_LIST_DIR}/client/report/compare_test.cc
  ${CMAKE_CURRENT_LIST_DIR}/client/report/sweep_test.cc)
target_link_libraries(report_tests PRIVATE ablation_client_lib ablation_served_presets
  GTest::gmock GTest::gtest_main)
gtest_discover_tests(report_tests
  TEST_PREFIX "report."
  PROPERTIES LABELS client
  DISCOVERY_TIMEOUT 30)

# The presets' parser on its own (core_tests holds the same file, with PlanPresetRun's tests).
add_executable(presets_tests ${CMAKE_CURRENT_LIST_DIR}/core/presets_test.cc)
target_compile_definitions(presets_tests PRIVATE ABLATION_PRESETS_WITHOUT_PLAN)
target_link_libraries(presets_tests PRIVATE ablation_served_presets GTest::gmock GTest::gtest_main)
gtest_discover_tests(presets_tests
  TEST_PREFIX "presets."
  PROPERTIES LABELS client
  DISCOVERY_TIMEOUT 30)
