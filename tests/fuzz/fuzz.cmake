# Fuzz targets (tests/fuzz), built with libFuzzer from Debian's clang: the sources under test are
# compiled by clang with coverage and AddressSanitizer into each target; what they call besides
# comes from the project's own (gcc-built) libraries. In the normal suite each target runs for
# ABLATION_FUZZ_SECONDS as a ctest (label fuzz); run one longer by hand with
#   build/default/tests/fuzz/fuzz_NAME -max_total_time=600 CORPUS_DIR
# Included from tests/CMakeLists.txt; paths relative to tests/.
find_program(ABLATION_CLANGXX NAMES clang++ clang++-14)
option(ABLATION_FUZZ "Build the libFuzzer targets (needs clang++)" ON)
set(ABLATION_FUZZ_SECONDS 6 CACHE STRING "Seconds each fuzz target runs in the test suite (a smoke run: the 2-core CI keeps build and tests under 15 minutes; run longer by hand)")
if(NOT ABLATION_FUZZ)
  return()
endif()
if(NOT ABLATION_CLANGXX)
  message(WARNING "ABLATION_FUZZ: no clang++ found (scripts/install-deps.sh installs it); "
                  "the fuzz targets are not built")
  return()
endif()

set(FUZZ_DIR ${CMAKE_BINARY_DIR}/tests/fuzz)
file(MAKE_DIRECTORY ${FUZZ_DIR})
# The project's libraries, in link order, and the system ones they need. The core is built in
# batches (unity builds): the object that holds a source a target needs holds up to 15 others,
# and what they call (the enum words, for one) must be on the line too.
set(FUZZ_LIBS
  $<TARGET_FILE:ablation_core> $<TARGET_FILE:ablation_db> $<TARGET_FILE:ablation_fleet>
  $<TARGET_FILE:ablation_history> $<TARGET_FILE:ablation_enum_words> $<TARGET_FILE:ablation_protocol>
  $<TARGET_FILE:ablation_user_kernels> $<TARGET_FILE:ablation_kernel_catalog>
  $<TARGET_FILE:ablation_toml> $<TARGET_FILE:ablation_common> $<TARGET_FILE:ablation_proto>
  -lpq -lmuparser -ltomlplusplus -lgrpc++ -lgrpc -lgpr -lprotobuf -lspdlog -lfmt -lsqlite3 -lcrypto -labsl_strings -lelf -lz -ldl -lpthread)
# NDEBUG as in the daemon's Release build: toml++ 3.3 has a debug-only assertion in parse_key
# that fires on a table header starting with '#' ("[# x]"), an input its release build refuses
# with a proper parse error (found by fuzz_toml; the daemon is never built with it).
# Line tables only (-gline-tables-only, not -g): what ASan's stack traces name (file and line);
# fuzz_toml took 53 s to build with full debug information, 42 s with line tables.
set(FUZZ_FLAGS -std=c++20 -O1 -gline-tables-only -DNDEBUG -fsanitize=fuzzer,address
  -DSPDLOG_COMPILED_LIB -DSPDLOG_FMT_EXTERNAL -I${CMAKE_SOURCE_DIR} -I${CMAKE_BINARY_DIR}/generated)

# ablation_fuzz_target(NAME SOURCES...): tests/fuzz/NAME.cc with the sources it exercises. Each
# source is compiled to an object of its own (its headers followed through a depfile), then the
# objects are linked with the project's libraries: a library that changes relinks the target in
# seconds where it used to compile every instrumented source again (fuzz_toml's six: 27 s on one
# core), and a clean build compiles a target's sources side by side. The libraries come first by
# order only (add_dependencies: the generated headers exist before anything compiles).
function(ablation_fuzz_target name)
  set(sources ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/${name}.cc)
  foreach(s ${ARGN})
    list(APPEND sources ${CMAKE_SOURCE_DIR}/${s})
    # A source built here (instrumented) must not also sit in a batch of the core's unity build:
    # the batch's object, pulled from the archive for another source's symbol, would define it
    # again.
    if(s MATCHES "^server/core/")
      set_source_files_properties(${CMAKE_SOURCE_DIR}/${s} DIRECTORY ${CMAKE_SOURCE_DIR}/server
        PROPERTIES SKIP_UNITY_BUILD_INCLUSION ON)
    endif()
  endforeach()
  set(objects)
  file(MAKE_DIRECTORY ${FUZZ_DIR}/${name}.objects)
  foreach(src ${sources})
    file(RELATIVE_PATH rel ${CMAKE_SOURCE_DIR} ${src})
    string(MAKE_C_IDENTIFIER "${rel}" id)
    set(obj ${FUZZ_DIR}/${name}.objects/${id}.o)
    add_custom_command(
      OUTPUT ${obj}
      COMMAND ${ABLATION_CLANGXX} ${FUZZ_FLAGS} -MD -MF ${obj}.d -c ${src} -o ${obj}
      DEPENDS ${src}
      DEPFILE ${obj}.d
      COMMENT "clang++ -fsanitize=fuzzer ${name}: ${rel}"
      VERBATIM)
    list(APPEND objects ${obj})
  endforeach()
  add_custom_command(
    OUTPUT ${FUZZ_DIR}/${name}
    COMMAND ${ABLATION_CLANGXX} ${FUZZ_FLAGS} ${objects} ${FUZZ_LIBS} -o ${FUZZ_DIR}/${name}
    DEPENDS ${objects} ablation_core ablation_db ablation_fleet ablation_history
      ablation_enum_words ablation_protocol ablation_user_kernels ablation_toml
      ablation_kernel_catalog ablation_common ablation_proto
    COMMENT "clang++ -fsanitize=fuzzer ${name} (link)"
    VERBATIM)
  add_custom_target(${name} ALL DEPENDS ${FUZZ_DIR}/${name})
  add_dependencies(${name} ablation_core ablation_db ablation_fleet ablation_history
    ablation_enum_words ablation_protocol ablation_user_kernels ablation_toml
    ablation_kernel_catalog ablation_common ablation_proto)
  # A fresh corpus directory per run, seeded from the checked-in one: libFuzzer writes there.
  add_test(NAME fuzz.${name}
    COMMAND ${CMAKE_COMMAND} -E env ASAN_OPTIONS=detect_leaks=0
      ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/run_fuzz.sh ${FUZZ_DIR}/${name}
      ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/corpus/${name} ${ABLATION_FUZZ_SECONDS} ${FUZZ_MAX_LEN_${name}})
  set_tests_properties(fuzz.${name} PROPERTIES LABELS fuzz TIMEOUT 120)
endfunction()

ablation_fuzz_target(fuzz_variant_names server/core/plan/variant_names.cc server/core/plan/limits.cc
  common/variant_names.cc)
ablation_fuzz_target(fuzz_run_plan server/core/plan/run_plan.cc server/core/plan/limits.cc
  server/core/plan/variant_names.cc common/variant_names.cc)
ablation_fuzz_target(fuzz_client_parse client/cli/parse.cc)
ablation_fuzz_target(fuzz_page_token db/page_token.cc)
ablation_fuzz_target(fuzz_toml server/core/setup/config.cc server/core/setup/presets.cc
  server/core/setup/presets_parse.cc server/core/setup/auth.cc common/toml_shape.cc
  common/toml_doc.cc)
ablation_fuzz_target(fuzz_sass server/core/inspect/sass.cc)
# A cubin's seed (a two-kernel sm_90a build of nvcc) is 6 KB: its inputs may be 8 KB long.
set(FUZZ_MAX_LEN_fuzz_cubin 8192)
ablation_fuzz_target(fuzz_cubin server/compile/cubin.cc)
