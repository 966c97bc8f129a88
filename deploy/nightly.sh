#!/usr/bin/env bash
# The nightly regression check (run by ablationd-nightly.service; installed in a bundle as
# bin/ablationd-nightly):
#   1. ablation-client sweep --preset $PRESET --tag $TAG      (the night's measurements)
#   2. the previous night: the newest earlier run tagged $TAG that succeeded or was partial, in
#      tonight's power regime (runs of different regimes are never compared)
#   3. ablation-client compare PREVIOUS NEW [--threshold $THRESHOLD]
#   4. ablation-client report NEW --format html  ->  $REPORT_DIR
#   5. the verdict: every series (hardware fingerprint x variant x dtype x shape x regime) that
#      tonight's run measured, through `ablation-client history '*' --in-run NEW --tag $TAG`: a
#      series whose newest night is slower than the nights since its last change point by more
#      than its threshold (its spread, its noise, at least 1 %, and THRESHOLD when given) is a
#      candidate; each candidate is measured again at once (`run`, tagged $TAG-rerun) and is a
#      confirmed regression only if the rerun is slower by as much too. A one-night outlier
#      does not survive its rerun. The verdict is written as JSON ($VERDICT_FILE) and, where
#      METRICS_TEXTFILE is set, as Prometheus text (node-exporter's textfile collector):
#      ablationd_regressions{variant,shape,dtype,device} 1 per confirmed regression.
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
#   VERDICT_FILE     optional: where the night's verdict goes (default
#                    $REPORT_DIR/nightly-DATE-runID-verdict.json; latest-verdict.json points at it)
#   METRICS_TEXTFILE optional: a .prom file for node-exporter's textfile collector (e.g.
#                    /var/lib/prometheus/node-exporter/ablationd_nightly.prom), replaced whole
#   PUSHGATEWAY_URL  optional: a Prometheus Pushgateway (http://pushgateway:9091) to PUT the same
#                    text to, as job "ablationd_nightly", instance $ABLATION_SERVER (a Kubernetes
#                    CronJob has no node-exporter). PUT replaces the group whole, so a night
#                    without a regression clears the last night's samples. A failed push is
#                    logged; the exit status stays the verdict's, and the alert
#                    AblationdNightlyVerdictMissing fires when no verdict arrives for two days.
#   The verdict needs python3.
#
# Exit status (non-zero fails the unit):
#   0  no regression (or the first night: nothing to compare with)
#   1  regression: confirmed by its rerun (compare's text is kept beside the report for reading;
#      a slowdown that compare flags but the rerun does not confirm is logged, not failed)
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

# The ids of the runs tagged $1, newest first.
nightly_runs_tagged() {
  local saved=$TAG
  TAG=$1
  nightly_runs
  TAG=$saved
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
      log "compare: run $current is significantly slower than run $previous" \
        "(${THRESHOLD:+threshold $THRESHOLD, }details in $stem-compare.txt); the verdict decides"
      ;;
    *) die "ablation-client compare $previous $current failed (exit $compare_status)" ;;
  esac
fi

# ---- the verdict: candidates from the series, each confirmed (or not) by a rerun.
command -v python3 >/dev/null || die "the verdict needs python3"
threshold_fraction=0
if [[ -n ${THRESHOLD:-} ]]; then threshold_fraction=$(python3 -c 'import sys; print(float(sys.argv[1].rstrip("%")) / 100)' "$THRESHOLD"); fi
history_json=$("$client" -q history '*' --in-run "$current" --tag "$TAG" --format json) ||
  die "ablation-client history '*' --in-run $current failed"
# One line per candidate: variant dtype m n k regime device fingerprint baseline tonight change limit
candidates=$(python3 -c '
import json, sys
doc = json.loads(sys.argv[1]); run = sys.argv[2]; floor = float(sys.argv[3])
if doc.get("kind") != "history":
    sys.exit("not a history: %r" % doc.get("kind"))
for s in doc["items"]:
    points = s.get("points") or []
    newest = s.get("newest") or {}
    if not points or str(points[-1]["run_id"]) != run or not newest.get("candidate"):
        continue
    change, limit = newest["relative_change"], max(newest["threshold"], floor)
    if change < limit:
        continue  # faster, or within the series spread and THRESHOLD
    shape = s["shape"]
    print(s["variant"], s["dtype"], shape["m"], shape["n"], shape["k"], s["regime"] or "none",
          s["device_uuid"] or "none", s["hardware_fingerprint"] or "none",
          newest["baseline_median_ms"], points[-1]["median_ms"], change, limit)
' "$history_json" "$current" "$threshold_fraction") || die "cannot read the history the client printed"

verdict_rows=()
confirmed=0
while read -r variant dtype m n k regime device fingerprint baseline tonight change limit; do
  [[ -n $variant ]] || continue
  log "candidate: $variant $dtype ${m}x${n}x${k} ($regime) tonight $tonight ms against $baseline ms; rerunning"
  rerun_args=(run --variant "$variant" --dtype "$dtype" --shape "${m}x${n}x${k}" --tag "$TAG-rerun")
  if [[ $regime != none ]]; then rerun_args+=(--regime "$regime"); fi
  rerun_status=0
  "$client" -q "${rerun_args[@]}" >/dev/null || rerun_status=$?
  rerun_id=""
  if ((rerun_status == 0)); then
    rerun_id=$(nightly_runs_tagged "$TAG-rerun" | head -n1 | cut -d' ' -f1)
  fi
  rerun_median=""
  rerun_json="{}"
  if [[ -n $rerun_id ]]; then
    rerun_json=$("$client" -q history "$variant" --dtype "$dtype" --shape "${m}x${n}x${k}" \
      --in-run "$rerun_id" --format json) || rerun_json="{}"
    rerun_median=$(python3 -c '
import json, sys
doc = json.loads(sys.argv[1])
for s in doc.get("items", []):
    if (s["hardware_fingerprint"] or "none") != sys.argv[3]:
        continue
    for p in s.get("points", []):
        if str(p["run_id"]) == sys.argv[2]:
            print(p["median_ms"])
' "$rerun_json" "$rerun_id" "$fingerprint" 2>/dev/null | head -n1) || rerun_median=""
  fi
  row=$(python3 -c '
import json, sys
v, d, m, n, k, regime, device, fp, base, tonight, change, limit, rerun_id, rerun = sys.argv[1:]
row = {"variant": v, "dtype": d, "shape": "%sx%sx%s" % (m, n, k), "regime": regime,
       "device_uuid": device, "hardware_fingerprint": fp, "baseline_median_ms": float(base),
       "median_ms": float(tonight), "relative_change": float(change), "threshold": float(limit),
       "rerun_id": int(rerun_id) if rerun_id else None,
       "rerun_median_ms": float(rerun) if rerun else None}
row["rerun_relative_change"] = (float(rerun) / float(base) - 1) if rerun else None
row["confirmed"] = bool(rerun) and row["rerun_relative_change"] >= float(limit)
print(json.dumps(row))
' "$variant" "$dtype" "$m" "$n" "$k" "$regime" "$device" "$fingerprint" "$baseline" "$tonight" \
    "$change" "$limit" "$rerun_id" "$rerun_median")
  verdict_rows+=("$row")
  if [[ $row == *'"confirmed": true'* ]]; then
    confirmed=$((confirmed + 1))
    log "REGRESSION confirmed by rerun $rerun_id: $variant $dtype ${m}x${n}x${k} ($regime) $rerun_median ms against $baseline ms"
  elif [[ -z $rerun_median ]]; then
    log "not confirmed: the rerun of $variant $dtype ${m}x${n}x${k} failed (exit $rerun_status); see the daemon's log"
  else
    log "not confirmed: the rerun $rerun_id of $variant $dtype ${m}x${n}x${k} measured $rerun_median ms (a one-night outlier)"
  fi
done <<<"$candidates"

verdict=${VERDICT_FILE:-$stem-verdict.json}
vtmp=$(mktemp "$(dirname "$verdict")/.verdict.XXXXXX")
trap 'rm -f "$tmp" "$vtmp"' EXIT
printf '%s\n' "${verdict_rows[@]}" | python3 -c '
import json, sys, time
rows = [json.loads(line) for line in sys.stdin if line.strip()]
confirmed = [r for r in rows if r["confirmed"]]
json.dump({"schema_version": 1, "kind": "nightly_verdict", "run_id": int(sys.argv[1]),
           "previous_run_id": int(sys.argv[2]) if sys.argv[2] else None, "tag": sys.argv[3],
           "regime": sys.argv[4], "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
           "verdict": "regression" if confirmed else "ok", "candidates": len(rows),
           "confirmed": len(confirmed), "items": rows}, sys.stdout, indent=2)
print()
' "$current" "$previous" "$TAG" "$current_regime" >"$vtmp" || die "cannot write the verdict"
chmod 0644 "$vtmp"
mv -f "$vtmp" "$verdict"
if [[ -z ${VERDICT_FILE:-} ]]; then ln -sfn "$(basename "$verdict")" "$REPORT_DIR/latest-verdict.json"; fi
log "verdict: $verdict ($confirmed confirmed of ${#verdict_rows[@]} candidates)"

if [[ -n ${METRICS_TEXTFILE:-} || -n ${PUSHGATEWAY_URL:-} ]]; then
  mdir=$(dirname "${METRICS_TEXTFILE:-$verdict}")
  mtmp=$(mktemp "$mdir/.ablationd_nightly.XXXXXX") ||
    die "cannot write beside ${METRICS_TEXTFILE:-the verdict} (the metrics text)"
  python3 -c '
import json, sys
doc = json.load(open(sys.argv[1]))
def esc(v):
    return str(v).replace("\\", "\\\\").replace("\"", "\\\"").replace("\n", "\\n")
print("# HELP ablationd_regressions A nightly regression confirmed by its rerun (1), per item; none when the last night had none.")
print("# TYPE ablationd_regressions gauge")
for r in doc["items"]:
    if r["confirmed"]:
        print("ablationd_regressions{variant=\"%s\",shape=\"%s\",dtype=\"%s\",device=\"%s\",regime=\"%s\"} 1"
              % tuple(esc(r[k]) for k in ("variant", "shape", "dtype", "device_uuid", "regime")))
print("# HELP ablationd_nightly_verdict_timestamp_seconds When the last nightly verdict was written.")
print("# TYPE ablationd_nightly_verdict_timestamp_seconds gauge")
print("ablationd_nightly_verdict_timestamp_seconds{tag=\"%s\"} %d" % (esc(doc["tag"]), int(__import__("time").time())))
print("# HELP ablationd_nightly_candidates Candidates of the last nightly verdict, confirmed or not.")
print("# TYPE ablationd_nightly_candidates gauge")
print("ablationd_nightly_candidates{tag=\"%s\"} %d" % (esc(doc["tag"]), doc["candidates"]))
' "$verdict" >"$mtmp" || { rm -f "$mtmp"; die "cannot write the metrics text"; }
  chmod 0644 "$mtmp"
  if [[ -n ${PUSHGATEWAY_URL:-} ]]; then
    instance=${ABLATION_SERVER:-127.0.0.1:50051}
    if python3 -c '
import sys, urllib.parse, urllib.request
base, instance, path = sys.argv[1].rstrip("/"), sys.argv[2], sys.argv[3]
url = "%s/metrics/job/ablationd_nightly/instance/%s" % (base, urllib.parse.quote(instance, safe=""))
req = urllib.request.Request(url, data=open(path, "rb").read(), method="PUT",
                             headers={"Content-Type": "text/plain; version=0.0.4"})
urllib.request.urlopen(req, timeout=10).read()
' "$PUSHGATEWAY_URL" "$instance" "$mtmp" 2>"$mtmp.err"; then
      log "metrics: pushed to $PUSHGATEWAY_URL (job ablationd_nightly, instance $instance)"
    else
      log "error: the push to $PUSHGATEWAY_URL failed: $(tail -n 1 "$mtmp.err"); the verdict stands"
    fi
    rm -f "$mtmp.err"
  fi
  if [[ -n ${METRICS_TEXTFILE:-} ]]; then
    mv -f "$mtmp" "$METRICS_TEXTFILE"
    log "metrics: $METRICS_TEXTFILE"
  else
    rm -f "$mtmp"
  fi
fi

if ((confirmed)); then regression=1; fi
if ((regression)); then exit 1; fi
if ((sweep_status)); then
  log "failing the unit: run $current has failed measurements or did not succeed"
  exit 3
fi
exit 0
