#!/usr/bin/env bash
# Makes a relocatable bundle of ablationd: copy the folder anywhere (/opt/ablationd is what the
# systemd units expect) on a host with glibc >= the build machine's and the CUDA driver; nothing
# else needs installing.
#
#   deploy/make-bundle.sh BUILD_DIR OUT_DIR [extra binaries...]
#
#   OUT_DIR/bin/                 ablationd, ablation-worker, ablation-client, ablation-compile
#                                (user kernels' compiler, NVRTC from the node's CUDA), ablationd-nightly
#                                (deploy/nightly.sh), ablationd-nightly-fleet (deploy/nightly-fleet.sh:
#                                every daemon of a fleet), the Kubernetes DaemonSet's
#                                ablationd-config-reloader (deploy/config-reloader.sh) and
#                                ablationd-drain-outbox (deploy/drain-outbox.py), and the extra
#                                binaries (e.g. test programs)
#   OUT_DIR/lib/                 every shared library they need that a host does not have as a
#                                matter of course: gRPC, absl, protobuf, re2, c-ares, upb,
#                                spdlog, fmt, sqlite, ssl, ...
#   OUT_DIR/share/ablationd/     ablationd.toml (example config), nightly.env, presets.toml (when
#                                deploy/ has one), README.md (deploy/README.md), MANIFEST, and
#                                systemd/ (the units, the sysusers file, the observe-only drop-in)
#   OUT_DIR/share/bash-completion/completions/ablation-client, OUT_DIR/share/zsh/site-functions/
#                                _ablation-client: the client's shell completion, written by the
#                                bundled client itself (`ablation-client completion bash|zsh`)
#
# Every binary's RPATH is set to exactly $ORIGIN/../lib (DT_RPATH, not RUNPATH, so that the
# libraries' own dependencies are found there too; build-machine paths are dropped). Not bundled,
# because the GPU node provides them: the CUDA driver (libcuda.so.1), NVML (libnvidia-ml.so.1,
# loaded at run time), cuBLAS (libcublas/libcublasLt, over 500 MB), NVRTC and nvJitLink (libnvrtc,
# libnvJitLink: ablation-compile's CUDA and PTX compilers, about 100 MB); all from the node's CUDA
# installation, found through ld.so.conf or LD_LIBRARY_PATH); nor glibc, libstdc++ and libgcc_s
# (the host's own, which must be at least as new as the build machine's).
#
# OUT_DIR's bin/, lib/, share/ablationd/ and the two completion files are replaced; anything else
# in it is left alone.
# Needs patchelf (scripts/install-deps.sh installs it).
set -euo pipefail
usage="usage: make-bundle.sh BUILD_DIR OUT_DIR [extra binaries...]"
build=${1:?$usage}
out=${2:?$usage}
shift 2
here=$(cd "$(dirname "$0")" && pwd)

command -v patchelf >/dev/null ||
  { echo "make-bundle: patchelf is needed (apt-get install patchelf, or scripts/install-deps.sh)" >&2; exit 1; }
bins=("$build/bin/ablationd" "$build/bin/ablation-worker" "$build/bin/ablation-client"
  "$build/bin/ablation-compile" "$@")
for b in "${bins[@]}"; do
  [[ -f $b && -x $b ]] || { echo "make-bundle: no executable $b (build it first)" >&2; exit 1; }
done

# Libraries every host has (glibc, the C++ runtime) or that the GPU node's driver and CUDA
# installation provide. Everything else an executable needs travels in lib/.
system='^(linux-vdso|ld-linux|libc\.so|libm\.so|libmvec\.so|libpthread\.so|libdl\.so|librt\.so|libresolv\.so|libutil\.so|libanl\.so|libstdc\+\+\.so|libgcc_s\.so|libcuda\.so|libcudart\.so|libcublas\.so|libcublasLt\.so|libnvrtc|libnvJitLink|libnvidia-)'

rm -rf "${out:?}/bin" "${out:?}/lib" "${out:?}/share/ablationd"
mkdir -p "$out/bin" "$out/lib" "$out/share/ablationd/systemd"
declare -A host_provided=()
for b in "${bins[@]}"; do
  name=$(basename "$b")
  cp -f "$b" "$out/bin/$name"
  strip --strip-debug "$out/bin/$name" 2>/dev/null || true
  # shellcheck disable=SC2016 # $ORIGIN is for the dynamic loader, not the shell
  patchelf --force-rpath --set-rpath '$ORIGIN/../lib' "$out/bin/$name"
  # ldd of the build's binary, in an environment of its own: what LD_LIBRARY_PATH happens to say
  # here must not decide what travels.
  while IFS= read -r line; do
    # "\tlibX.so.1 => /path/to/libX.so.1 (0x...)" or "\tlibX.so.1 => not found"
    [[ $line =~ ^[[:space:]]*([^[:space:]]+)\ =\>\ (.*)$ ]] || continue
    lib=${BASH_REMATCH[1]}
    path=${BASH_REMATCH[2]% (0x*)}
    if [[ $lib =~ $system ]]; then
      host_provided[$lib]=1
    elif [[ $path == "not found" ]]; then
      echo "make-bundle: $name needs $lib, which is not found on this machine" >&2
      exit 1
    else
      cp -fL "$path" "$out/lib/$lib"
    fi
  done < <(env -u LD_LIBRARY_PATH -u LD_PRELOAD ldd "$b")
done
chmod 0644 "$out"/lib/*
# Symbols a library needs for no relocation go too: a quarter less to carry (the GPU calls of the
# device tool carry a compressed bundle within a limit the repository's evidence shares).
strip --strip-unneeded "$out"/lib/* 2>/dev/null || true

# The nightly job and what the host's administrator needs.
install -m 0755 "$here/nightly.sh" "$out/bin/ablationd-nightly"
install -m 0755 "$here/nightly-fleet.sh" "$out/bin/ablationd-nightly-fleet"
# Kubernetes: the DaemonSet's config reloader (a sidecar) and its preStop hook.
install -m 0755 "$here/config-reloader.sh" "$out/bin/ablationd-config-reloader"
install -m 0755 "$here/drain-outbox.py" "$out/bin/ablationd-drain-outbox"
install -m 0644 "$here/ablationd.toml" "$here/nightly.env" "$out/share/ablationd/"
[[ -f $here/presets.toml ]] && install -m 0644 "$here/presets.toml" "$out/share/ablationd/"
[[ -f $here/README.md ]] && install -m 0644 "$here/README.md" "$out/share/ablationd/"
cp -R "$here/systemd/." "$out/share/ablationd/systemd/"
find "$out/share/ablationd" -type f -exec chmod 0644 {} +

# Shell completion, generated by the bundled client from its own command definitions, where
# bash-completion and zsh look under a prefix (deploy/README.md: linking them into the host's).
bash_completion="$out/share/bash-completion/completions/ablation-client"
zsh_completion="$out/share/zsh/site-functions/_ablation-client"
mkdir -p "$(dirname "$bash_completion")" "$(dirname "$zsh_completion")"
"$out/bin/ablation-client" -o "$bash_completion" completion bash
"$out/bin/ablation-client" -o "$zsh_completion" completion zsh
chmod 0644 "$bash_completion" "$zsh_completion"

{
  echo "# ablationd bundle, made $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(uname -n) from $(realpath "$build")"
  echo "version: $("$out/bin/ablationd" --version 2>/dev/null || echo unknown)"
  echo "glibc of the build machine: $(ldd --version | head -n1 | awk '{print $NF}') (the host needs this or newer)"
  echo "not bundled, the host provides: $(printf '%s\n' "${!host_provided[@]}" | LC_ALL=C sort | xargs)"
  echo "# files"
  (cd "$out" && find bin lib share -type f | LC_ALL=C sort | xargs sha256sum)
} >"$out/share/ablationd/MANIFEST"

nbin=$(find "$out/bin" -type f | wc -l)
nlib=$(find "$out/lib" -type f | wc -l)
echo "bundle in $out: $nbin programs, $nlib libraries, $(du -sh "$out" | cut -f1); RPATH \$ORIGIN/../lib"
echo "not bundled (the GPU node must provide them): the CUDA driver (libcuda.so.1), NVML" \
  "(libnvidia-ml.so.1), cuBLAS (libcublas.so, libcublasLt.so) NVRTC (libnvrtc.so) and nvJitLink (libnvJitLink.so) from its CUDA installation;" \
  "glibc and libstdc++ at least as new as this machine's"
