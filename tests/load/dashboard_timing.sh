#!/usr/bin/env bash
# Times each dashboard query of tests/load/dashboard_queries.sql on a database (read-only, as a
# dashboard reads it) and prints its query plan: tests/load/dashboard_timing.sh DB [--plan]
set -euo pipefail
db=${1:?usage: dashboard_timing.sh DB [--plan]}
plan=${2:-}
queries=$(dirname "$0")/dashboard_queries.sql
grep -v '^--' "$queries" | while IFS= read -r sql; do
  [[ -z $sql ]] && continue
  start=$(date +%s%N)
  rows=$(sqlite3 -readonly "$db" "$sql" | wc -l)
  end=$(date +%s%N)
  printf '%8.1f ms %6d rows  %s\n' "$(((end - start) / 10000))e-2" "$rows" "${sql:0:110}"
  if [[ $plan == --plan ]]; then sqlite3 -readonly "$db" "EXPLAIN QUERY PLAN $sql" | sed 's/^/      /'; fi
done
