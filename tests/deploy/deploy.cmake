# Tests of deploy/ (systemd units, the nightly job, the relocatable bundle) and of the dashboard
# views read while the daemon writes: included from tests/CMakeLists.txt. CPU only.

# systemd-analyze verify and security on copies of the units pointing at the build's binaries;
# bash -n and shellcheck of the scripts. Skipped (77) where systemd-analyze is not installed.
add_test(NAME deploy.units
  COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/deploy/units_test.sh ${CMAKE_SOURCE_DIR} $<TARGET_FILE_DIR:ablationd>)
set_tests_properties(deploy.units PROPERTIES LABELS deploy SKIP_RETURN_CODE 77 TIMEOUT 120)

# deploy/nightly.sh against a fake ablation-client on PATH.
add_test(NAME deploy.nightly
  COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/deploy/nightly_test.sh
          ${CMAKE_SOURCE_DIR}/deploy/nightly.sh ${CMAKE_CURRENT_SOURCE_DIR}/deploy/fake_ablation_client.sh)
set_tests_properties(deploy.nightly PROPERTIES LABELS deploy TIMEOUT 120)

# deploy/make-bundle.sh from this build tree into a temporary folder, then moved: libraries from
# the bundle's lib/, RPATH $ORIGIN/../lib, the programs run.
add_test(NAME deploy.bundle
  COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/deploy/bundle_test.sh ${CMAKE_SOURCE_DIR} ${CMAKE_BINARY_DIR})
set_tests_properties(deploy.bundle PROPERTIES LABELS deploy TIMEOUT 300)

# The dashboard views, read-only through the sqlite3 C API while a real ablationd (fake worker)
# writes a run; and deploy/nightly.sh with the real client against that daemon.
# Also the views themselves over rows written through db::Store (tests/db/dashboard_views_test.cc).
add_executable(dashboard_tests ${CMAKE_CURRENT_SOURCE_DIR}/e2e/dashboard_test.cc
                               ${CMAKE_CURRENT_SOURCE_DIR}/e2e/harness.cc
                               ${CMAKE_CURRENT_SOURCE_DIR}/db/dashboard_views_test.cc)
target_link_libraries(dashboard_tests PRIVATE ablation_proto ablation_db SQLite::SQLite3
                      GTest::gmock GTest::gtest_main Threads::Threads)
target_include_directories(dashboard_tests PRIVATE ${CMAKE_SOURCE_DIR})
target_compile_definitions(dashboard_tests PRIVATE
  ABLATIOND_PATH="$<TARGET_FILE:ablationd>"
  CLIENT_PATH="$<TARGET_FILE:ablation-client>"
  FAKE_WORKER_PATH="$<TARGET_FILE:fake-worker>"
  REAL_WORKER_PATH="$<TARGET_FILE:ablation-worker>"
  NIGHTLY_SH="${CMAKE_SOURCE_DIR}/deploy/nightly.sh")
add_dependencies(dashboard_tests ablationd ablation-client fake-worker)
gtest_discover_tests(dashboard_tests DISCOVERY_TIMEOUT 60 PROPERTIES LABELS "deploy;db" TIMEOUT 300)

# scripts/evidence.sh over evidence/: every quoted GPU figure printed again from its kept database
# by this build, one test per folder; and a figure that is not printed (planted) failing it. A
# folder added is found at configure. A report of a 9-shape cap run draws 2,000 resamples of each
# row's tens of thousands of samples (5 billion draws, 20 s of one core), so a folder takes up to
# 120 s of CPU: each test is given the two threads its bootstrap uses (PROCESSORS 2: ctest's 6 jobs
# ran six folders at once on 2 cores, and three passed 240 s), starts first (COST), and may take
# 900 s.
file(GLOB evidence_folders LIST_DIRECTORIES true CONFIGURE_DEPENDS
     "${CMAKE_SOURCE_DIR}/evidence/*/COMMANDS")
foreach(commands IN LISTS evidence_folders)
  get_filename_component(folder "${commands}" DIRECTORY)
  get_filename_component(folder "${folder}" NAME)
  add_test(NAME evidence.reprint.${folder}
    COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/deploy/evidence_test.sh ${CMAKE_SOURCE_DIR}
            $<TARGET_FILE_DIR:ablationd> ${folder})
  set_tests_properties(evidence.reprint.${folder}
                       PROPERTIES LABELS deploy TIMEOUT 900 PROCESSORS 2 COST 1000)
endforeach()
add_test(NAME evidence.planted
  COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/deploy/evidence_test.sh ${CMAKE_SOURCE_DIR}
          $<TARGET_FILE_DIR:ablationd> planted)
set_tests_properties(evidence.planted PROPERTIES LABELS deploy TIMEOUT 120)

# scripts/evidence-aside.sh (evidence/ kept off a device call) in a repository of its own.
add_test(NAME deploy.evidence_aside
  COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/deploy/evidence_aside_test.sh ${CMAKE_SOURCE_DIR})
set_tests_properties(deploy.evidence_aside PROPERTIES LABELS deploy TIMEOUT 60)
