# The daemon and the client end to end: real gRPC and SQLite, the fake worker (and on a GPU the
# real one).
# Included from tests/CMakeLists.txt: paths are relative to tests/.

# ---- daemon + client end to end over real gRPC and SQLite (CPU, fake worker)
# json_e2e_test: every command's --format json envelope (client/output/json.h), with stand-ins for ncu and
# cuobjdump and the real NVRTC compiler.
add_executable(e2e_tests e2e/daemon_e2e_test.cc e2e/cli_e2e_test.cc e2e/report_e2e_test.cc e2e/multi_gpu_e2e_test.cc e2e/compare_e2e_test.cc e2e/faults_e2e_test.cc
  e2e/advise_sass_e2e_test.cc e2e/json_e2e_test.cc e2e/history_e2e_test.cc e2e/harness.cc e2e/png.cc
  e2e/fleet_e2e_test.cc e2e/postgres_server.cc)
# zlib: the report test decodes headless Chromium's screenshot (e2e/png.h).
find_package(ZLIB REQUIRED)
# fleet_e2e_test: a fleet's export to Debian's real PostgreSQL, started by the test
# (e2e/postgres_server.h; skipped, saying so, where the server is not installed); the fleet's own
# client (ablation_fleet) to count what arrived, nlohmann-json to read the fleet dashboard.
find_package(nlohmann_json 3 CONFIG REQUIRED)
target_link_libraries(e2e_tests PRIVATE ablation_proto ablation_db ablation_client_lib ablation_fleet
  GTest::gmock GTest::gtest_main Threads::Threads ZLIB::ZLIB nlohmann_json::nlohmann_json)
target_include_directories(e2e_tests PRIVATE ${CMAKE_SOURCE_DIR})
target_compile_definitions(e2e_tests PRIVATE
  ABLATIOND_PATH="$<TARGET_FILE:ablationd>"
  CLIENT_PATH="$<TARGET_FILE:ablation-client>"
  FAKE_WORKER_PATH="$<TARGET_FILE:fake-worker>"
  REAL_WORKER_PATH="$<TARGET_FILE:ablation-worker>"
  COMPILER_PATH="$<TARGET_FILE:ablation-compile>"
  SOURCE_DIR="${CMAKE_SOURCE_DIR}"
  NIGHTLY_SH="${CMAKE_SOURCE_DIR}/deploy/nightly.sh"
  SASS_TESTDATA_DIR="${CMAKE_CURRENT_SOURCE_DIR}/core/testdata/sass"
  NCU_TESTDATA_DIR="${CMAKE_CURRENT_SOURCE_DIR}/core/testdata/ncu")
add_dependencies(e2e_tests ablationd ablation-client fake-worker ablation-compile)
# A test that skips (the report's in Chromium, where chromium is not installed) shows as skipped.
gtest_discover_tests(e2e_tests DISCOVERY_TIMEOUT 60
  PROPERTIES TIMEOUT 300 SKIP_REGULAR_EXPRESSION "${ABLATION_SKIP_REGEX}")

# ---- the full path on a real GPU: client -> daemon -> real worker -> SQLite
add_executable(gpu_e2e_tests e2e/gpu/daemon_gpu_test.cc e2e/harness.cc)
target_link_libraries(gpu_e2e_tests PRIVATE ablation_proto ablation_db GTest::gmock GTest::gtest_main Threads::Threads)
target_include_directories(gpu_e2e_tests PRIVATE ${CMAKE_SOURCE_DIR})
target_compile_definitions(gpu_e2e_tests PRIVATE
  ABLATIOND_PATH="$<TARGET_FILE:ablationd>"
  CLIENT_PATH="$<TARGET_FILE:ablation-client>"
  FAKE_WORKER_PATH="$<TARGET_FILE:fake-worker>"
  REAL_WORKER_PATH="$<TARGET_FILE:ablation-worker>")
add_dependencies(gpu_e2e_tests ablationd ablation-client ablation-worker)
gtest_discover_tests(gpu_e2e_tests DISCOVERY_TIMEOUT 60
  PROPERTIES LABELS gpu TIMEOUT 600 SKIP_REGULAR_EXPRESSION "${ABLATION_SKIP_REGEX}")

# Daemon + client over real gRPC and SQLite, the fake worker and a stand-in ncu.
add_executable(counters_e2e_tests ${CMAKE_CURRENT_SOURCE_DIR}/e2e/profile_e2e_test.cc
  ${CMAKE_CURRENT_SOURCE_DIR}/e2e/harness.cc)
target_link_libraries(counters_e2e_tests PRIVATE ablation_proto ablation_db GTest::gmock
  GTest::gtest_main Threads::Threads SQLite::SQLite3)
target_include_directories(counters_e2e_tests PRIVATE ${CMAKE_SOURCE_DIR})
target_compile_definitions(counters_e2e_tests PRIVATE
  ABLATIOND_PATH="$<TARGET_FILE:ablationd>"
  CLIENT_PATH="$<TARGET_FILE:ablation-client>"
  FAKE_WORKER_PATH="$<TARGET_FILE:fake-worker>"
  NCU_TESTDATA_DIR="${CMAKE_CURRENT_SOURCE_DIR}/core/testdata/ncu")
add_dependencies(counters_e2e_tests ablationd ablation-client fake-worker)
gtest_discover_tests(counters_e2e_tests TEST_PREFIX "counters." DISCOVERY_TIMEOUT 60
  PROPERTIES TIMEOUT 300)

# ---- clock locking and telemetry through the daemon, against the stand-in NVML (tests/support)
add_executable(clocks_e2e_tests e2e/clocks_e2e_test.cc e2e/harness.cc)
target_link_libraries(clocks_e2e_tests PRIVATE ablation_proto ablation_db GTest::gmock GTest::gtest_main Threads::Threads)
target_include_directories(clocks_e2e_tests PRIVATE ${CMAKE_SOURCE_DIR})
target_compile_definitions(clocks_e2e_tests PRIVATE
  ABLATIOND_PATH="$<TARGET_FILE:ablationd>"
  CLIENT_PATH="$<TARGET_FILE:ablation-client>"
  FAKE_WORKER_PATH="$<TARGET_FILE:fake-worker>"
  FAKE_NVML_PATH="$<TARGET_FILE:fake-nvml>")
add_dependencies(clocks_e2e_tests ablationd ablation-client fake-worker fake-nvml)
gtest_discover_tests(clocks_e2e_tests DISCOVERY_TIMEOUT 60 PROPERTIES TIMEOUT 300)

# ---- user kernels through the real client and daemon (fake worker; NVRTC needs no GPU)
add_executable(kernels_e2e_tests e2e/kernels_e2e_test.cc e2e/harness.cc)
target_link_libraries(kernels_e2e_tests PRIVATE ablation_proto ablation_db GTest::gmock GTest::gtest_main
  Threads::Threads)
target_include_directories(kernels_e2e_tests PRIVATE ${CMAKE_SOURCE_DIR})
target_compile_definitions(kernels_e2e_tests PRIVATE
  ABLATIOND_PATH="$<TARGET_FILE:ablationd>"
  CLIENT_PATH="$<TARGET_FILE:ablation-client>"
  FAKE_WORKER_PATH="$<TARGET_FILE:fake-worker>"
  COMPILER_PATH="$<TARGET_FILE:ablation-compile>"
  SOURCE_DIR="${CMAKE_SOURCE_DIR}")
add_dependencies(kernels_e2e_tests ablationd ablation-client fake-worker ablation-compile)
gtest_discover_tests(kernels_e2e_tests TEST_PREFIX "user." DISCOVERY_TIMEOUT 60
  PROPERTIES TIMEOUT 300)


# ---- figures that do not depend on a kernel's neighbours, against a GPU at its power cap: the
# fake worker's controller and the stand-in NVML's energy counter (tests/support/fake_power.h)
add_executable(power_e2e_tests e2e/power_cap_e2e_test.cc e2e/harness.cc)
target_link_libraries(power_e2e_tests PRIVATE ablation_proto ablation_db ablation_client_lib
  GTest::gmock GTest::gtest_main Threads::Threads)
target_include_directories(power_e2e_tests PRIVATE ${CMAKE_SOURCE_DIR})
target_compile_definitions(power_e2e_tests PRIVATE
  ABLATIOND_PATH="$<TARGET_FILE:ablationd>"
  CLIENT_PATH="$<TARGET_FILE:ablation-client>"
  FAKE_WORKER_PATH="$<TARGET_FILE:fake-worker>"
  FAKE_NVML_PATH="$<TARGET_FILE:fake-nvml>")
add_dependencies(power_e2e_tests ablationd ablation-client fake-worker fake-nvml)
gtest_discover_tests(power_e2e_tests TEST_PREFIX "power." DISCOVERY_TIMEOUT 60
  PROPERTIES TIMEOUT 300)
