"""ablationd's Python layer against a real daemon with the fake worker on loopback: connect,
runs and their events (generator and callback), results and samples as DataFrames, filters,
errors, cancelling by leaving the stream, and the token metadata."""

import concurrent.futures
import os
import time

import grpc
import pytest

import ablationd
from ablation.v1 import ablation_pb2, ablation_pb2_grpc
from ablation_testing import Daemon, free_port
from ablationd import frames

LADDER_A = ["abl_L1_R0_bl0_s3_sw1", "abl_L1_R0_bl1_s3_sw1", "abl_L1_R1_bl0_s3_sw1", "cublas_bf16"]


@pytest.fixture(scope="module")
def ladder(daemon):
    """One preset run (3 rounds by default) that several tests read."""
    events = []
    with ablationd.connect(daemon.address) as d:
        summary = d.run(preset="ladder-a", shapes=["256"], tags=["py-ladder"], on_event=events.append)
    return summary, events


def kinds(events):
    return [e.WhichOneof("event") for e in events]


def test_connect_and_device(daemon):
    with ablationd.connect(daemon.address) as d:
        device = d.device()
        assert device.available and device.device.name == "Fake GPU (test double)"
        assert any(v.name == "abl_L1_R1_bl0_s3_sw1" for v in d.variants("abl_L1_*"))
        assert [p.name for p in d.presets("ladder-a")] == ["ladder-a"]


def test_connect_to_nothing_says_where_it_looked():
    address = f"127.0.0.1:{free_port()}"
    with pytest.raises(ConnectionError, match=f"no ablationd answered at {address} within 1 s"):
        ablationd.connect(address, wait=1)


def test_run_with_a_callback_sees_every_event_and_returns_the_summary(ladder):
    summary, events = ladder
    assert summary.state == "succeeded"
    assert (summary.ok, summary.failed, summary.planned) == (12, 0, 12)  # 4 entries x 3 rounds
    assert kinds(events) == ["queued", "started"] + ["measurement"] * 12 + ["finished"]
    assert {e.measurement.round for e in events if e.HasField("measurement")} == {0, 1, 2}


def test_stream_is_a_generator_of_events(daemon):
    with ablationd.connect(daemon.address) as d:
        events = list(d.stream(variants=["L1_R1_s3", "cublas_bf16"], shapes=["128"]))
    assert kinds(events) == ["queued", "started", "measurement", "measurement", "finished"]
    assert events[1].started.total == 2
    assert events[-1].finished.state == ablation_pb2.RUN_STATE_SUCCEEDED
    assert ablationd.describe_event(events[-1]).endswith("succeeded, 2 ok, 0 failed")


def test_results_one_row_per_measurement_and_round(daemon, ladder):
    summary, _ = ladder
    with ablationd.connect(daemon.address) as d:
        df = d.results(run=summary.run_id)
    assert list(df.columns) == frames.MEASUREMENT_COLUMNS
    assert len(df) == 12
    assert sorted(df["variant"].unique()) == sorted(LADDER_A)
    assert df.groupby("variant")["round"].apply(sorted).map(tuple).unique().tolist() == [(0, 1, 2)]
    assert set(df["run_id"]) == {summary.run_id}
    assert set(df["device_uuid"]) == {"GPU-00000000-0000-0000-0000-000000000000"}
    assert (df[["m", "n", "k"]] == 256).all().all()
    assert (df["status"] == "ok").all() and (df["tflops"] > 0).all() and (df["median_ms"] > 0).all()
    assert str(df["created"].dt.tz) == "UTC"
    # No NVML here: its clocks are unknown, not zero. The GPU's own clock reads are there.
    assert df["sm_clock_mhz_mean"].isna().all() and df["throttled_share"].isna().all()
    assert (df["median_cycles"] > 0).all() and (df["median_sm_mhz"] == 1980).all()
    assert (df["low_clock_share"] == 0).all()


def test_samples_are_long_and_match_the_measurements(daemon, ladder):
    summary, _ = ladder
    with ablationd.connect(daemon.address) as d:
        results = d.results(run=summary.run_id)
        samples = d.samples(run=summary.run_id)
    assert list(samples.columns) == frames.SAMPLE_COLUMNS
    counts = samples.groupby("measurement_id").size()
    expected = results.set_index("measurement_id")["samples"]
    assert counts.sort_index().tolist() == expected.sort_index().tolist()
    first = samples[samples["measurement_id"] == results["measurement_id"].iloc[0]]
    assert first["sample"].tolist() == list(range(len(first)))
    assert (samples["ms"] > 0).all() and (samples["cycles"] > 0).all()
    assert (samples["mhz"] == 1980).all()


def test_filters_across_runs_and_the_run_list(daemon, ladder):
    summary, _ = ladder
    with ablationd.connect(daemon.address) as d:
        # A DataFrame, one row per run, as results() gives one per measurement.
        runs = d.runs(tag="py-ladder")
        assert list(runs.columns) == frames.RUN_COLUMNS
        assert runs["run_id"].tolist() == [summary.run_id]
        row = runs.iloc[0]
        assert (row.state, row.kind, row.planned, row.ok, row.failed) == ("succeeded", "ablation",
                                                                         12, 12, 0)
        assert row.tags == ["py-ladder"] and row.device_name == "Fake GPU (test double)"
        assert str(runs["created"].dt.tz) == "UTC" and row.finished >= row.started >= row.created
        assert summary.run_id in d.runs(limit=None)["run_id"].tolist()
        assert len(d.runs(limit=1)) == 1
        # The messages themselves, for every field as the daemon sent it.
        messages = d.run_messages(tag="py-ladder")
        assert [r.id for r in messages] == [summary.run_id]
        assert messages[0].state == ablation_pb2.RUN_STATE_SUCCEEDED
        assert d.runs(tag="no-such-tag").empty
        ldmatrix = d.results(variant="abl_L1_R1_*", tag="py-ladder", shape="256", status="ok")
        assert set(ldmatrix["variant"]) == {"abl_L1_R1_bl0_s3_sw1"} and len(ldmatrix) == 3
        assert len(d.results(run="latest")) >= 1
        assert d.results(tag="no-such-tag").empty
        with pytest.raises(ValueError, match="status 'bogus'"):
            d.results(status="bogus")


def test_a_refused_run_raises_with_the_daemons_sentence(daemon):
    with ablationd.connect(daemon.address) as d:
        with pytest.raises(ablationd.AblationError) as error:
            d.run(variants=["no_such_variant"])
    assert error.value.code == "INVALID_ARGUMENT"
    assert "unknown variant 'no_such_variant'" in str(error.value)


@pytest.fixture(scope="module")
def slow_daemon():
    d = Daemon(env={"ABLATION_FAKE_SLEEP_MS": "150", "ABLATION_FAKE_CRASH_ON": "abl_L1_R1_bl0_s4_sw1",
                    "ABLATION_FAKE_LOW_CLOCK_SAMPLES": "2"})
    yield d
    d.stop()


def test_leaving_the_stream_early_cancels_the_run(slow_daemon):
    with ablationd.connect(slow_daemon.address) as d:
        events = d.stream(variants=["L1_R1_s3"], shapes=["128", "256", "384", "512"], rounds=5)
        for event in events:
            if event.HasField("measurement"):
                break
        run_id = event.measurement.run_id
        events.close()
        deadline = time.monotonic() + 20
        while d.get_run(run_id).run.state != ablation_pb2.RUN_STATE_CANCELLED:
            assert time.monotonic() < deadline, "the run was not cancelled"
            time.sleep(0.1)
        assert len(d.results(run=run_id)) < 20


def test_a_failed_measurement_is_a_row_with_its_error(slow_daemon):
    with ablationd.connect(slow_daemon.address) as d:
        summary = d.run(variants=["L1_R1_s3", "L1_R1_s4"], shapes=["128"])
        assert (summary.state, summary.ok, summary.failed) == ("partial", 1, 1)
        failed = d.results(run=summary.run_id, status="failed")
        ok = d.results(run=summary.run_id, status="ok").iloc[0]
    assert failed["variant"].tolist() == ["abl_L1_R1_bl0_s4_sw1"]
    assert "worker died" in failed["error"].iloc[0] and failed["tflops"].isna().all()
    assert ok.low_clock_share == pytest.approx(2 / ok.samples)  # 2 samples at half the clock


class _Recorder(ablation_pb2_grpc.AblationServicer):
    """A stand-in server that only records the metadata each call arrives with."""

    def __init__(self):
        self.metadata = []

    def GetDevice(self, request, context):
        self.metadata.append(dict(context.invocation_metadata()))
        return ablation_pb2.GetDeviceResponse(available=True)

    def RunAblation(self, request, context):
        self.metadata.append(dict(context.invocation_metadata()))
        yield ablation_pb2.RunEvent(queued=ablation_pb2.RunEvent.Queued(run_id=9))


def test_a_token_travels_as_bearer_metadata_on_every_call():
    recorder = _Recorder()
    server = grpc.server(concurrent.futures.ThreadPoolExecutor(max_workers=2))
    ablation_pb2_grpc.add_AblationServicer_to_server(recorder, server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    try:
        with ablationd.connect(f"127.0.0.1:{port}", token="s3cret") as d:
            d.device()
            assert d.run(variants=["x"]).run_id == 9
        with ablationd.connect(f"127.0.0.1:{port}") as d:
            d.device()
    finally:
        server.stop(None)
    assert [m.get("authorization") for m in recorder.metadata] == ["Bearer s3cret", "Bearer s3cret", None]


def test_add_kernel_compiles_the_example_and_the_daemon_holds_it(tmp_path):
    """A notebook adds the repository's example user kernel (NVRTC needs no GPU), reads it back,
    is told why a broken one does not compile, and removes it."""
    examples = os.path.join(os.environ["ABLATION_SOURCE_DIR"], "examples", "user-kernels")
    config = tmp_path / "ablationd.toml"
    config.write_text(f'[user_kernels]\ncompiler = "{os.environ["ABLATION_COMPILE"]}"\n')
    d = Daemon(extra_args=("--config", str(config)))
    try:
        with ablationd.connect(d.address) as c:
            kernel = c.add_kernel(os.path.join(examples, "tiled_gemm.cu"),
                                  os.path.join(examples, "tiled_gemm.toml"))
            assert kernel.name == "tiled"
            assert len(kernel.variants) == 4
            assert all(b.registers > 0 for b in kernel.builds)
            assert [k.name for k in c.kernels()] == ["tiled"]
            assert "TILE + PAD" in c.kernel("tiled").source
            with open(os.path.join(examples, "tiled_gemm.cu")) as f:
                broken = f.read().replace("acc += As", "acc += Az")
            with open(os.path.join(examples, "tiled_gemm.toml")) as f:
                manifest = f.read().replace('name = "tiled"', 'name = "broken"')
            with pytest.raises(ablationd.AblationError) as error:
                c.add_kernel(broken, manifest)
            assert "does not compile" in str(error.value)
            assert '"Az"' in str(error.value)
            c.remove_kernel("tiled")
            assert c.kernels() == []
            # A cubin, by path or as bytes: sent as base64, read by the compiler process.
            cubin = os.path.join(examples, "cubin", "row_softmax_t128.cubin")
            toml = os.path.join(examples, "cubin", "row_softmax_t128.toml")
            built = c.check_kernel(cubin, toml, arch="sm_90a")
            assert [b.registers for b in built.builds] == [30]
            with open(cubin, "rb") as f:
                assert c.add_kernel(f.read(), toml).name == "softmax_cubin"
    finally:
        d.stop()


def test_the_clis_json_reads_back_into_the_messages(daemon, ladder):
    """`runs --format json`: ids and times are JSON numbers, the run's request an object (no
    JSON inside a string), and words_to_names turns an item back into the daemon's message."""
    import subprocess

    from google.protobuf import json_format

    from ablationd._proto import envelope_items, words_to_names

    summary, _ = ladder
    done = subprocess.run([os.environ["ABLATION_CLIENT"], "--server", daemon.address, "runs",
                           "--tag", "py-ladder", "--format", "json"],
                          capture_output=True, text=True, timeout=60, check=True)
    (item,) = envelope_items(done.stdout, "runs")
    assert item["id"] == summary.run_id and isinstance(item["created_at_ms"], int)
    assert isinstance(item["request_json"], dict) and item["request_json"]["preset"] == "ladder-a"
    run = json_format.ParseDict(words_to_names(item, ablation_pb2.Run.DESCRIPTOR), ablation_pb2.Run())
    with ablationd.connect(daemon.address) as d:
        (stored,) = d.run_messages(tag="py-ladder")
    assert run.id == stored.id and run.state == stored.state
    # The same request (protobuf's JSON reads an int64 as a number or a string alike).
    assert (json_format.Parse(run.request_json, ablation_pb2.RunRequest())
            == json_format.Parse(stored.request_json, ablation_pb2.RunRequest()))
