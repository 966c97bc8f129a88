#!/usr/bin/env bash
# run_fuzz.sh FUZZER SEED_CORPUS SECONDS [MAX_LEN]: runs one libFuzzer target for SECONDS, inputs
# of at most MAX_LEN bytes (4096 unless given), over a copy of its seed corpus (libFuzzer adds
# what it finds to the directory it is given). A crash, leak or timeout fails the test, with the
# input that caused it kept beside the copy.
set -euo pipefail
fuzzer=$(realpath "$1") seeds=$(realpath -m "$2") seconds=$3 max_len=${4:-4096}
work=$(mktemp -d "${TMPDIR:-/tmp}/fuzz-$(basename "$fuzzer")-XXXXXX")
mkdir -p "$work/corpus"
[[ -d $seeds ]] && cp -r "$seeds"/. "$work/corpus/"
cd "$work"
set +e
"$fuzzer" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len="$max_len" \
  -print_final_stats=1 corpus 2>&1 | grep -E 'stat::|ERROR|crash|Done|BINGO|==' | tail -20
rc=${PIPESTATUS[0]}
if ((rc == 0)); then rm -rf "$work"; else echo "fuzz: failed; inputs kept in $work"; fi
exit "$rc"
