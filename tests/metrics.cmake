# The daemon's Prometheus metrics (server/core/metrics, server/metrics): the registry and its text
# format, the hooks in the core, the HTTP endpoint; then Debian's real Prometheus scraping a
# daemon that runs with the fake worker. Included from tests/CMakeLists.txt. CPU only.

add_executable(metrics_tests
  ${CMAKE_CURRENT_LIST_DIR}/metrics/metrics_test.cc
  ${CMAKE_CURRENT_LIST_DIR}/metrics/daemon_metrics_test.cc
  ${CMAKE_CURRENT_LIST_DIR}/metrics/endpoint_test.cc)
target_link_libraries(metrics_tests PRIVATE ablation_metrics GTest::gtest_main)
target_include_directories(metrics_tests PRIVATE ${CMAKE_SOURCE_DIR})
gtest_discover_tests(metrics_tests DISCOVERY_TIMEOUT 60 PROPERTIES LABELS metrics TIMEOUT 120)
