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

# 3. compare flags a slowdown that no series calls a candidate: logged, the verdict decides (no
# candidate: exit 0); the report and the verdict are still written.
night "compare alone" 0 FAKE_COMPARE_RC=1
report_of 3 || fail "compare alone: no report of run 3"
called "compare 2 3" || fail "compare alone: compare 2 3 not called"
grep -q "the verdict decides" "$work/out" || fail "compare alone: not said"
called "history \* --in-run 3 --tag nightly --format json" || fail "compare alone: no history of run 3"
called " run " && fail "compare alone: a rerun without a candidate"
grep -q '"verdict": "ok"' "$reports/latest-verdict.json" || fail "compare alone: verdict not ok"

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

# 5c. A candidate that its rerun confirms: exit 1, the verdict and the metrics say so.
metrics=$work/metrics/ablationd_nightly.prom
mkdir -p "$work/metrics"
night "confirmed regression" 1 FAKE_CANDIDATE="abl_x bf16 4096 4096 4096 1.0 1.1" \
  FAKE_RERUN_MEDIAN=1.09 METRICS_TEXTFILE="$metrics"
called "run --variant abl_x --dtype bf16 --shape 4096x4096x4096 --tag nightly-rerun --regime sustained" ||
  fail "confirmed: no rerun of the candidate"
called "history abl_x --dtype bf16 --shape 4096x4096x4096 --in-run 11 --format json" ||
  fail "confirmed: the rerun's point was not read"
grep -q "REGRESSION confirmed by rerun 11" "$work/out" || fail "confirmed: not said"
grep -q '"verdict": "regression"' "$reports/latest-verdict.json" || fail "confirmed: verdict"
grep -q '"confirmed": true' "$reports/latest-verdict.json" || fail "confirmed: item not confirmed"
grep -qx 'ablationd_regressions{variant="abl_x",shape="4096x4096x4096",dtype="bf16",device="GPU-fake",regime="sustained"} 1' \
  "$metrics" || fail "confirmed: no ablationd_regressions sample in $metrics"
grep -q '^ablationd_nightly_candidates{tag="nightly"} 1$' "$metrics" || fail "confirmed: candidates"
if command -v promtool >/dev/null; then
  promtool check metrics <"$metrics" || fail "confirmed: promtool check metrics"
fi

# 5d. A one-night outlier: the rerun measures the usual time, so it is not confirmed: exit 0,
# the verdict lists it unconfirmed and the metric has no sample.
night "one-night outlier" 0 FAKE_CANDIDATE="abl_x bf16 4096 4096 4096 1.0 1.1" \
  FAKE_RERUN_MEDIAN=1.001 METRICS_TEXTFILE="$metrics" VERDICT_FILE="$work/verdict.json"
grep -q "not confirmed: the rerun 13 of abl_x" "$work/out" || fail "outlier: not said"
grep -q '"verdict": "ok"' "$work/verdict.json" || fail "outlier: verdict not ok"
grep -q '"confirmed": false' "$work/verdict.json" || fail "outlier: item not listed unconfirmed"
grep -q '"candidates": 1' "$work/verdict.json" || fail "outlier: candidate not counted"
grep -q '^ablationd_regressions{' "$metrics" && fail "outlier: a regression sample in $metrics"
# A faster night is never a regression, and neither is one below THRESHOLD.
night "faster night" 0 FAKE_CANDIDATE="abl_x bf16 4096 4096 4096 1.0 0.9"
called " run " && fail "faster night: rerun of an improvement"
night "below THRESHOLD" 0 FAKE_CANDIDATE="abl_x bf16 4096 4096 4096 1.0 1.04" THRESHOLD=5%
called " run " && fail "below THRESHOLD: rerun of a 4 % change at THRESHOLD 5 %"
# A rerun that fails confirms nothing (and says so).
night "rerun fails" 0 FAKE_CANDIDATE="abl_x bf16 4096 4096 4096 1.0 1.1" FAKE_RUN_RC=2
grep -q "not confirmed: the rerun of abl_x bf16 4096x4096x4096 failed" "$work/out" ||
  fail "rerun fails: not said"

# 5e. A Pushgateway (the Kubernetes CronJob's way to Prometheus): the night's metrics text is PUT
# to job ablationd_nightly, instance ABLATION_SERVER; a confirmed regression is in it, and a
# gateway that does not answer is logged without changing the verdict's exit status.
gateway_log=$work/gateway.log
python3 -c '
import http.server, sys
class H(http.server.BaseHTTPRequestHandler):
    def do_PUT(self):
        body = self.rfile.read(int(self.headers["Content-Length"]))
        with open(sys.argv[1], "ab") as f:
            f.write(b"PUT " + self.path.encode() + b"\n" + body)
        self.send_response(200)
        self.end_headers()
    def log_message(self, *args):
        pass
s = http.server.HTTPServer(("127.0.0.1", 0), H)
open(sys.argv[2], "w").write(str(s.server_address[1]))
s.serve_forever()
' "$gateway_log" "$work/gateway.port" &
gateway=$!
for _ in $(seq 1 50); do [[ -s $work/gateway.port ]] && break; sleep 0.1; done
night "pushed regression" 1 FAKE_CANDIDATE="abl_x bf16 4096 4096 4096 1.0 1.1" \
  FAKE_RERUN_MEDIAN=1.09 PUSHGATEWAY_URL="http://127.0.0.1:$(cat "$work/gateway.port")/"
kill "$gateway" 2>/dev/null
grep -q '^PUT /metrics/job/ablationd_nightly/instance/127.0.0.1%3A7777$' "$gateway_log" ||
  fail "pushed: no PUT to the job's group of this daemon"
grep -q '^ablationd_regressions{variant="abl_x",shape="4096x4096x4096"' "$gateway_log" ||
  fail "pushed: the regression is not in the pushed text"
grep -q "metrics: pushed to http://127.0.0.1:" "$work/out" || fail "pushed: not said"
night "gateway away" 1 FAKE_CANDIDATE="abl_x bf16 4096 4096 4096 1.0 1.1" \
  FAKE_RERUN_MEDIAN=1.09 PUSHGATEWAY_URL="http://127.0.0.1:9/"
grep -q "error: the push to http://127.0.0.1:9/ failed" "$work/out" || fail "gateway away: not said"
compgen -G "$reports/.ablationd_nightly.*" >/dev/null && fail "gateway away: metrics text left behind"

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
