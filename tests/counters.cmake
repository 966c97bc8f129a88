# Tests of the hardware-counter path (server/core/profiler.h): the catalogue, the ncu CSV parser
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
