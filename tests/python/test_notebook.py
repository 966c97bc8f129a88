"""What a notebook adds to the client, against a real daemon with the fake worker: the plots of a
report (matplotlib, Agg), the progress bar driven by a run's and a watch's stream (tqdm and the
text line), and the asyncio client, whose answers are the blocking client's."""

import asyncio
import io
import subprocess
import time

import matplotlib
import matplotlib.container
import pytest

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402

import ablationd  # noqa: E402
import ablationd.aio  # noqa: E402
from ablation.v1 import ablation_pb2  # noqa: E402
from ablation_testing import Daemon, required_env  # noqa: E402
from ablationd import progress  # noqa: E402


@pytest.fixture(scope="module")
def reports(daemon):
    """Two runs of ladder B (2 rounds: intervals), as their reports."""
    with ablationd.connect(daemon.address) as d:
        a = d.run(preset="ladder-b", shapes=["256"], rounds=2).run_id
        b = d.run(preset="ladder-b", shapes=["256"], rounds=2).run_id
        return d.report(a), d.report(b)


def _ladder_b(report):
    section = next(s for s in report.sections if s.id == "ladder-b")
    rungs = [r for r in section.rows if not r.baseline]
    cublas = next(r for r in section.rows if r.baseline)
    return rungs, cublas


def test_ladder_has_a_bar_per_rung_their_intervals_and_cublas_as_a_line(reports):
    report, _ = reports
    rungs, cublas = _ladder_b(report)
    fig = ablationd.plot.ladder(report, section="ladder-b")
    try:
        ax = fig.axes[0]
        assert [t.get_text() for t in ax.get_xticklabels()] == [r.rung for r in rungs]
        assert len(ax.patches) == len(rungs)
        heights = [p.get_height() for p in ax.patches]
        assert heights == pytest.approx([r.tflops for r in rungs])
        # The whiskers: one error bar container with a segment per rung, from the interval.
        (container,) = [c for c in ax.containers
                        if isinstance(c, matplotlib.container.ErrorbarContainer)]
        segments = container.lines[2][0].get_segments()
        assert len(segments) == len(rungs)
        r0 = rungs[0]
        lows, highs = sorted((r0.tflops_interval.low, r0.tflops_interval.high))
        assert segments[0][0][1] == pytest.approx(lows)
        assert segments[0][1][1] == pytest.approx(highs)
        # cuBLAS: one dashed horizontal line at its TFLOPS, in the legend.
        (line,) = [ln for ln in ax.get_lines() if ln.get_linestyle() == "--"]
        assert line.get_ydata()[0] == pytest.approx(cublas.tflops)
        assert any(cublas.variant in t.get_text() for t in ax.get_legend().get_texts())
        assert ax.get_ylabel() == "TFLOPS"
    finally:
        plt.close(fig)


def test_ladder_takes_the_report_as_dicts_and_refuses_a_section_it_lacks(daemon, reports):
    report, _ = reports
    with ablationd.connect(daemon.address) as d:
        as_dicts = d.report_json(report.run.id)
    fig = ablationd.plot.ladder(as_dicts)  # the ladder the run swept: ladder-b
    try:
        assert len(fig.axes[0].patches) == len(_ladder_b(report)[0])
    finally:
        plt.close(fig)
    with pytest.raises(ValueError, match="no ladder section 'ladder-z'"):
        ablationd.plot.ladder(report, section="ladder-z")
    with pytest.raises(TypeError, match="report_pb2.Report"):
        ablationd.plot.ladder(42)


def test_compare_puts_two_runs_side_by_side(reports):
    a, b = reports
    rungs, _ = _ladder_b(a)
    fig = ablationd.plot.compare(a, b)
    try:
        ax = fig.axes[0]
        assert [t.get_text() for t in ax.get_xticklabels()] == [r.rung for r in rungs]
        assert len(ax.patches) == 2 * len(rungs)
        legend = [t.get_text() for t in ax.get_legend().get_texts()]
        assert f"run {a.run.id}" in legend and f"run {b.run.id}" in legend
        assert len([ln for ln in ax.get_lines() if ln.get_linestyle() == "--"]) == 2
    finally:
        plt.close(fig)


def test_the_progress_bar_reaches_the_runs_total(daemon):
    bar = ablationd.ProgressBar(file=io.StringIO())
    with ablationd.connect(daemon.address) as d:
        summary = d.run(preset="ladder-a", shapes=["128"], rounds=2, window_seconds=1e-6,
                        on_event=bar)
    assert summary.state == "succeeded"
    assert bar.total == 8 and bar.n == bar.total  # 4 entries x 2 rounds
    assert bar.bar is not None and bar.bar.n == bar.total  # tqdm's own count (python3-tqdm)


def test_the_text_line_when_tqdm_is_absent(daemon):
    out = io.StringIO()
    bar = ablationd.ProgressBar(file=out, use_tqdm=False)
    with ablationd.connect(daemon.address) as d:
        d.run(variants=["L1_R1_s3", "cublas_bf16"], shapes=["128"], window_seconds=1e-6,
              on_event=bar)
    lines = out.getvalue().splitlines()
    assert lines[0].startswith("[0/2] ")
    assert lines[-1].startswith("[2/2] |") and "elapsed, ETA 0s" in lines[-1]
    assert bar.n == bar.total == 2 and bar.bar is None


def test_the_duration_reads_as_the_clis():
    assert [progress._duration(s) for s in (4.4, 61, 3725)] == ["4s", "1m01s", "1h02m"]


@pytest.fixture(scope="module")
def slow_daemon():
    d = Daemon(env={"ABLATION_FAKE_SLEEP_MS": "100"})
    yield d
    d.stop()


def _detach(daemon, *args):
    """`ablation-client run --detach ...`: the run's id."""
    done = subprocess.run([required_env("ABLATION_CLIENT"), "--server", daemon.address, "-q",
                           "run", "--detach", *args], capture_output=True, text=True, timeout=60,
                          check=True)
    return int(done.stdout.strip())


def test_a_bar_that_follows_a_running_run_counts_on_from_its_stored_rows(daemon):
    """The watch stream drives the bar: it joins a running run after some rows, starts there (not
    at 0) and ends at the run's total."""
    # Each row takes a few tenths of a second (the sustained regime settles first): time enough
    # to join midway.
    run_id = _detach(daemon, "-v", "L1_R1_s3", "-v", "cublas_bf16", "-s", "128", "--rounds", "3",
                     "--window-seconds", "0.000001")
    with ablationd.connect(daemon.address) as d:
        deadline = time.monotonic() + 30
        while not d.get_run(run_id).measurements:  # a row or more before the watch begins
            assert time.monotonic() < deadline, "the run stored no row"
            time.sleep(0.05)
        bar = ablationd.ProgressBar(file=io.StringIO())
        events = []
        summary = d.follow(run_id, on_event=events.append, progress=bar)
        # Followed again once ended: the run's end alone, the bar full from the stored rows.
        again = ablationd.ProgressBar(file=io.StringIO())
        assert d.follow(run_id, progress=again).state == "succeeded"
    assert summary.state == "succeeded" and summary.run_id == run_id
    assert bar.total == 6 and bar.n == 6  # 2 variants x 3 rounds
    assert 0 < bar._initial < 6, "the watch joined before the first or after the last row"
    assert bar.bar.n == 6
    kinds = [e.WhichOneof("event") for e in events]
    assert kinds[0] == "started" and kinds[-1] == "finished"
    # The stream may send again the row stored between the bar's count and the watch (the bar
    # counts it once, by its id; the run's finished event covers one that falls between); none
    # comes twice.
    ids = [e.measurement.id for e in events if e.WhichOneof("event") == "measurement"]
    assert len(ids) == len(set(ids)) and 0 < len(ids) <= 7 - bar._initial
    assert (again.n, again.total) == (6, 6)


def test_the_async_client_answers_as_the_blocking_one(daemon):
    async def main():
        async with await ablationd.aio.connect(daemon.address) as a:
            events = []
            summary = await a.run(variants=["L1_R1_s3", "cublas_bf16"], shapes=["128", "256"],
                                  tags=["aio"], window_seconds=1e-6, on_event=events.append)
            results = await a.results(run=summary.run_id)
            tagged = await a.results(tag="aio", variant="abl_*")
            runs = await a.runs(tag="aio")
            messages = await a.run_messages(tag="aio")
            watched = [e async for e in a.watch(summary.run_id)]
            device = await a.device()
            report = await a.report(summary.run_id)
            return summary, events, results, tagged, runs, messages, watched, device, report

    (summary, events, results, tagged, runs, messages, watched, device,
     report) = asyncio.run(main())
    assert summary.state == "succeeded" and (summary.ok, summary.planned) == (4, 4)
    assert [e.WhichOneof("event") for e in events] == (["queued", "started"]
                                                       + ["measurement"] * 4 + ["finished"])
    # The ended run watched: its end alone.
    assert [e.WhichOneof("event") for e in watched] == ["finished"]
    with ablationd.connect(daemon.address) as d:
        assert results.equals(d.results(run=summary.run_id))
        assert tagged.equals(d.results(tag="aio", variant="abl_*"))
        assert runs.equals(d.runs(tag="aio"))
        assert [r.SerializeToString() for r in messages] == [r.SerializeToString()
                                                             for r in d.run_messages(tag="aio")]
        assert device.device.uuid == d.device().device.uuid
        assert report == d.report(summary.run_id)
    assert len(results) == 4 and set(tagged["variant"]) == {"abl_L1_R1_bl0_s3_sw1"}


def test_the_async_client_raises_the_daemons_refusal(daemon):
    async def main():
        async with await ablationd.aio.connect(daemon.address) as a:
            await a.run(variants=["no_such_variant"])

    with pytest.raises(ablationd.AblationError) as error:
        asyncio.run(main())
    assert error.value.code == "INVALID_ARGUMENT"


def test_leaving_the_async_stream_early_cancels_the_run(slow_daemon):
    async def main():
        async with await ablationd.aio.connect(slow_daemon.address) as a:
            events = a.stream(variants=["L1_R1_s3"], shapes=["128", "256", "384", "512"], rounds=5)
            async for event in events:
                if event.HasField("measurement"):
                    break
            await events.aclose()
            run_id = event.measurement.run_id
            for _ in range(200):
                if (await a.get_run(run_id)).run.state == ablation_pb2.RUN_STATE_CANCELLED:
                    return True
                await asyncio.sleep(0.1)
            return False

    assert asyncio.run(main()), "the run was not cancelled"
