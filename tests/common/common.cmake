# Tests of common/: the statistics, enum words, limits and time every process shares.
# Included from tests/CMakeLists.txt: paths are relative to tests/.
add_executable(common_tests common/common_test.cc)
target_link_libraries(common_tests PRIVATE ablation_enum_words GTest::gtest_main)
gtest_discover_tests(common_tests TEST_PREFIX "common." DISCOVERY_TIMEOUT 60)
