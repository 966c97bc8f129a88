"""ablationd.Client.history and ablationd.aio's, against a real daemon with the fake worker:
twelve nightly-style runs of one variant, the last six 10% slower (the fake's once-file, as the
nightly job's tests use it), read back as typed Series with the change point at night 7."""

import asyncio
import datetime
import os
import tempfile

import pytest

import ablationd
import ablationd.aio
from ablation_testing import Daemon
from ablationd.history import ChangePoint, HistoryPoint, Series

VARIANT = "abl_L1_R1_bl0_s3_sw1"


@pytest.fixture(scope="module")
def nights():
    once = os.path.join(tempfile.mkdtemp(prefix="history-once."), "once")
    d = Daemon(env={"ABLATION_FAKE_ONCE": once})
    try:
        with ablationd.connect(d.address) as client:
            for night in range(12):
                if night == 6:  # from the seventh night on, every window 1/1.1 as fast
                    with open(once, "w") as f:
                        f.write(f"{VARIANT}=0.9090909 1000\n")
                summary = client.run(variants=["L1_R1_s3"], shapes=["256"], tags=["nightly"],
                                     regime="burst", burst_seconds=0.05)
                assert summary.state == "succeeded"
        yield d
    finally:
        d.stop()


def test_history_returns_typed_series_with_the_change_point(nights):
    with ablationd.connect(nights.address) as client:
        series = client.history("L1_R1_s3", tag="nightly")
    assert len(series) == 1
    s = series[0]
    assert isinstance(s, Series)
    assert (s.variant, s.dtype, s.shape, s.regime) == (VARIANT, "bf16", (256, 256, 256), "burst")
    assert len(s.hardware_fingerprint) == 16
    assert s.node == ""  # one daemon's series; a fleet's names its daemon (Series.node)
    assert len(s.points) == 12 and all(isinstance(p, HistoryPoint) for p in s.points)
    assert s.points[0].time.tzinfo == datetime.timezone.utc
    assert [p.change_point for p in s.points] == [i == 6 for i in range(12)]
    assert len(s.change_points) == 1
    c = s.change_points[0]
    assert isinstance(c, ChangePoint)
    assert c.index == 6 and c.run_id == s.points[6].run_id and c.time == s.points[6].time
    assert c.relative_change == pytest.approx(0.10, abs=0.01)
    assert c.after_median_ms > c.before_median_ms and 0 <= c.p_value <= 0.05
    assert not s.newest.candidate  # the newest night is like the seven before it
    frame = s.frame()
    assert list(frame.columns) == ["run_id", "measurement_id", "time", "median_ms", "noise",
                                   "tflops", "change_point"]
    assert frame["change_point"].sum() == 1 and len(frame) == 12


def test_history_filters_and_errors(nights):
    with ablationd.connect(nights.address) as client:
        assert client.history("L1_R1_s3", shape="512") == []
        assert len(client.history("L1_R1_s3", shape="256x256x256", regime="burst")) == 1
        with pytest.raises(ValueError, match="regime: 'fast' is not sustained, burst or locked"):
            client.history("L1_R1_s3", regime="fast")
        with pytest.raises(ValueError, match="name a variant"):
            client.history("")


def test_aio_history_gives_the_same_series(nights):
    async def read():
        async with await ablationd.aio.connect(nights.address) as client:
            return await client.history("L1_R1_s3", tag="nightly")

    series = asyncio.run(read())
    with ablationd.connect(nights.address) as client:
        assert series == client.history("L1_R1_s3", tag="nightly")


def test_a_fleet_series_names_its_node():
    """history.series_of names the daemon a fleet's series is of (its points' node)."""
    from ablation.v1 import ablation_pb2
    from ablationd.history import series_of
    response = ablation_pb2.HistoryResponse()
    for node in ("gpu-a/1111aaaa", "gpu-b/2222bbbb"):
        s = response.series.add(variant=VARIANT, hardware_fingerprint="fp")
        s.points.add(run_id=1, median_ms=1.0, node=node)
    assert [s.node for s in series_of(response)] == ["gpu-a/1111aaaa", "gpu-b/2222bbbb"]
