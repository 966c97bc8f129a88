#!/usr/bin/env bash
# Makes a relocatable bundle: bin/ (ablationd, ablation-worker, ablation-client) and lib/ with
# the non-system shared libraries they need (gRPC, absl, protobuf, spdlog, fmt, sqlite, ...).
# The binaries find lib/ through RPATH $ORIGIN/../lib. The CUDA driver and cuBLAS are not
# bundled: the GPU node's CUDA installation provides them.
#   deploy/make-bundle.sh BUILD_DIR OUT_DIR [extra binaries...]
set -euo pipefail
build=${1:?usage: make-bundle.sh BUILD_DIR OUT_DIR [extra binaries...]}
out=${2:?usage: make-bundle.sh BUILD_DIR OUT_DIR [extra binaries...]}
shift 2
mkdir -p "$out/bin" "$out/lib"
bins=("$build/bin/ablationd" "$build/bin/ablation-worker" "$build/bin/ablation-client" "$@")
# Present on every glibc system, or provided by the GPU node's driver and CUDA toolkit.
system='^(linux-vdso|ld-linux|libc\.|libm\.|libpthread|libdl\.|librt\.|libstdc\+\+|libgcc_s|libcuda\.|libcublas|libcublasLt|libcudart|libnvidia)'
for b in "${bins[@]}"; do
  cp -f "$b" "$out/bin/"
  strip --strip-debug "$out/bin/$(basename "$b")" 2>/dev/null || true
  ldd "$b" | awk '/=> \//{print $1" "$3}' | while read -r name path; do
    if [[ ! $name =~ $system ]]; then cp -fL "$path" "$out/lib/$name"; fi
  done
done
echo "bundle in $out: $(ls "$out/bin" | wc -l) binaries, $(ls "$out/lib" | wc -l) libraries, $(du -sh "$out" | cut -f1)"
