# Load: the 1M-row database generator (dashboard timings) and the loopback load test. Included
# from tests/CMakeLists.txt.
add_executable(make-results-db ${CMAKE_CURRENT_SOURCE_DIR}/load/make_results_db.cc)
target_link_libraries(make-results-db PRIVATE ablation_db SQLite::SQLite3)
set_target_properties(make-results-db PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests)

add_executable(load_tests ${CMAKE_CURRENT_SOURCE_DIR}/load/load_test.cc
  ${CMAKE_CURRENT_SOURCE_DIR}/e2e/harness.cc)
target_link_libraries(load_tests PRIVATE ablation_proto ablation_db GTest::gtest_main
  Threads::Threads)
target_include_directories(load_tests PRIVATE ${CMAKE_SOURCE_DIR})
target_compile_definitions(load_tests PRIVATE
  ABLATIOND_PATH="$<TARGET_FILE:ablationd>"
  CLIENT_PATH="$<TARGET_FILE:ablation-client>"
  FAKE_WORKER_PATH="$<TARGET_FILE:fake-worker>")
add_dependencies(load_tests ablationd fake-worker)
gtest_discover_tests(load_tests DISCOVERY_TIMEOUT 60 PROPERTIES LABELS load TIMEOUT 240)
