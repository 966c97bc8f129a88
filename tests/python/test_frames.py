"""ablationd.frames on messages built here: columns, NaN for what the daemon did not know,
shares from counts, the long sample layout. No daemon needed."""

import math

import pandas as pd
import pytest

import ablationd
from ablation.v1 import ablation_pb2, report_pb2
from ablationd import frames
from ablationd._proto import enum_word, parse_shape


def measurement(**kw):
    m = ablation_pb2.Measurement(id=5, run_id=2, variant="abl_L1_R1_bl0_s3_sw1", dtype="bf16",
                                 status=ablation_pb2.MEASUREMENT_STATUS_OK, tflops=612.5,
                                 created_at_ms=1_700_000_000_000, round=1, sequence=7,
                                 wall_seconds=1.25, l2=ablation_pb2.L2_MODE_COLD_ROTATED)
    m.shape.m, m.shape.n, m.shape.k = 4096, 4096, 2048
    m.stats.median_ms, m.stats.noise, m.stats.samples = 0.5, 0.004, 10
    for key, value in kw.items():
        setattr(m, key, value)
    return m


def test_one_row_per_measurement_with_the_run_device():
    m = measurement()
    m.telemetry.sm_clock_mhz_mean, m.telemetry.sm_clock_mhz_min = 1950.0, 1800.0
    m.telemetry.throttled_samples = 3
    m.stats.low_clock_samples = 1
    m.stats.median_cycles, m.stats.median_sm_mhz = 975000.0, 1950.0
    run = ablation_pb2.Run(id=2)
    run.device.uuid, run.device.name = "GPU-1", "H200"
    df = ablationd.measurements_frame([m], {2: run})
    assert list(df.columns) == frames.MEASUREMENT_COLUMNS
    row = df.iloc[0]
    assert (row.run_id, row.measurement_id, row.device_uuid, row.device_name) == (2, 5, "GPU-1", "H200")
    assert (row.m, row.n, row.k, row["round"], row.status) == (4096, 4096, 2048, 1, "ok")
    assert row.created == pd.Timestamp(1_700_000_000_000, unit="ms", tz="UTC")
    assert (row.median_ms, row.tflops, row.noise) == (0.5, 612.5, 0.004)
    assert (row.sm_clock_mhz_mean, row.sm_clock_mhz_min) == (1950.0, 1800.0)
    assert row.throttled_share == pytest.approx(0.3)
    assert row.low_clock_share == pytest.approx(0.1)
    assert row.l2 == "cold_rotated"
    assert df["created"].dt.tz is not None


def test_the_cost_columns_say_where_the_wall_time_went():
    m = measurement()
    m.stats.total_seconds = 0.9
    m.cost.worker_seconds, m.cost.setup_seconds = 1.1, 0.002
    m.cost.warmup_seconds, m.cost.sampling_seconds = 0.005, 1.05
    m.cost.inputs_reused = True
    row = ablationd.measurements_frame([m]).iloc[0]
    assert (row.wall_seconds, row.sampled_gpu_seconds) == (1.25, 0.9)
    assert (row.worker_seconds, row.setup_seconds) == (1.1, 0.002)
    assert (row.warmup_seconds, row.sampling_seconds) == (0.005, 1.05)
    assert bool(row.inputs_reused) is True
    assert math.isnan(row.verify_seconds)  # not asked to verify
    old = ablationd.measurements_frame([measurement()]).iloc[0]  # a row from before schema v10
    assert math.isnan(old.setup_seconds) and math.isnan(old.inputs_reused)


def test_the_solo_columns_are_the_variant_alone_at_the_cap_beside_its_window():
    m = measurement(window_members=3)
    m.solo.solo_measured, m.solo.solo_tflops, m.solo.solo_median_ms = True, 560.0, 0.55
    m.solo.solo_sm_mhz, m.solo.solo_joules_per_tflop, m.solo.solo_power_w = 1480.0, 1.25, 700.0
    m.solo.solo_conditioned = True
    m.library.library_pick, m.library.library_config = "heuristic", "algo 66, tile 256x128"
    row = ablationd.measurements_frame([m]).iloc[0]
    assert (row.tflops, row.window_members) == (612.5, 3)  # its window's, shared by three
    assert (row.solo_tflops, row.solo_sm_mhz, row.solo_joules_per_tflop) == (560.0, 1480.0, 1.25)
    assert (row.solo_power_w, bool(row.solo_conditioned)) == (700.0, True)
    assert math.isnan(row.solo_energy_j)  # not given
    assert (row.library_pick, row.library_config) == ("heuristic", "algo 66, tile 256x128")
    burst = ablationd.measurements_frame([measurement()]).iloc[0]  # no solo span
    for column in ("solo_tflops", "solo_median_ms", "solo_sm_mhz", "solo_joules_per_tflop"):
        assert math.isnan(burst[column]), column


def test_a_dispatching_variant_s_row_names_the_entry_it_ran():
    m = measurement(variant="sm90_s12_buckets")
    m.dispatched_to = "sm90_h12_rows64_n64_unclustered"
    assert ablationd.measurements_frame([m]).iloc[0].dispatched_to == m.dispatched_to
    assert ablationd.measurements_frame([measurement()]).iloc[0].dispatched_to == ""


def test_what_was_not_measured_is_nan_never_zero():
    m = measurement(status=ablation_pb2.MEASUREMENT_STATUS_FAILED, error="worker died")
    row = ablationd.measurements_frame([m]).iloc[0]
    assert row.status == "failed" and row.error == "worker died"
    for column in ("median_ms", "tflops", "sm_clock_mhz_mean", "sm_clock_mhz_min",
                   "throttled_share", "low_clock_share", "median_cycles", "median_sm_mhz"):
        assert math.isnan(row[column]), column
    assert row.device_uuid == ""  # no run given


def test_empty_frames_keep_their_columns_and_types():
    df = ablationd.measurements_frame([])
    assert list(df.columns) == frames.MEASUREMENT_COLUMNS and len(df) == 0
    assert df["run_id"].dtype == "int64"
    assert list(ablationd.samples_frame([]).columns) == frames.SAMPLE_COLUMNS
    assert list(ablationd.report_frame(report_pb2.Report()).columns) == frames.REPORT_COLUMNS
    runs = ablationd.runs_frame([])
    assert list(runs.columns) == frames.RUN_COLUMNS and runs["run_id"].dtype == "int64"


def test_samples_are_long_with_nan_where_the_gpu_could_not_tell():
    m = measurement()
    m.sample_ms.extend([0.5, 0.6, 0.7])
    m.sample_cycles.extend([1000.0, 1100.0])  # one short: the last sample has no cycles
    m.sample_sm_mhz.extend([1900.0, 1950.0, 1980.0])
    df = ablationd.samples_frame([m])
    assert list(df.columns) == frames.SAMPLE_COLUMNS
    assert list(df["sample"]) == [0, 1, 2]
    assert list(df["ms"]) == [0.5, 0.6, 0.7]
    assert df["cycles"].iloc[1] == 1100.0 and math.isnan(df["cycles"].iloc[2])
    assert set(df["measurement_id"]) == {5} and set(df["round"]) == {1}


def test_report_rows_flatten_with_their_change_interval():
    report = report_pb2.Report()
    section = report.sections.add(id="ladder-a")
    row = section.rows.add(rung="A3", what="ldmatrix", variant="abl_L1_R1_bl0_s3_sw1",
                           dtype="bf16", status=report_pb2.ROW_STATUS_OK, tflops=600.0, vs="A1")
    row.shape.m = row.shape.n = row.shape.k = 4096
    row.change.estimate, row.change.within_noise = 0.12, False
    row.change.interval.low, row.change.interval.high = 0.10, 0.14
    row.change.basis = report_pb2.CHANGE_BASIS_ROUNDS
    row.rounds, row.round_spread = 3, 0.004
    section.rows.add(rung="A1", status=report_pb2.ROW_STATUS_MISSING)
    section.rows.add(rung="A2", status=report_pb2.ROW_STATUS_FAILED)
    # The rows the run measured (A2 failed, but was measured); the missing ones when asked for.
    assert ablationd.report_frame(report)["rung"].tolist() == ["A3", "A2"]
    df = ablationd.report_frame(report, missing=True)
    assert df["rung"].tolist() == ["A3", "A1", "A2"]
    a3, a1 = df.iloc[0], df.iloc[1]
    assert (a3.section, a3.rung, a3.status, a3.tflops, a3.vs) == ("ladder-a", "A3", "ok", 600.0, "A1")
    assert (a3.change, a3.change_low, a3.change_high, a3.within_noise) == (0.12, 0.10, 0.14, False)
    assert (a3.rounds, a3.change_basis, a3.round_spread) == (3, "rounds", 0.004)
    assert math.isnan(a3.cycles_change) and math.isnan(a3.low_clock_share)
    assert a1.status == "missing" and math.isnan(a1.tflops) and math.isnan(a1.change)


def test_shapes_and_enum_words():
    assert parse_shape("4096") == ablation_pb2.Shape(m=4096, n=4096, k=4096)
    assert parse_shape("64x128X256") == ablation_pb2.Shape(m=64, n=128, k=256)
    assert parse_shape((1, 2, 3)) == ablation_pb2.Shape(m=1, n=2, k=3)
    assert parse_shape(8) == ablation_pb2.Shape(m=8, n=8, k=8)
    for bad in ("4096x4096", "0", "ax2x3", (1, 2)):
        with pytest.raises(ValueError, match="is not MxNxK"):
            parse_shape(bad)
    assert enum_word(ablation_pb2.RunState, ablation_pb2.RUN_STATE_SUCCEEDED) == "succeeded"
    assert enum_word(ablation_pb2.RunState, ablation_pb2.RUN_STATE_UNSPECIFIED) == ""
    assert enum_word(report_pb2.RowStatus, report_pb2.ROW_STATUS_MISSING) == "missing"


def test_run_request_from_arguments():
    client = ablationd.Client("127.0.0.1:1")
    r = client.run_request(variants="L1_R1_s3", shapes=(64, 128, 256), tags="t", rounds=2,
                           lock_sm_clock="max", min_samples=20)
    assert list(r.variants) == ["L1_R1_s3"] and list(r.tags) == ["t"]
    assert list(r.shapes) == [ablation_pb2.Shape(m=64, n=128, k=256)]  # a tuple is one shape
    assert r.clocks.mode == ablation_pb2.CLOCK_MODE_LOCK and r.clocks.sm_mhz == "max"
    assert r.timing.min_samples == 20 and r.rounds == 2
    assert r.requested_by.endswith("(python)")
    assert len(client.run_request(shapes=["256", "512"]).shapes) == 2
    client.close()


def test_the_regime_and_the_clock_normalised_figures_are_columns():
    m = measurement(regime=ablation_pb2.REGIME_SUSTAINED, conditioned=True, window=3,
                    tflops_per_ghz=409.4, peak_share=0.82,
                    regime_note="settled after 4.25 s of GPU time: clock 1496 MHz")
    m.cost.settle_seconds = 1.5
    row = ablationd.measurements_frame([m]).iloc[0]
    assert (row.regime, bool(row.conditioned), row.window) == ("sustained", True, 3)
    assert (row.tflops_per_ghz, row.peak_share, row.settle_seconds) == (409.4, 0.82, 1.5)
    assert math.isnan(row.cool_seconds)  # no cool-down in the sustained regime
    assert row.regime_note.startswith("settled after")
    old = ablationd.measurements_frame([measurement()]).iloc[0]  # before schema v11
    assert old.regime == "" and math.isnan(old.tflops_per_ghz) and math.isnan(old.peak_share)


def test_run_request_names_the_regime_and_refuses_an_unknown_one():
    client = ablationd.Client("127.0.0.1:1")
    r = client.run_request(variants="cublas_bf16", regime="burst", unpaired=True,
                           burst_seconds=0.01)
    assert r.regime == ablation_pb2.REGIME_BURST and r.unpaired
    assert r.timing.burst_seconds == 0.01
    assert not r.timing.fresh_inputs
    assert client.run_request(variants="x", rounds=3, fresh_inputs=True).timing.fresh_inputs
    assert client.run_request(variants="x").regime == ablation_pb2.REGIME_UNSPECIFIED
    with pytest.raises(ValueError, match="regime: 'warm' is not sustained, burst or locked"):
        client.run_request(variants="x", regime="warm")
    client.close()


def test_one_row_per_run_with_times_and_the_device():
    run = ablation_pb2.Run(id=14, state=ablation_pb2.RUN_STATE_PARTIAL,
                           kind=ablation_pb2.RUN_KIND_ABLATION, created_at_ms=1_700_000_000_000,
                           started_at_ms=1_700_000_001_000, planned=8, ok=7, failed=1, rounds=2,
                           regime=ablation_pb2.REGIME_SUSTAINED, paired=True, host_name="gpu7",
                           requested_by="alice", order_seed=2**63 + 5)
    run.tags.extend(["nightly", "h200"])
    run.device.uuid, run.device.name = "GPU-1", "H200"
    run.device.hardware_fingerprint = "0123456789abcdef"
    queued = ablation_pb2.Run(id=15, state=ablation_pb2.RUN_STATE_QUEUED)
    df = ablationd.runs_frame([queued, run])
    assert list(df.columns) == frames.RUN_COLUMNS and df["run_id"].tolist() == [15, 14]
    row = df.iloc[1]
    assert (row.state, row.kind, row.regime, bool(row.paired)) == ("partial", "ablation",
                                                                 "sustained", True)
    assert (row.planned, row.ok, row.failed, row.rounds) == (8, 7, 1, 2)
    assert row.tags == ["nightly", "h200"]
    assert (row.device_uuid, row.device_name, row.hardware_fingerprint) == (
        "GPU-1", "H200", "0123456789abcdef")
    assert row.created == pd.Timestamp(1_700_000_000_000, unit="ms", tz="UTC")
    assert pd.isna(row.finished)  # not yet: NaT, never the epoch
    assert pd.isna(df.iloc[0].started) and df.iloc[0].state == "queued"
    assert row.order_seed == 2**63 + 5  # a uint64 seed kept whole
