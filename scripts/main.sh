#!/usr/bin/env bash
# Sets up and runs the main job: build, start ablationd on loopback with a local SQLite file,
# sweep ladders A and B (presets ladder-a, ladder-b) at 4096^3 through ablation-client, and end
# with the answer: each rung's change and 95% interval, and the HTML reports written
# (scripts/demo.sh). On a machine without a GPU it says so and still shows the service answering.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
cmake --preset default >/dev/null
cmake --build --preset default -j"$(nproc)"
exec scripts/demo.sh build/default/bin
