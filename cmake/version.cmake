# Writes OUT (generated/ablation/version.h) from IN with the daemon's version, the checkout's git
# revision and the last commit that touched kernels/ (a run's provenance). Run at configure time
# and again by the ablation_version target at every build, so that a commit made after configuring
# is what the binaries report; configure_file leaves OUT untouched when nothing changed, so only a
# new revision rebuilds the files that include it.
#   cmake -DSOURCE_DIR=... -DIN=... -DOUT=... -DPROJECT_VERSION=... -P cmake/version.cmake
execute_process(COMMAND git rev-parse --short=12 HEAD
  WORKING_DIRECTORY "${SOURCE_DIR}" OUTPUT_VARIABLE ABLATION_GIT_REVISION
  OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
if(NOT ABLATION_GIT_REVISION)
  set(ABLATION_GIT_REVISION "unknown")
endif()
execute_process(COMMAND git log -1 --format=%h --abbrev=12 -- kernels
  WORKING_DIRECTORY "${SOURCE_DIR}" OUTPUT_VARIABLE ABLATION_KERNEL_REVISION
  OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
if(NOT ABLATION_KERNEL_REVISION)
  set(ABLATION_KERNEL_REVISION "unknown")
endif()
configure_file("${IN}" "${OUT}" @ONLY)
