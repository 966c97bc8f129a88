# Tests of server/rpc: the gRPC service in-process over the real core.
# Included from tests/CMakeLists.txt: paths are relative to tests/.

# ---- the gRPC service in-process over the real core (CPU)
add_executable(rpc_tests rpc/service_test.cc rpc/auth_test.cc rpc/reflection_v1_test.cc
  rpc/grpc_status_test.cc)
target_link_libraries(rpc_tests PRIVATE ablation_rpc GTest::gtest_main)
target_include_directories(rpc_tests PRIVATE ${CMAKE_SOURCE_DIR})
gtest_discover_tests(rpc_tests DISCOVERY_TIMEOUT 60)

# The Profile handler in-process over the real core.
add_executable(counters_rpc_tests ${CMAKE_CURRENT_SOURCE_DIR}/rpc/profile_service_test.cc)
target_link_libraries(counters_rpc_tests PRIVATE ablation_rpc GTest::gtest_main)
target_include_directories(counters_rpc_tests PRIVATE ${CMAKE_SOURCE_DIR})
target_compile_definitions(counters_rpc_tests PRIVATE
  NCU_TESTDATA_DIR="${CMAKE_CURRENT_SOURCE_DIR}/core/testdata/ncu")
gtest_discover_tests(counters_rpc_tests TEST_PREFIX "counters." DISCOVERY_TIMEOUT 60)
