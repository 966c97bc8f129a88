# Tests of ablation-client: parsing, escaping, enum words, renderers, exit codes, and the CLI
# against an in-process fake daemon. Included from tests/CMakeLists.txt; paths relative to tests/. paths are relative to
# this file.
add_executable(ablation_client_test
  ${CMAKE_CURRENT_SOURCE_DIR}/client/advise_sass_test.cc
  ${CMAKE_CURRENT_SOURCE_DIR}/client/app_test.cc
  ${CMAKE_CURRENT_SOURCE_DIR}/client/cli_test.cc
  ${CMAKE_CURRENT_SOURCE_DIR}/client/cli/dtype_test.cc
  ${CMAKE_CURRENT_SOURCE_DIR}/client/output/enum_words_test.cc
  ${CMAKE_CURRENT_SOURCE_DIR}/client/output/escape_test.cc
  ${CMAKE_CURRENT_SOURCE_DIR}/client/output/json_test.cc
  ${CMAKE_CURRENT_SOURCE_DIR}/client/cli/exit_codes_test.cc
  ${CMAKE_CURRENT_SOURCE_DIR}/client/cli/parse_test.cc
  ${CMAKE_CURRENT_SOURCE_DIR}/client/output/render_test.cc
  ${CMAKE_CURRENT_SOURCE_DIR}/client/output/table_test.cc)
target_link_libraries(ablation_client_test PRIVATE ablation_client_lib GTest::gmock GTest::gtest_main)
# The help's examples name files of the source tree (kernel add).
target_compile_definitions(ablation_client_test PRIVATE ABLATION_SOURCE_DIR="${CMAKE_SOURCE_DIR}")
gtest_discover_tests(ablation_client_test
  TEST_PREFIX "client."
  PROPERTIES LABELS client
  DISCOVERY_TIMEOUT 30)

# The bash and zsh completion scripts the client prints (`completion bash|zsh`): syntax, and what
# they complete (bash through COMP_WORDS/COMPREPLY, zsh through stand-ins for _arguments).
add_test(NAME client.completion
  COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/client/cli/completion_test.sh $<TARGET_FILE:ablation-client>)
set_tests_properties(client.completion PROPERTIES LABELS client SKIP_RETURN_CODE 77 TIMEOUT 120)

# The `client` preset configured and ablation-client (and the Python package) built with the CUDA
# toolkit hidden, in <build>/client-only-check. Opt-in, being a build of its own (7 to 13 min
# on 2 cores with a cold ccache, seconds warm): ABLATION_TEST_CLIENT_ONLY=1 ctest -L client-only.
if(NOT ABLATION_CLIENT_ONLY)
  add_test(NAME client.client_only_build
    COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/client/client_only_build_test.sh ${CMAKE_SOURCE_DIR}
            ${CMAKE_BINARY_DIR}/client-only-check)
  set_tests_properties(client.client_only_build PROPERTIES
    LABELS client-only SKIP_RETURN_CODE 77 TIMEOUT 1800)
endif()

# ---- the counters' columns
add_executable(counters_client_tests ${CMAKE_CURRENT_SOURCE_DIR}/client/output/render_counters_test.cc)
target_link_libraries(counters_client_tests PRIVATE ablation_client_lib GTest::gtest_main)
gtest_discover_tests(counters_client_tests TEST_PREFIX "counters." PROPERTIES LABELS client)
