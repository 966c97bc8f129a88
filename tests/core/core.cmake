# Tests of server/core, one folder per core folder (tests/core/<folder>/ mirrors
# server/core/<folder>/).
# Included from tests/CMakeLists.txt: paths are relative to tests/.

# ---- core (CPU)
add_executable(core_tests
  core/plan/variant_names_test.cc
  core/plan/run_plan_test.cc
  core/setup/config_test.cc
  core/queries/advise_test.cc
  core/inspect/sass_test.cc
  core/inspect/cuda_tool_test.cc
  core/setup/presets_test.cc
  core/setup/user_ladders_test.cc
  core/queries/listings_test.cc
  core/runs/run_execution_test.cc
  core/runs/run_cost_test.cc
  core/gpu/regime_test.cc
  core/gpu/peak_test.cc
  core/plan/verification_policy_test.cc
  core/runs/round_order_test.cc
  core/runs/multi_gpu_test.cc
  core/plan/limits_test.cc
  core/setup/auth_test.cc
  core/history/series_test.cc
  core/fleet/exporter_test.cc)
target_link_libraries(core_tests PRIVATE ablation_core GTest::gtest_main)
target_include_directories(core_tests PRIVATE ${CMAKE_SOURCE_DIR})
target_compile_definitions(core_tests PRIVATE
  SASS_TESTDATA_DIR="${CMAKE_CURRENT_SOURCE_DIR}/core/testdata/sass")
gtest_discover_tests(core_tests DISCOVERY_TIMEOUT 60)

# ---- NVML telemetry and clock locking, against the stand-in NVML (tests/support)
add_executable(nvml_tests
  core/gpu/nvml_test.cc
  core/gpu/clock_lock_test.cc
  core/gpu/telemetry_test.cc)
target_link_libraries(nvml_tests PRIVATE ablation_core GTest::gmock GTest::gtest_main ${CMAKE_DL_LIBS})
target_compile_definitions(nvml_tests PRIVATE FAKE_NVML_PATH="$<TARGET_FILE:fake-nvml>")
add_dependencies(nvml_tests fake-nvml)
gtest_discover_tests(nvml_tests DISCOVERY_TIMEOUT 60 PROPERTIES LABELS nvml TIMEOUT 60)

# ---- the hardware-counter path: the counter table, the ncu CSV parser on real H200 output
# (tests/core/testdata/ncu), one launch profiled by a stand-in ncu
add_executable(counters_core_tests
  core/plan/counters_test.cc
  core/inspect/ncu_csv_test.cc
  core/inspect/profiler_test.cc)
target_link_libraries(counters_core_tests PRIVATE ablation_core GTest::gtest_main)
target_include_directories(counters_core_tests PRIVATE ${CMAKE_SOURCE_DIR})
target_compile_definitions(counters_core_tests PRIVATE
  NCU_TESTDATA_DIR="${CMAKE_CURRENT_SOURCE_DIR}/core/testdata/ncu")
gtest_discover_tests(counters_core_tests TEST_PREFIX "counters." DISCOVERY_TIMEOUT 60)
