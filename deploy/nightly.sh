#!/usr/bin/env bash
# The nightly regression check (run by ablationd-nightly.service; installed in a bundle as
# bin/ablationd-nightly):
#   1. ablation-client sweep --preset $PRESET --tag $TAG      (the night's measurements)
#   2. the previous night: the newest earlier run tagged $TAG that succeeded or was partial, in
#      tonight's power regime (runs of different regimes are never compared)
#   3. ablation-client compare PREVIOUS NEW [--threshold $THRESHOLD]
#   4. ablation-client report NEW --format html  ->  $REPORT_DIR
#
# Settings (environment; the unit reads them from /etc/ablationd/nightly.env):
#   ABLATION_SERVER  the daemon, HOST:PORT (read by ablation-client itself; default 127.0.0.1:50051)
#   REPORT_DIR       required: where reports go. Per night: nightly-DATE-runID.html and, when
#                    there was a previous night, nightly-DATE-runID-compare.txt; latest.html
#                    points at the newest report.
#   THRESHOLD        optional: the slowdown that counts as a regression when significant, a
#                    percentage (3%, or 3) as compare --threshold takes it; default: the client's
#   PRESET, TAG      optional: default "nightly" both
#   REGIME           optional: the sweep's power regime (sustained, burst); default: the daemon's
#   NIGHTLY_JSON     optional: jq or python3, the tool that reads the client's JSON (default:
#                    jq when installed, else python3)
#
# Exit status (non-zero fails the unit):
#   0  no regression (or the first night: nothing to compare with)
#   1  regression: compare found a significant slowdown
#   2  the job could not be done: bad settings, daemon unreachable, no run made, report or
#      compare failed
#   3  no regression, but the sweep reported failed measurements (or ended failed/cancelled)
# The report is written whatever the comparison says, as long as the sweep made a run.
set -euo pipefail

log() { printf 'nightly: %s\n' "$*"; }
die() {
  printf 'nightly: error: %s\n' "$*" >&2
  exit 2
}

PRESET=${PRESET:-nightly}
TAG=${TAG:-nightly}
[[ -n ${REPORT_DIR:-} ]] || die "REPORT_DIR is not set (see /etc/ablationd/nightly.env)"
if [[ -n ${THRESHOLD:-} && ! $THRESHOLD =~ ^[0-9]*\.?[0-9]+%?$ ]]; then
  die "THRESHOLD='$THRESHOLD' is not a percentage such as 3%"
fi
mkdir -p "$REPORT_DIR" || die "cannot create REPORT_DIR $REPORT_DIR"
[[ -w $REPORT_DIR ]] || die "REPORT_DIR $REPORT_DIR is not writable by $(id -un)"

# The client: on PATH, else beside this script (bin/ of a bundle).
if client=$(command -v ablation-client); then
  :
elif [[ -x "$(dirname "$0")/ablation-client" ]]; then
  client="$(dirname "$0")/ablation-client"
else
  die "ablation-client is neither on PATH nor beside $0"
fi
log "client $client, server ${ABLATION_SERVER:-127.0.0.1:50051 (default)}, preset $PRESET, tag $TAG"

json_tool=${NIGHTLY_JSON:-}
if [[ -z $json_tool ]]; then
  if command -v jq >/dev/null; then json_tool=jq; else json_tool=python3; fi
fi
command -v "$json_tool" >/dev/null || die "reading the client's JSON needs jq or python3; found neither"

# Prints "ID STATE REGIME" per run tagged $TAG, newest first (the order `runs` lists them in).
# The JSON is the client's envelope ({"schema_version": 2, "kind": "runs", "items": [...]}), whose
# runs name the state and the regime in the words of the database (succeeded, sustained; "" for
# a run stored before regimes, printed "none").
nightly_runs() {
  local json
  json=$("$client" -q runs --tag "$TAG" --limit 0 --format json) ||
    die "ablation-client runs failed (is the daemon at ${ABLATION_SERVER:-127.0.0.1:50051} up?)"
  case $json_tool in
    jq) jq -r 'if .kind != "runs" then error("not a list of runs: \(.kind)") else .items[] end | "\(.id) \(.state) \(if (.regime // "") == "" then "none" else .regime end)"' <<<"$json" ;;
    python3)
      python3 -c '
import json, sys
doc = json.load(sys.stdin)
if doc.get("kind") != "runs":
    sys.exit("not a list of runs: %r" % doc.get("kind"))
for run in doc["items"]:
    print(run["id"], run["state"], run.get("regime") or "none")' <<<"$json"
      ;;
    *) die "NIGHTLY_JSON=$json_tool: use jq or python3" ;;
  esac || die "cannot read the run list the client printed"
}

# ---- before the sweep: the newest run tagged $TAG (the previous night is chosen once tonight's
# regime is known).
before=$(nightly_runs)
newest_before=0
while read -r id _; do
  [[ -n $id ]] || continue
  if ((id > newest_before)); then newest_before=$id; fi
done <<<"$before"

# ---- the sweep. Exit 1 from it: the run ended with failed measurements; still compare and
# report what was measured. Anything else non-zero: no usable run.
regime_args=()
if [[ -n ${REGIME:-} ]]; then regime_args=(--regime "$REGIME"); fi
log "sweep --preset $PRESET --tag $TAG${REGIME:+ --regime $REGIME}"
sweep_status=0
"$client" -q sweep --preset "$PRESET" --tag "$TAG" "${regime_args[@]}" || sweep_status=$?
case $sweep_status in
  0) ;;
  1) log "the sweep reported failed measurements" ;;
  *) die "ablation-client sweep failed (exit $sweep_status)" ;;
esac

# ---- the night's run: the newest run tagged $TAG that is newer than every one before.
after=$(nightly_runs)
current=""
current_state=""
current_regime=""
while read -r id state regime; do
  [[ -n $id ]] || continue
  if ((id > newest_before)) && [[ -z $current ]]; then
    current=$id current_state=$state current_regime=$regime
  fi
done <<<"$after"
[[ -n $current ]] || die "the sweep made no run tagged $TAG"
# The previous night: the newest earlier one that succeeded or was partial, in tonight's regime.
previous=""
while read -r id state regime; do
  [[ -n $id ]] || continue
  if [[ -z $previous && $regime == "$current_regime" && ($state == succeeded || $state == partial) ]]; then
    previous=$id
  fi
done <<<"$before"
log "tonight: run $current ($current_state, regime $current_regime); previous night: ${previous:-none}"
# partial, failed or cancelled: report what there is, then fail the unit.
if [[ $current_state != succeeded ]]; then sweep_status=1; fi

# ---- the report: written to a temporary file and renamed, so a reader never sees half of one.
stem="$REPORT_DIR/nightly-$(date -u +%Y-%m-%d)-run$current"
tmp=$(mktemp "$REPORT_DIR/.nightly.XXXXXX")
trap 'rm -f "$tmp"' EXIT
"$client" -q report "$current" --format html >"$tmp" ||
  die "ablation-client report $current failed"
chmod 0644 "$tmp"
mv -f "$tmp" "$stem.html"
ln -sfn "$(basename "$stem.html")" "$REPORT_DIR/latest.html"
log "report: $stem.html"

# ---- the comparison.
regression=0
if [[ -z $previous ]]; then
  log "first night: no earlier $TAG run in the $current_regime regime that succeeded; nothing to compare with"
else
  compare_args=(compare "$previous" "$current")
  if [[ -n ${THRESHOLD:-} ]]; then compare_args+=(--threshold "$THRESHOLD"); fi
  compare_status=0
  # Not quiet: its summary (how many compared, which variants only one run has) goes to the log.
  "$client" "${compare_args[@]}" >"$tmp" || compare_status=$?
  chmod 0644 "$tmp"
  mv -f "$tmp" "$stem-compare.txt"
  cat "$stem-compare.txt"
  case $compare_status in
    0) log "no significant slowdown against run $previous" ;;
    1)
      regression=1
      log "REGRESSION: run $current is significantly slower than run $previous" \
        "(${THRESHOLD:+threshold $THRESHOLD, }details in $stem-compare.txt)"
      ;;
    *) die "ablation-client compare $previous $current failed (exit $compare_status)" ;;
  esac
fi

if ((regression)); then exit 1; fi
if ((sweep_status)); then
  log "failing the unit: run $current has failed measurements or did not succeed"
  exit 3
fi
exit 0
