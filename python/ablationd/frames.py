"""API messages -> pandas DataFrames. Pure functions of the messages, so that they are the same
whether the rows came from GetRun or QueryMeasurements (and testable without a daemon)."""

from __future__ import annotations

import math
from typing import Iterable, Mapping, Optional

import pandas as pd

from ablationd._proto import ablation_pb2, enum_word, report_pb2

# One row per measurement (a run has one per item and round). Unset numbers are NaN, never 0:
# a GPU without NVML has no clocks, not clocks of 0 MHz.
MEASUREMENT_COLUMNS = [
    "run_id", "measurement_id", "created", "device_uuid", "device_name", "variant", "dtype",
    "m", "n", "k", "round", "sequence", "status", "regime", "conditioned", "window",
    "median_ms", "tflops", "tflops_per_ghz", "peak_share", "noise", "samples",
    # The variant alone at the cap (schema v18): not its window's figure, which depends on
    # what it was interleaved with (window_members > 1).
    "window_members", "solo_tflops", "solo_median_ms", "solo_noise", "solo_sm_mhz",
    "solo_peak_share", "solo_joules_per_tflop", "solo_power_w", "solo_energy_j",
    "solo_conditioned", "library_pick", "library_config",
    # The entry a dispatching variant ran at the row's shape (a per-bucket rung's pick; schema
    # v22); "" for a variant of its own launch.
    "dispatched_to",
    "sm_clock_mhz_mean", "sm_clock_mhz_min", "throttled_share", "low_clock_share",
    "median_cycles", "median_sm_mhz", "wall_seconds", "sampled_gpu_seconds", "worker_seconds",
    "setup_seconds", "warmup_seconds", "sampling_seconds", "verify_seconds", "inputs_reused",
    "settle_seconds", "cool_seconds", "l2", "clock_policy", "verification", "regime_note",
    "error",
]

SAMPLE_COLUMNS = [
    "measurement_id", "run_id", "variant", "dtype", "m", "n", "k", "round", "sample", "ms",
    "cycles", "mhz",
]

REPORT_COLUMNS = [
    "section", "rung", "what", "variant", "dtype", "m", "n", "k", "status", "rounds",
    "failed_rounds", "tflops", "median_ms", "samples", "cublas_share", "vs", "change",
    "change_low", "change_high", "within_noise", "change_basis", "cycles_change",
    "low_clock_share", "round_spread",
    # Alone at the cap (solo spans) and against both cuBLAS baselines; the at-cap change beside the
    # paired one, with what decided it.
    "shared_window", "solo_tflops", "solo_sm_mhz", "solo_joules_per_tflop", "share_basis",
    "cublas_best_share", "at_cap_change", "at_cap_source",
]

# One row per run (Client.runs). Times are UTC timestamps, NaT where not yet (a queued run has
# not started); ok and failed are counted by the daemon on every read.
RUN_COLUMNS = [
    "run_id", "state", "kind", "created", "started", "finished", "tags", "planned", "ok",
    "failed", "rounds", "regime", "paired", "device_index", "device_uuid", "device_name",
    "hardware_fingerprint", "host_name", "node_labels", "requested_by", "cancelled_by",
    "clock_policy", "daemon_version", "git_revision", "kernel_revision", "order_seed", "error",
]

_NAN = math.nan


def _optional(message, field):
    return getattr(message, field) if message.HasField(field) else _NAN


def _share(part_message, part_field, whole):
    if not part_message.HasField(part_field) or whole <= 0:
        return _NAN
    return getattr(part_message, part_field) / whole


def _solo_columns(m):
    """window_members through dispatched_to of MEASUREMENT_COLUMNS: NaN where no solo span."""
    s = m.solo
    if not s.solo_measured:
        solo = [_NAN] * 8 + [None]
    else:
        solo = [s.solo_tflops, s.solo_median_ms, s.solo_noise, _optional(s, "solo_sm_mhz"),
                _optional(s, "solo_peak_share"), _optional(s, "solo_joules_per_tflop"),
                _optional(s, "solo_power_w"), _optional(s, "solo_energy_j"), s.solo_conditioned]
    return [m.window_members, *solo, m.library.library_pick, m.library.library_config,
            m.dispatched_to]


def _frame(rows, columns, ints=()):
    frame = pd.DataFrame(rows, columns=columns)
    for c in ints:
        frame[c] = frame[c].astype("int64")
    return frame


def _time(ms: int):
    return pd.Timestamp(ms, unit="ms", tz="UTC") if ms else pd.NaT


def runs_frame(runs: Iterable["ablation_pb2.Run"]) -> pd.DataFrame:
    """One row per run (RUN_COLUMNS), in the order given (Client.runs: newest first)."""
    rows = []
    for r in runs:
        d = r.device
        rows.append([
            r.id, enum_word(ablation_pb2.RunState, r.state), enum_word(ablation_pb2.RunKind, r.kind),
            _time(r.created_at_ms), _time(r.started_at_ms), _time(r.finished_at_ms), list(r.tags),
            r.planned, r.ok, r.failed, r.rounds, enum_word(ablation_pb2.Regime, r.regime),
            r.paired, d.index, d.uuid, d.name, d.hardware_fingerprint, r.host_name, r.node_labels,
            r.requested_by, r.cancelled_by, r.clock_policy, r.daemon_version, r.git_revision,
            r.kernel_revision, r.order_seed, r.error,
        ])
    frame = _frame(rows, RUN_COLUMNS,
                   ints=("run_id", "planned", "ok", "failed", "rounds", "device_index"))
    for c in ("created", "started", "finished"):
        frame[c] = pd.to_datetime(frame[c], utc=True)
    frame["order_seed"] = frame["order_seed"].astype("uint64")
    return frame


def measurements_frame(measurements: Iterable["ablation_pb2.Measurement"],
                       runs: Optional[Mapping[int, "ablation_pb2.Run"]] = None) -> pd.DataFrame:
    """One row per measurement. `runs`: {run id: Run} for the device columns (missing: "")."""
    runs = runs or {}
    rows = []
    for m in measurements:
        run = runs.get(m.run_id)
        stats, telemetry = m.stats, m.telemetry
        rows.append([
            m.run_id, m.id, pd.Timestamp(m.created_at_ms, unit="ms", tz="UTC"),
            run.device.uuid if run else "", run.device.name if run else "",
            m.variant, m.dtype, m.shape.m, m.shape.n, m.shape.k, m.round, m.sequence,
            enum_word(ablation_pb2.MeasurementStatus, m.status),
            # The regime every figure was taken in, and whether its condition held (schema v11);
            # rows of one window were measured interleaved, sample by sample.
            enum_word(ablation_pb2.Regime, m.regime), m.conditioned, m.window,
            stats.median_ms if m.status == ablation_pb2.MEASUREMENT_STATUS_OK else _NAN,
            m.tflops if m.status == ablation_pb2.MEASUREMENT_STATUS_OK else _NAN,
            _optional(m, "tflops_per_ghz"), _optional(m, "peak_share"),
            stats.noise if stats.samples else _NAN,
            stats.samples,
            *_solo_columns(m),
            _optional(telemetry, "sm_clock_mhz_mean"), _optional(telemetry, "sm_clock_mhz_min"),
            _share(telemetry, "throttled_samples", stats.samples),
            _share(stats, "low_clock_samples", stats.samples),
            _optional(stats, "median_cycles"), _optional(stats, "median_sm_mhz"),
            m.wall_seconds, stats.total_seconds if stats.samples else _NAN,
            # Where the wall time went (Measurement.cost, schema v10); NaN where not measured.
            *(_optional(m.cost, f) for f in ("worker_seconds", "setup_seconds", "warmup_seconds",
                                             "sampling_seconds", "verify_seconds",
                                             "inputs_reused", "settle_seconds", "cool_seconds")),
            enum_word(ablation_pb2.L2Mode, m.l2), m.clock_policy,
            enum_word(ablation_pb2.VerificationOutcome, m.verification_outcome), m.regime_note,
            m.error,
        ])
    frame = _frame(rows, MEASUREMENT_COLUMNS,
                   ints=("run_id", "measurement_id", "m", "n", "k", "round", "sequence", "samples",
                         "window", "window_members"))
    frame["created"] = pd.to_datetime(frame["created"], utc=True)
    return frame


def samples_frame(measurements: Iterable["ablation_pb2.Measurement"]) -> pd.DataFrame:
    """The raw samples, long: one row per sample of each measurement, in measured order.
    cycles and mhz are NaN where the GPU could not tell (they come from %clock64 and
    %globaltimer around each sample)."""
    rows = []
    for m in measurements:
        cycles, mhz = list(m.sample_cycles), list(m.sample_sm_mhz)
        for i, ms in enumerate(m.sample_ms):
            rows.append([
                m.id, m.run_id, m.variant, m.dtype, m.shape.m, m.shape.n, m.shape.k, m.round, i, ms,
                cycles[i] if i < len(cycles) else _NAN, mhz[i] if i < len(mhz) else _NAN,
            ])
    return _frame(rows, SAMPLE_COLUMNS,
                  ints=("measurement_id", "run_id", "m", "n", "k", "round", "sample"))


def report_frame(report: "report_pb2.Report", missing: bool = False) -> pd.DataFrame:
    """The rows of a report (report.proto's Report) that the run measured, one per rung (and
    shape), section by section: ok, failed and skipped rows, as the report's tables show them.

    A report lays out every rung of every section its preset names, and a rung the run did not
    measure is a row of status "missing" (a ladder-a run has rows for Architecture's and Ladder
    B's rungs too): missing=True keeps those rows, to see what the run left out."""
    rows = []
    for section in report.sections:
        for r in section.rows:
            if not missing and r.status == report_pb2.ROW_STATUS_MISSING:
                continue
            has_change = r.HasField("change")
            has_interval = has_change and r.change.HasField("interval")
            rows.append([
                section.id, r.rung, r.what, r.variant, r.dtype, r.shape.m, r.shape.n, r.shape.k,
                enum_word(report_pb2.RowStatus, r.status), r.rounds, r.failed_rounds,
                _optional(r, "tflops"), _optional(r, "median_ms"), _optional(r, "samples"),
                _optional(r, "cublas_share"), r.vs, r.change.estimate if has_change else _NAN,
                r.change.interval.low if has_interval else _NAN,
                r.change.interval.high if has_interval else _NAN,
                r.change.within_noise if has_change else None,
                # rounds: a bootstrap over rounds; samples: one round, drift not included.
                enum_word(report_pb2.ChangeBasis, r.change.basis) if has_change else "",
                r.cycles_change.estimate if r.HasField("cycles_change") else _NAN,
                _optional(r, "low_clock_share"), _optional(r, "round_spread"),
                r.shared_window, r.solo.tflops if r.HasField("solo") else _NAN,
                _optional(r.solo, "sm_mhz"), _optional(r.solo, "joules_per_tflop"), r.share_basis,
                _optional(r, "cublas_best_share"),
                r.at_cap_change.estimate if r.HasField("at_cap_change") else _NAN,
                r.at_cap_source,
            ])
    return _frame(rows, REPORT_COLUMNS, ints=("m", "n", "k", "rounds", "failed_rounds"))
