#!/usr/bin/env bash
# Sets up (Debian packages, configure, build) and runs every test. GPU tests (ctest label gpu)
# skip themselves, saying why, where there is no CUDA device. Extra arguments go to ctest.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
cmake --preset default >/dev/null
cmake --build --preset default -j"$(nproc)"
ctest --preset default "$@"
