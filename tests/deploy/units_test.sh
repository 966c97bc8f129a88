#!/usr/bin/env bash
# The systemd units of deploy/systemd: `systemd-analyze verify` must accept them without a single
# warning, `systemd-analyze security --offline` must rate them at most EXPOSURE, and the settings
# the design depends on must be there. verify checks that the programs named in Exec= exist, so
# the units are checked as temporary copies pointing at the build's binaries.
#   units_test.sh SOURCE_DIR BUILD_BIN_DIR
set -euo pipefail
src=$(realpath "${1:?usage: units_test.sh SOURCE_DIR BUILD_BIN_DIR}")
bin=$(realpath "${2:?usage: units_test.sh SOURCE_DIR BUILD_BIN_DIR}")
if ! command -v systemd-analyze >/dev/null; then
  # Debian 12: the systemd package provides it (scripts/install-deps.sh installs it).
  echo "SKIPPED: systemd-analyze not installed (apt-get install systemd)"
  exit 77
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/units-test.XXXXXX")
trap 'rm -rf "$work"' EXIT
units=$work/units
mkdir -p "$units"

failures=0
fail() {
  echo "FAIL: $*" >&2
  failures=$((failures + 1))
}

# The copies: /opt/ablationd/bin/X -> the build's X; the nightly job is deploy/nightly.sh.
[[ -x $bin/ablationd ]] || { echo "FAIL: no $bin/ablationd (build it first)" >&2; exit 1; }
for f in "$src"/deploy/systemd/*.service "$src"/deploy/systemd/*.timer; do
  sed -e "s#/opt/ablationd/bin/ablationd-nightly#$src/deploy/nightly.sh#g" \
    -e "s#/opt/ablationd/bin/#$bin/#g" "$f" >"$units/$(basename "$f")"
done
# The service as the observe-only drop-in leaves it.
{
  cat "$units/ablationd.service"
  cat "$src/deploy/systemd/ablationd.service.d/observe-only.conf"
} >"$units/ablationd-observe.service"

cd "$units"
for u in ablationd.service ablationd-observe.service ablationd-nightly.service ablationd-nightly.timer; do
  status=0
  out=$(systemd-analyze verify "./$u" 2>&1) || status=$?
  if [[ $status != 0 || -n $out ]]; then
    fail "systemd-analyze verify $u (exit $status):"
    echo "$out" >&2
  else
    echo "ok: systemd-analyze verify $u"
  fi
done

# Exposure, 0 (locked down) .. 10 (unprotected), times ten. The daemon keeps CAP_SYS_ADMIN for
# clock locking and needs the GPU nodes and the network; the nightly client needs only the network.
exposure() {
  local unit=$1 limit=$2 status=0 out
  out=$(systemd-analyze security --offline=true --threshold="$limit" "./$unit" 2>&1) || status=$?
  local level
  level=$(grep -o 'Overall exposure level for [^:]*: [0-9.]*' <<<"$out" | awk '{print $NF}')
  if [[ $status != 0 || -z $level ]]; then
    fail "$unit: exposure ${level:-unknown} above $limit/10"
    grep '✗' <<<"$out" >&2 || true
  else
    echo "ok: $unit exposure $level (limit $(awk "BEGIN{print $limit/10}"))"
  fi
}
if systemd-analyze security --help 2>&1 | grep -q -- --offline; then
  exposure ablationd.service 25
  exposure ablationd-observe.service 22
  exposure ablationd-nightly.service 20
else
  echo "note: this systemd-analyze has no --offline; exposure not rated"
fi

# The settings the design depends on.
require() {
  local unit=$1
  shift
  for line in "$@"; do
    grep -qxF -- "$line" "$src/deploy/systemd/$unit" || fail "$unit lacks the line: $line"
  done
}
require ablationd.service \
  "ExecStart=/opt/ablationd/bin/ablationd --config /etc/ablationd/ablationd.toml" \
  "ExecStopPost=/opt/ablationd/bin/ablationd --reset-clocks --config /etc/ablationd/ablationd.toml" \
  "User=ablationd" "StateDirectory=ablationd" "ProtectSystem=strict" "ProtectHome=yes" \
  "PrivateTmp=yes" "NoNewPrivileges=yes" "DevicePolicy=closed" "DeviceAllow=/dev/nvidiactl rw" \
  "DeviceAllow=/dev/nvidia-uvm rw" "DeviceAllow=char-nvidia-frontend rw" \
  "RestrictAddressFamilies=AF_UNIX AF_INET AF_INET6" "SystemCallArchitectures=native" \
  "LockPersonality=yes" "RestrictRealtime=yes" "ProtectKernelModules=yes" \
  "ProtectKernelTunables=yes" "ProtectControlGroups=yes" \
  "CapabilityBoundingSet=CAP_SYS_ADMIN" "AmbientCapabilities=CAP_SYS_ADMIN" \
  "ExecReload=/bin/kill -HUP \$MAINPID" "MemoryMax=8G"
require ablationd.service.d/observe-only.conf "CapabilityBoundingSet=" "AmbientCapabilities="
require ablationd-nightly.service "Type=oneshot" "EnvironmentFile=-/etc/ablationd/nightly.env" \
  "ExecStart=/opt/ablationd/bin/ablationd-nightly" "CapabilityBoundingSet="
require ablationd-nightly.timer "Unit=ablationd-nightly.service" "Persistent=yes"
# PrivateUsers= would make CAP_SYS_ADMIN count only inside a user namespace (no clock locking);
# ProcSubset=pid hides /proc/driver/nvidia from libcuda; PrivateDevices= hides /dev/nvidia*.
for bad in PrivateUsers=yes ProcSubset=pid PrivateDevices=yes DynamicUser=yes; do
  grep -qx "$bad" "$src/deploy/systemd/ablationd.service" && fail "ablationd.service must not set $bad"
done

# The nightly script parses and passes shellcheck (where installed).
bash -n "$src/deploy/nightly.sh" || fail "bash -n deploy/nightly.sh"
bash -n "$src/deploy/make-bundle.sh" || fail "bash -n deploy/make-bundle.sh"
if command -v shellcheck >/dev/null; then
  shellcheck "$src/deploy/nightly.sh" "$src/deploy/make-bundle.sh" "$src/deploy/config-reloader.sh" ||
    fail "shellcheck"
else
  echo "note: shellcheck not installed; bash -n only"
fi

if ((failures)); then
  echo "$failures failure(s)" >&2
  exit 1
fi
echo "all unit checks passed"
