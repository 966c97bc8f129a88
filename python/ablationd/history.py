"""A series' history as typed rows: what ``ablation-client history`` shows, from the GetHistory
RPC, with its change points (E-divisive means, server/core/history) and the newest night against
the segment before it.

    series = daemon.history("L1_R1_s3", shape="4096", tag="nightly")
    for s in series:
        for c in s.change_points:
            print(s.variant, c.time, f"{c.relative_change:+.1%}")
        s.frame()   # the points as a DataFrame, change points marked
"""

import dataclasses
import datetime
from typing import List, Optional, Tuple

from ablationd._proto import ablation_pb2, enum_word, parse_shape


def _time(ms):
    return datetime.datetime.fromtimestamp(ms / 1000, tz=datetime.timezone.utc)


@dataclasses.dataclass(frozen=True)
class HistoryPoint:
    run_id: int
    measurement_id: int
    time: datetime.datetime  # the run's start (UTC)
    median_ms: float
    noise: float
    tflops: float
    change_point: bool  # a change point starts at this point


@dataclasses.dataclass(frozen=True)
class ChangePoint:
    index: int  # the first point of the new segment (into Series.points)
    run_id: int  # that point's run
    time: datetime.datetime
    before_median_ms: float  # mean of the medians of the segment before
    after_median_ms: float  # ... and of the segment from here
    relative_change: float  # after / before - 1: positive is slower
    p_value: float  # of the permutation test


@dataclasses.dataclass(frozen=True)
class NewestShift:
    candidate: bool  # |relative_change| >= threshold: for the nightly job's rerun to confirm
    baseline_median_ms: float
    relative_change: float  # newest / baseline - 1: positive is slower
    threshold: float
    baseline_points: int


@dataclasses.dataclass(frozen=True)
class Series:
    """One (hardware fingerprint, variant, dtype, shape, regime, figures) on one daemon: rows of
    different fingerprints, or of two nodes, are never mixed."""
    hardware_fingerprint: str
    variant: str
    dtype: str
    shape: Tuple[int, int, int]
    regime: str  # sustained, burst or locked
    # "solo": the variant alone at the cap (what it gives whatever it was measured beside);
    # "window": its windows' figure (burst, runs without solo spans, rows before schema v18)
    figures: str
    device_name: str
    device_uuid: str
    points: List[HistoryPoint]
    change_points: List[ChangePoint]
    newest: NewestShift
    # The daemon whose points these are, "host/abcd1234", in a fleet's history ('' from one
    # daemon; its points name it): a node's spread against another of its model is no change
    # over time, so each node is a series of its own.
    node: str = ""

    def frame(self):
        """The points as a pandas DataFrame (time, run_id, measurement_id, median_ms, noise,
        tflops, change_point), oldest first."""
        import pandas as pd
        return pd.DataFrame([dataclasses.asdict(p) for p in self.points],
                            columns=[f.name for f in dataclasses.fields(HistoryPoint)])


def history_request(variant, dtype=None, shape=None, device=None, regime=None, since=None,
                    tag=None, run=None):
    """The HistoryRequest of Client.history's arguments."""
    from ablationd._calls import ms
    if not variant:
        raise ValueError("history: name a variant (a name, short name or glob)")
    request = ablation_pb2.HistoryRequest(variant_glob=variant, dtype=dtype or "",
                                          device="" if device is None else str(device),
                                          since_ms=ms(since), tag=tag or "",
                                          run_id=int(run or 0))
    if shape is not None:
        request.shape.CopyFrom(parse_shape(shape))
    if regime:
        name = "REGIME_" + str(regime).upper()
        if name not in ablation_pb2.Regime.keys() or name == "REGIME_UNSPECIFIED":
            raise ValueError(f"regime: {regime!r} is not sustained, burst or locked")
        request.regime = ablation_pb2.Regime.Value(name)
    return request


def series_of(response) -> List[Series]:
    """Typed Series of a HistoryResponse."""
    out = []
    for s in response.series:
        points = [HistoryPoint(p.run_id, p.measurement_id, _time(p.time_ms), p.median_ms, p.noise,
                               p.tflops, p.change_point) for p in s.points]
        changes = []
        for c in s.change_points:
            at: Optional[HistoryPoint] = points[c.index] if 0 <= c.index < len(points) else None
            changes.append(ChangePoint(c.index, at.run_id if at else 0,
                                       at.time if at else _time(0), c.before_median_ms,
                                       c.after_median_ms, c.relative_change, c.p_value))
        n = s.newest
        out.append(Series(s.hardware_fingerprint, s.variant, s.dtype,
                          (s.shape.m, s.shape.n, s.shape.k), enum_word(ablation_pb2.Regime, s.regime),
                          s.figures or "window", s.device_name, s.device_uuid, points, changes,
                          NewestShift(n.candidate, n.baseline_median_ms, n.relative_change,
                                      n.threshold, n.baseline_points),
                          s.points[0].node if s.points else ""))
    return out
