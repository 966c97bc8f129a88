#!/usr/bin/env bash
# deploy/nightly.sh against a fake ablation-client (tests/deploy/fake_ablation_client.sh) on
# PATH: the first night, a quiet night, a regression, and the ways the job can fail.
#   nightly_test.sh NIGHTLY_SH FAKE_CLIENT
set -euo pipefail
nightly=$(realpath "${1:?usage: nightly_test.sh NIGHTLY_SH FAKE_CLIENT}")
fake=$(realpath "${2:?usage: nightly_test.sh NIGHTLY_SH FAKE_CLIENT}")
work=$(mktemp -d "${TMPDIR:-/tmp}/nightly-test.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/bin" "$work/state"
ln -s "$fake" "$work/bin/ablation-client"
reports=$work/reports

failures=0
fail() {
  echo "FAIL: $*" >&2
  failures=$((failures + 1))
}
# night NAME EXPECTED_EXIT [VAR=value...]: runs nightly.sh once with the fake client first on PATH.
night() {
  local name=$1 expected=$2
  shift 2
  : >"$work/state/calls"
  local status=0
  env PATH="$work/bin:$PATH" FAKE_CLIENT_STATE="$work/state" ABLATION_SERVER=127.0.0.1:7777 \
    REPORT_DIR="$reports" THRESHOLD=5% "$@" bash "$nightly" >"$work/out" 2>&1 || status=$?
  echo "---- $name (exit $status)"
  cat "$work/out"
  [[ $status == "$expected" ]] || fail "$name: exit $status, expected $expected"
}
called() { grep -q -- "$1" "$work/state/calls"; }
report_of() { compgen -G "$reports/nightly-*-run$1.html" >/dev/null; }

# 1. The first night: nothing to compare with; a report, exit 0.
night "first night" 0
report_of 1 || fail "first night: no report of run 1"
called "compare" && fail "first night: compare was called"
called "sweep --preset nightly --tag nightly" || fail "first night: no sweep call"
called "server=127.0.0.1:7777" || fail "ABLATION_SERVER did not reach the client"
[[ $(readlink "$reports/latest.html") == nightly-*-run1.html ]] || fail "latest.html is not run 1's"
grep -q "fake report of run 1" "$reports/latest.html" || fail "latest.html does not hold the report"

# 2. A quiet night: compared with night 1 at the threshold; report and comparison written.
night "no regression" 0
report_of 2 || fail "no regression: no report of run 2"
called "compare 1 2 --threshold 5%" || fail "no regression: compare 1 2 --threshold 5% not called"
compgen -G "$reports/nightly-*-run2-compare.txt" >/dev/null || fail "no regression: no compare text"
[[ $(readlink "$reports/latest.html") == nightly-*-run2.html ]] || fail "latest.html is not run 2's"

# 3. A regression: exit 1, the report is still written.
night "regression" 1 FAKE_COMPARE_RC=1
report_of 3 || fail "regression: no report of run 3"
called "compare 2 3" || fail "regression: compare 2 3 not called"
grep -q REGRESSION "$work/out" || fail "regression: not said"

# 4. A failed night is never the baseline: after run 4 failed, run 5 is compared with run 3.
night "failed sweep run" 3 FAKE_SWEEP_RC=1 FAKE_SWEEP_STATE=failed
report_of 4 || fail "failed sweep: no report of run 4"
night "after a failed night" 0 NIGHTLY_JSON=python3
called "compare 3 5" || fail "after a failed night: compare 3 5 not called (python3 JSON path)"

# 5. Partial run without regression: the unit still fails (3) so that someone looks.
night "partial" 3 FAKE_SWEEP_RC=1 FAKE_SWEEP_STATE=partial
called "compare 5 6" || fail "partial: compare 5 6 not called"

# 5b. Nights are compared within their power regime: the first burst night has nothing to compare
# with, the next burst night is compared with it (not with the sustained night between), and a
# sustained night with the last sustained one.
night "first burst night" 0 REGIME=burst
called "sweep --preset nightly --tag nightly --regime burst" || fail "burst: no --regime burst"
called "compare" && fail "first burst night: compared with a sustained night"
grep -q "no earlier nightly run in the burst regime" "$work/out" || fail "first burst night: not said"
night "sustained between" 0
called "compare 6 8" || fail "sustained between: compare 6 8 not called"
night "second burst night" 0 REGIME=burst NIGHTLY_JSON=python3
called "compare 7 9" || fail "second burst night: compare 7 9 not called (python3 JSON path)"

# 6. The job cannot be done: exit 2, with a reason.
night "daemon down" 2 FAKE_SWEEP_RC=2
grep -q "sweep failed" "$work/out" || fail "daemon down: reason not given"
night "compare error" 2 FAKE_COMPARE_RC=2
night "report error" 2 FAKE_REPORT_RC=2
night "no REPORT_DIR" 2 REPORT_DIR=
grep -q "REPORT_DIR is not set" "$work/out" || fail "no REPORT_DIR: reason not given"
night "bad THRESHOLD" 2 THRESHOLD=fast
compgen -G "$reports/.nightly.*" >/dev/null && fail "a temporary file was left in REPORT_DIR"

if ((failures)); then
  echo "$failures failure(s)" >&2
  exit 1
fi
echo "all nightly scenarios passed"
