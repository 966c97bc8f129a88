"""GET /metrics of a real ablationd (fake worker; the stand-in NVML for clock locks) while runs
queue, execute, lock clocks, lose their worker and end: what each metric says at each moment.
The text is parsed by python3-prometheus-client's parser and linted by promtool."""

import os
import shutil
import subprocess
import threading
import time
import urllib.error
import urllib.request

import pytest
from prometheus_client.parser import text_string_to_metric_families

import ablationd
from ablation_testing import Daemon, required_env

SLOW = "abl_L1_R1_bl0_s3_sw1"
CRASH = "abl_L1_R1_bl0_s4_sw1"


def scrape(daemon):
    with urllib.request.urlopen(f"http://127.0.0.1:{daemon.metrics_port}/metrics", timeout=10) as r:
        assert r.headers["Content-Type"] == "text/plain; version=0.0.4; charset=utf-8"
        return r.read().decode()


def samples(text):
    """{(sample name, frozenset of labels): value} of every sample."""
    out = {}
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            out[(s.name, frozenset(s.labels.items()))] = s.value
    return out


def value(text, name, **labels):
    return samples(text).get((name, frozenset(labels.items())))


def wait_for(daemon, predicate, what, timeout=30):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        text = scrape(daemon)
        if predicate(text):
            return text
        time.sleep(0.05)
    pytest.fail(f"{what} within {timeout} s; last scrape:\n{text}")


@pytest.fixture(scope="module")
def daemon():
    nvml_log = os.path.join(os.environ.get("TMPDIR", "/tmp"), f"metrics-nvml-{os.getpid()}.log")
    d = Daemon(metrics=True,
               env={"ABLATION_FAKE_SLEEP_MS": "250", "ABLATION_FAKE_CRASH_ON": CRASH,
                    "FAKE_NVML_LOG": nvml_log},
               extra_args=["--nvml-library", required_env("FAKE_NVML")])
    yield d
    d.stop()
    if os.path.exists(nvml_log):
        os.remove(nvml_log)


def test_before_any_run_every_series_is_there_at_zero(daemon):
    text = scrape(daemon)
    assert value(text, "ablationd_gpu_usable", gpu="0") == 1
    assert value(text, "ablationd_queue_length", gpu="0") == 0
    assert value(text, "ablationd_clock_locked", gpu="0") == 0
    assert value(text, "ablationd_runs_total", kind="ablation", state="succeeded") == 0
    assert value(text, "ablationd_measurements_total", status="failed") == 0
    assert value(text, "ablationd_worker_restarts_total", gpu="0") == 0
    assert value(text, "ablationd_worker_hangs_total", gpu="0") == 0
    assert any(k[0] == "ablationd_build_info" for k in samples(text))


@pytest.mark.skipif(shutil.which("promtool") is None, reason="promtool (package prometheus) is not installed")
def test_promtool_finds_nothing_to_complain_about(daemon):
    done = subprocess.run(["promtool", "check", "metrics"], input=scrape(daemon), text=True,
                          capture_output=True, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.strip() == "" and done.stderr.strip() == "", done.stdout + done.stderr


def test_a_locked_run_then_a_queued_one_then_their_ends(daemon):
    results = {}

    def run(name, **kwargs):
        with ablationd.connect(daemon.address) as d:
            results[name] = d.run(**kwargs)

    first = threading.Thread(target=run, args=("locked",),
                             kwargs=dict(variants=[SLOW], shapes=["128", "256", "384", "512"],
                                         rounds=2, lock_sm_clock="max", lock_mem_clock="max"))
    first.start()
    text = wait_for(daemon, lambda t: value(t, "ablationd_runs_running", gpu="0") == 1,
                    "the first run was not seen running")
    assert value(text, "ablationd_clock_locked", gpu="0") == 1
    assert value(text, "ablationd_clock_lock_target_hertz", gpu="0", clock="sm") == 1980e6
    assert value(text, "ablationd_clock_lock_target_hertz", gpu="0", clock="mem") == 3201e6

    second = threading.Thread(target=run, args=("crash",),
                              kwargs=dict(variants=[SLOW, CRASH], shapes=["128"]))
    second.start()
    wait_for(daemon, lambda t: value(t, "ablationd_queue_length", gpu="0") == 1,
             "the second run was not seen queued")
    first.join(60)
    second.join(60)
    assert results["locked"].state == "succeeded" and results["crash"].state == "partial"

    text = wait_for(daemon, lambda t: value(t, "ablationd_runs_running", gpu="0") == 0,
                    "the runs did not end")
    assert value(text, "ablationd_queue_length", gpu="0") == 0
    assert value(text, "ablationd_clock_locked", gpu="0") == 0
    assert value(text, "ablationd_clock_lock_target_hertz", gpu="0", clock="sm") == 0
    assert value(text, "ablationd_runs_total", kind="ablation", state="queued") == 2
    assert value(text, "ablationd_runs_total", kind="ablation", state="running") == 2
    assert value(text, "ablationd_runs_total", kind="ablation", state="succeeded") == 1
    assert value(text, "ablationd_runs_total", kind="ablation", state="partial") == 1
    assert value(text, "ablationd_measurements_total", status="ok") == 9
    assert value(text, "ablationd_measurements_total", status="failed") == 1
    # The crash was the run's last item: the worker is started again by the next run, not now.
    assert value(text, "ablationd_worker_hangs_total", gpu="0") == 0
    assert value(text, "ablationd_measurement_wall_seconds_count", gpu="0") == 10
    # The fake worker sleeps 250 ms a measurement, but crashes before it sleeps.
    assert value(text, "ablationd_measurement_wall_seconds_sum", gpu="0") >= 9 * 0.25
    assert value(text, "ablationd_measurement_wall_seconds_bucket", gpu="0", le="0.1") <= 1
    assert value(text, "ablationd_measurement_wall_seconds_bucket", gpu="0", le="+Inf") == 10
    tflops = value(text, "ablationd_latest_operations_per_second", device_uuid="GPU-00000000-0000-0000-0000-000000000000",
                   variant=SLOW, dtype="bf16", shape="512x512x512")
    assert tflops and tflops > 0


def test_each_gpu_has_an_info_series_to_join_with_dcgm(daemon):
    # ablationd_gpu_info{gpu, uuid, model_name} 1: `* on(instance, gpu) group_left(uuid)
    # ablationd_gpu_info` gives every per-GPU series the UUID DCGM's exporter has (as UUID).
    text = scrape(daemon)
    assert value(text, "ablationd_gpu_info", gpu="0", uuid="GPU-00000000-0000-0000-0000-000000000000",
                 model_name="Fake GPU (test double)") == 1


def test_a_dead_worker_is_restarted_and_counted(daemon):
    with ablationd.connect(daemon.address) as d:
        summary = d.run(variants=[CRASH, SLOW], shapes=["128"])
    assert summary.failed == 1
    text = scrape(daemon)
    assert value(text, "ablationd_worker_restarts_total", gpu="0") >= 1
    assert value(text, "ablationd_gpu_usable", gpu="0") == 1


def test_only_get_and_head_of_slash_metrics(daemon):
    base = f"http://127.0.0.1:{daemon.metrics_port}"
    for path, method, code in (("/", "GET", 404), ("/metrics/x", "GET", 404),
                               ("/metrics", "POST", 405)):
        request = urllib.request.Request(base + path, method=method, data=b"" if method == "POST" else None)
        with pytest.raises(urllib.error.HTTPError) as error:
            urllib.request.urlopen(request, timeout=10)
        assert error.value.code == code, path


def test_an_address_given_on_purpose_that_is_taken_stops_the_daemon(daemon):
    taken = f"127.0.0.1:{daemon.metrics_port}"
    done = subprocess.run([required_env("ABLATIOND"), "--listen", "127.0.0.1:0", "--db",
                           os.path.join(daemon.dir, "second.db"), "--worker",
                           required_env("FAKE_WORKER"), "--metrics-listen", taken],
                          capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 1
    assert f"cannot serve metrics on {taken}" in done.stdout + done.stderr
    bad = subprocess.run([required_env("ABLATIOND"), "--listen", "127.0.0.1:0", "--db",
                          os.path.join(daemon.dir, "third.db"), "--worker",
                          required_env("FAKE_WORKER"), "--metrics-listen", "localhost:9464"],
                         capture_output=True, text=True, timeout=60, check=False)
    assert bad.returncode != 0  # refused while the flags are read
    assert "--metrics-listen: 'localhost:9464': 'localhost' is not an IPv4 address" in (
        bad.stdout + bad.stderr)
