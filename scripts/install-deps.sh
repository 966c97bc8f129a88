#!/usr/bin/env bash
# Installs the Debian packages ablationd builds against, only those that are missing.
# Idempotent: a second call with everything present does nothing and prints one line.
set -euo pipefail

packages=(
  build-essential cmake ninja-build ccache pkg-config git
  lld  # the linker the build prefers (CMakeLists.txt); GNU ld links without it
  libgrpc++-dev libgrpc-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler
  libabsl-dev  # gRPC's abseil, also the base64url of page tokens (db/page_token.cc)
  libsqlite3-dev sqlite3 libspdlog-dev libfmt-dev libcli11-dev libtomlplusplus-dev
  libssl-dev openssl  # SHA-256 of tokens; the security test makes its CA with openssl
  libgtest-dev libgmock-dev
  clang libclang-rt-dev  # libFuzzer and ASan runtimes for tests/fuzz (ABLATION_FUZZ)
  chromium  # headless, for the test that renders `report --format html`
  zlib1g-dev  # that test decodes the screenshot Chromium takes of it
  patchelf  # deploy/make-bundle.sh sets the bundle's RPATH
  systemd shellcheck  # systemd-analyze verify/security and shellcheck in the deploy tests
  zsh  # the test of `ablation-client completion zsh` (zsh -n and what the script completes)
  # the HTTP server of the daemon's Prometheus /metrics endpoint (GNU libmicrohttpd: IPv6 too)
  libmicrohttpd-dev
  prometheus-cpp-dev  # the daemon's metrics registry and their text format (prometheus-cpp core)
  libmuparser-dev  # the expressions of a user kernel's launch geometry (kernels/user)
  # The compiler sandbox of user kernels (server/compile/sandbox.h): its system-call filter
  # (libseccomp); a cubin is stored compressed with zlib (zlib1g-dev, above)
  libseccomp-dev
  libelf-dev  # reading a user's cubin in the compiler process (server/compile/cubin.h)
  libboost-math-dev  # Student's t and the incomplete beta of the report's intervals (header-only)
  nlohmann-json3-dev  # the client's --format json envelope (client/output/json.cc; header-only)
  libpq-dev  # libpq: a fleet's PostgreSQL, exported to by the daemon and read by the client (db/fleet/)
  # PostgreSQL's server: the fleet tests start their own on a Unix socket in a temporary folder
  # (tests/e2e/postgres_server.h; initdb and pg_ctl from /usr/lib/postgresql/15/bin)
  postgresql
  # The Python package (python/): its stubs come from protoc + grpc_python_plugin (above)
  python3-grpcio python3-protobuf python3-pandas
  python3-matplotlib python3-tqdm  # ablationd.plot, and the progress bar (ablationd.progress)
  # Tests: pytest; Prometheus itself (and promtool) scraping the daemon, its text parser; the
  # YAML parser that checks deploy/k8s/. (Where systemd runs, Debian also starts its own
  # prometheus service on :9090; the tests start theirs on a free loopback port.)
  python3-pytest prometheus python3-prometheus-client python3-yaml
  universal-ctags  # the functions and their lengths for the code-shape test (tests/layering)
  # the Python package installed with pip into a fresh venv (tests/python/test_install.py)
  python3-venv python3-setuptools python3-wheel
  mypy  # that test type-checks a notebook's code against the installed package (PEP 561)
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if ((${#missing[@]})); then
  echo "install-deps: installing ${missing[*]}"
  sudo_cmd=()
  if [[ $(id -u) -ne 0 ]]; then sudo_cmd=(sudo); fi
  export DEBIAN_FRONTEND=noninteractive
  "${sudo_cmd[@]}" apt-get update -qq
  "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
else
  echo "install-deps: all Debian packages present"
fi

# The CUDA toolkit is not a Debian package here: it is found the usual way.
if ! command -v nvcc >/dev/null 2>&1; then
  for d in "${CUDA_HOME:-}" "${CUDA_PATH:-}" /usr/local/cuda; do
    if [[ -n "$d" && -x "$d/bin/nvcc" ]]; then
      echo "install-deps: nvcc found at $d/bin/nvcc (not on PATH; CMake will be told)"
      exit 0
    fi
  done
  echo "install-deps: ERROR: the CUDA toolkit was not found: no nvcc on PATH, in \$CUDA_HOME or in /usr/local/cuda." >&2
  echo "install-deps: install the CUDA toolkit (12.x or 13.x) and put its bin/ on PATH or set CUDA_HOME." >&2
  exit 1
fi
