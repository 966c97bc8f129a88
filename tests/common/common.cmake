# Tests of common/: the statistics, enum words, limits and time every process shares, and the
# history module (change points, series from rows) that the daemon and the client share, and
# variant names as the fleet's reads take them.
# Included from tests/CMakeLists.txt: paths are relative to tests/.
add_executable(common_tests common/common_test.cc common/change_points_test.cc
  common/history_test.cc common/variant_names_test.cc)
target_link_libraries(common_tests PRIVATE ablation_enum_words ablation_history GTest::gtest_main)
gtest_discover_tests(common_tests TEST_PREFIX "common." DISCOVERY_TIMEOUT 60)
