-- The dashboard queries of db/schema.md, each timed by tests/load/dashboard_timing.sh.
SELECT count(*) FROM latest_result;
SELECT variant, tflops, noise, device_name, time FROM latest_result WHERE dtype = 'bf16' AND m = 4096 AND n = 4096 AND k = 4096 ORDER BY tflops DESC;
SELECT run_started_at_ms / 1000 AS time, tflops FROM nightly_history WHERE variant = 'abl_v7' AND dtype = 'bf16' AND m = 4096 AND n = 4096 AND k = 4096 ORDER BY run_id;
SELECT count(*) FROM nightly_change;
SELECT variant, dtype, m, n, k, previous_tflops, tflops, round(100 * slowdown, 1) AS pct_slower FROM nightly_change WHERE slowdown > 0.03 ORDER BY slowdown DESC;
SELECT run_id, measured, planned, ok, failed FROM run_summary WHERE state = 'running';
SELECT run_id, time, state, ok, failed, best_tflops, git_revision FROM run_summary WHERE ',' || tags || ',' LIKE '%,nightly,%' ORDER BY run_id DESC LIMIT 14;
SELECT * FROM run_summary ORDER BY run_id DESC LIMIT 50;
SELECT variant, count(*) AS n, avg(tflops) AS tflops FROM measurements WHERE status = 'ok' AND dtype = 'bf16' AND m = 4096 AND n = 4096 AND k = 4096 AND run_id IN (SELECT run_id FROM run_tags WHERE tag = 'nightly') AND created_at_ms >= 1700000000000 + 1900 * 3600000 GROUP BY variant ORDER BY tflops DESC;
