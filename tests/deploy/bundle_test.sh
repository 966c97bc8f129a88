#!/usr/bin/env bash
# deploy/make-bundle.sh, from the build tree into a temporary folder: every program's libraries
# resolve inside the bundle's lib/ (apart from glibc, the C++ runtime, the CUDA driver and cuBLAS,
# which the GPU node provides) with an empty LD_LIBRARY_PATH, every RPATH is exactly
# $ORIGIN/../lib, and the programs run from there.
#   bundle_test.sh SOURCE_DIR BUILD_DIR
set -euo pipefail
src=$(realpath "${1:?usage: bundle_test.sh SOURCE_DIR BUILD_DIR}")
build=$(realpath "${2:?usage: bundle_test.sh SOURCE_DIR BUILD_DIR}")
if ! command -v patchelf >/dev/null; then
  echo "FAIL: patchelf is not installed (scripts/install-deps.sh installs it)" >&2
  exit 1
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/bundle-test.XXXXXX")
trap 'rm -rf "$work"' EXIT
# A path with a space: nothing may depend on where the bundle lies or on word splitting.
bundle="$work/moved here/ablationd"

failures=0
fail() {
  echo "FAIL: $*" >&2
  failures=$((failures + 1))
}

"$src/deploy/make-bundle.sh" "$build" "$work/made" | tee "$work/make.out"
grep -q "not bundled" "$work/make.out" || fail "make-bundle does not say what is not bundled"
grep -q "cuBLAS" "$work/make.out" || fail "make-bundle does not name cuBLAS as not bundled"
# Relocatable: move it after making it.
mkdir -p "$(dirname "$bundle")"
mv "$work/made" "$bundle"

for f in bin/ablationd bin/ablation-worker bin/ablation-client bin/ablation-compile bin/ablationd-nightly \
  bin/ablationd-config-reloader bin/ablationd-drain-outbox \
  share/ablationd/ablationd.toml share/ablationd/nightly.env share/ablationd/MANIFEST \
  share/ablationd/systemd/ablationd.service share/ablationd/systemd/ablationd-nightly.service \
  share/ablationd/systemd/ablationd-nightly.timer share/ablationd/systemd/ablationd.sysusers.conf \
  share/ablationd/systemd/ablationd.service.d/observe-only.conf \
  share/bash-completion/completions/ablation-client share/zsh/site-functions/_ablation-client; do
  [[ -f "$bundle/$f" ]] || fail "the bundle has no $f"
done
bash -n "$bundle/share/bash-completion/completions/ablation-client" ||
  fail "the bundle's bash completion is not valid bash"
grep -q "^complete -F _ablation_client ablation-client$" \
  "$bundle/share/bash-completion/completions/ablation-client" ||
  fail "the bundle's bash completion does not register itself for ablation-client"
if [[ -f $src/deploy/presets.toml && ! -f $bundle/share/ablationd/presets.toml ]]; then
  fail "deploy/presets.toml is not in share/ablationd"
fi
compgen -G "$bundle/lib/libgrpc++.so*" >/dev/null || fail "libgrpc++ is not in lib/"
compgen -G "$bundle/lib/libsqlite3.so*" >/dev/null || fail "libsqlite3 is not in lib/"
compgen -G "$bundle/lib/libcublas*" >/dev/null && fail "cuBLAS must not be bundled"
compgen -G "$bundle/lib/libcuda.so*" >/dev/null && fail "the CUDA driver must not be bundled"

# What may come from the host rather than lib/.
host='^(linux-vdso|ld-linux|libc\.so|libm\.so|libmvec\.so|libpthread\.so|libdl\.so|librt\.so|libresolv\.so|libutil\.so|libanl\.so|libstdc\+\+\.so|libgcc_s\.so|libcuda\.so|libcudart\.so|libcublas\.so|libcublasLt\.so|libnvrtc|libnvJitLink|libnvidia-)'
lib_dir=$(realpath "$bundle/lib")
programs=0
for exe in "$bundle"/bin/*; do
  # ELF programs only (ablationd-nightly is a script).
  [[ $(head -c4 "$exe" | od -An -c | tr -d ' ') == 177ELF ]] || continue
  programs=$((programs + 1))
  name=$(basename "$exe")
  rpath=$(readelf -d "$exe" | sed -n 's/.*(RPATH).*\[\(.*\)\]/\1/p')
  [[ $rpath == "\$ORIGIN/../lib" ]] || fail "$name: RPATH is '$rpath', not \$ORIGIN/../lib"
  readelf -d "$exe" | grep -q '(RUNPATH)' && fail "$name has a RUNPATH (its libraries' own dependencies would not be found in lib/)"
  bundled=0
  while IFS= read -r line; do
    # "\tlibX.so.1 => /path/to/libX.so.1 (0x...)" or "\tlibX.so.1 => not found"
    [[ $line =~ ^[[:space:]]*([^[:space:]]+)\ =\>\ (.*)$ ]] || continue
    lib=${BASH_REMATCH[1]}
    path=${BASH_REMATCH[2]% (0x*)}
    [[ $lib =~ $host ]] && continue
    if [[ $path == "not found" ]]; then
      fail "$name: $lib not found"
    elif [[ $(realpath "$path") != "$lib_dir"/* ]]; then
      fail "$name: $lib resolves to $path, outside the bundle"
    else
      bundled=$((bundled + 1))
    fi
  done < <(env LD_LIBRARY_PATH= ldd "$exe")
  echo "ok: $name: RPATH $rpath, $bundled libraries from the bundle"
done
((programs >= 3)) || fail "only $programs ELF programs in bin/"

# The programs run from the bundle, with nothing of the build tree on any path.
status=0
version=$(cd / && env LD_LIBRARY_PATH= "$bundle/bin/ablationd" --version 2>&1) || status=$?
[[ $status == 0 && $version =~ [0-9]+\.[0-9]+\.[0-9]+ ]] || fail "bin/ablationd --version: exit $status: $version"
echo "ok: bin/ablationd --version: $version"
status=0
help=$(cd / && env LD_LIBRARY_PATH= "$bundle/bin/ablation-client" --help 2>&1) || status=$?
[[ $status == 0 && $help == *ablation-client* ]] || fail "bin/ablation-client --help: exit $status: $help"
echo "ok: bin/ablation-client --help"
grep -q "^version: " "$bundle/share/ablationd/MANIFEST" || fail "MANIFEST names no version"
(cd "$bundle" && sed -n '/^# files/,$p' share/ablationd/MANIFEST | tail -n +2 | grep -v 'share/ablationd/MANIFEST' |
  sha256sum --quiet -c -) || fail "MANIFEST checksums do not match the files"

if ((failures)); then
  echo "$failures failure(s)" >&2
  exit 1
fi
echo "bundle checks passed"
