#!/usr/bin/env bash
# Sets up and runs the main job: build, start ablationd on loopback with a local SQLite file,
# measure the ablation kernel and cuBLAS through ablation-client, print the stored results.
# On a machine without a GPU it says so and still shows the service answering.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
cmake --preset default >/dev/null
cmake --build --preset default -j"$(nproc)"
exec scripts/demo.sh build/default/bin
