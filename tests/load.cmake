# Load: the 1M-row database generator (dashboard timings) and the loopback load test. Included
# from tests/CMakeLists.txt.
add_executable(make-results-db ${CMAKE_CURRENT_LIST_DIR}/load/make_results_db.cc)
target_link_libraries(make-results-db PRIVATE ablation_db SQLite::SQLite3)
set_target_properties(make-results-db PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests)
