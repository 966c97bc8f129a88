# Tests of server/daemon: the daemon's settings, read before anything runs.
# Included from tests/CMakeLists.txt: paths are relative to tests/.
add_executable(daemon_tests daemon/settings_test.cc)
target_link_libraries(daemon_tests PRIVATE ablation_daemon GTest::gtest_main)
gtest_discover_tests(daemon_tests TEST_PREFIX "daemon." DISCOVERY_TIMEOUT 60)
