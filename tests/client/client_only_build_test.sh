#!/usr/bin/env bash
# The `client` preset (ABLATION_CLIENT_ONLY) configured and ablation-client built with the CUDA
# toolkit out of reach: no CUDA folder on PATH; CUDACXX, CUDA_HOME, CUDA_PATH, CUDAToolkit_ROOT
# and CMAKE_PREFIX_PATH unset; and first on PATH an `nvcc` that fails and leaves a mark, so a
# configure that still looked for CUDA is caught doing so. Only the client and the Python
# package are built (the protos, the client library, main, the Python stubs), not the tree.
# WORK_DIR is fixed (not random) so that ccache hits when this runs again; it is emptied first
# and removed after a pass.
#
# Opt-in (exit 77, skipped, unless ABLATION_TEST_CLIENT_ONLY=1): with a cold ccache the build
# took 7 to 13 minutes on 2 shared cores (4 s warm). Run it with
#   ABLATION_TEST_CLIENT_ONLY=1 ctest --preset default -L client-only
#
#   client_only_build_test.sh SOURCE_DIR WORK_DIR
set -euo pipefail
if [[ ${ABLATION_TEST_CLIENT_ONLY:-} != 1 ]]; then
  echo "skipped: a configure and client build without CUDA, minutes with a cold ccache; run it" \
    "with ABLATION_TEST_CLIENT_ONLY=1 ctest --preset default -L client-only"
  exit 77
fi
src=$(realpath "${1:?usage: client_only_build_test.sh SOURCE_DIR WORK_DIR}")
work=${2:?usage: client_only_build_test.sh SOURCE_DIR WORK_DIR}
rm -rf "$work"
mkdir -p "$work/trap-bin"
work=$(realpath "$work")
start=$SECONDS
fail() {
  echo "FAIL: $*" >&2
  exit 1
}

cat >"$work/trap-bin/nvcc" <<TRAP
#!/bin/sh
echo "nvcc \$*" >>"$work/nvcc-was-run"
exit 1
TRAP
chmod +x "$work/trap-bin/nvcc"
path=$work/trap-bin
IFS=: read -ra dirs <<<"$PATH"
for d in "${dirs[@]}"; do
  [[ -z $d || ${d,,} == *cuda* ]] || path+=":$d"
done
hidden=(env -u CUDACXX -u CUDA_HOME -u CUDA_PATH -u CUDAToolkit_ROOT -u CMAKE_PREFIX_PATH
  -u CMAKE_CUDA_COMPILER "PATH=$path")

# The preset itself, into WORK_DIR instead of build/client.
(cd "$src" && "${hidden[@]}" cmake --preset client -B "$work/build" -DABLATION_BUILD_TESTS=OFF) \
  >"$work/configure.log" 2>&1 || { cat "$work/configure.log"; fail "configuring the client preset without CUDA"; }
[[ -e $work/nvcc-was-run ]] && fail "the configure ran nvcc: $(cat "$work/nvcc-was-run")"
grep -E '^(CMAKE_CUDA_COMPILER|CUDAToolkit_|CMAKE_CUDA_ARCHITECTURES)' "$work/build/CMakeCache.txt" &&
  fail "the configure looked for CUDA (the lines above are in CMakeCache.txt)"
grep -q '^ABLATION_CLIENT_ONLY:BOOL=ON' "$work/build/CMakeCache.txt" ||
  fail "the client preset does not set ABLATION_CLIENT_ONLY"
# Nothing of the daemon, the worker or the kernels is even defined.
for target in ablationd ablation-worker ablation_kernels ablation_core; do
  grep -q "^build $target:" "$work/build/build.ninja" && fail "the client-only build defines $target"
done

"${hidden[@]}" cmake --build "$work/build" --target ablation-client ablationd-python -j2 \
  >"$work/build.log" 2>&1 || { tail -50 "$work/build.log"; fail "building ablation-client without CUDA"; }
[[ -e $work/nvcc-was-run ]] && fail "the build ran nvcc: $(cat "$work/nvcc-was-run")"
client=$work/build/bin/ablation-client
version=$("$client" --version) || fail "the client built without CUDA does not run"
[[ $version == "ablation-client "* ]] || fail "--version says '$version'"
"$client" completion bash | bash -n || fail "its bash completion is not valid bash"
if ldd "$client" | grep -Ei 'libcuda|libcudart|libcublas|libnvidia'; then
  fail "the client links CUDA libraries (above)"
fi
python=$(sed -n 's/^ABLATION_PYTHON:FILEPATH=//p' "$work/build/CMakeCache.txt")
"${python:-python3}" -c "import sys; sys.path.insert(0, '$work/build/python'); import ablationd
from ablation.v1 import ablation_pb2_grpc" || fail "the Python package built without CUDA does not import"
echo "ok: $version, built without CUDA in $((SECONDS - start)) s ($(grep -c '^\[' "$work/build.log") build steps)"
rm -rf "$work"
