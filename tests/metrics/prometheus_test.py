"""Debian's real Prometheus scrapes a real ablationd (fake worker) while a small run executes,
and its HTTP API answers PromQL over what it stored: the endpoint works for the server it is
for, not only for a parser. Skips, saying so, only where the prometheus binary is missing
(scripts/install-deps.sh installs it)."""

import json
import os
import shutil
import subprocess
import tempfile
import time
import urllib.parse
import urllib.request

import pytest

import ablationd
from ablation_testing import Daemon, free_port, has_ipv6_loopback

PROMETHEUS = shutil.which("prometheus")
pytestmark = pytest.mark.skipif(
    PROMETHEUS is None,
    reason="prometheus is not installed (apt-get install prometheus, or scripts/install-deps.sh)")

CONFIG = """\
global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: ablationd
    metrics_path: /metrics
    static_configs:
      - targets: ["{host}:{port}"]
"""


class Prometheus:
    def __init__(self, target_port, target_host="127.0.0.1"):
        self.dir = tempfile.mkdtemp(prefix="ablation-prometheus-")
        config = os.path.join(self.dir, "prometheus.yml")
        with open(config, "w") as f:
            f.write(CONFIG.format(host=target_host, port=target_port))
        self.port = free_port()
        self.log_path = os.path.join(self.dir, "prometheus.log")
        self._log = open(self.log_path, "w")
        self.process = subprocess.Popen(
            [PROMETHEUS, f"--config.file={config}", f"--storage.tsdb.path={self.dir}/data",
             f"--web.listen-address=127.0.0.1:{self.port}", "--log.level=warn"],
            stdin=subprocess.DEVNULL, stdout=self._log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            assert self.process.poll() is None, f"prometheus exited:\n{self.log()}"
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/-/ready", timeout=2) as r:
                    if r.status == 200:
                        return
            except OSError:
                pass
            time.sleep(0.2)
        raise RuntimeError(f"prometheus was not ready within 60 s:\n{self.log()}")

    def log(self):
        with open(self.log_path) as f:
            return f.read()

    def query(self, promql):
        """The vector /api/v1/query returns: [(labels, value)]."""
        url = f"http://127.0.0.1:{self.port}/api/v1/query?" + urllib.parse.urlencode({"query": promql})
        with urllib.request.urlopen(url, timeout=10) as r:
            body = json.load(r)
        assert body["status"] == "success", body
        return [(s["metric"], float(s["value"][1])) for s in body["data"]["result"]]

    def wait(self, promql, predicate, what, timeout=60):
        deadline, result = time.monotonic() + timeout, None
        while time.monotonic() < deadline:
            result = self.query(promql)
            if predicate(result):
                return result
            time.sleep(0.5)
        pytest.fail(f"{what}: {promql} gave {result} for {timeout} s; prometheus log:\n{self.log()}")

    def stop(self):
        self.process.terminate()
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self._log.close()
        shutil.rmtree(self.dir, ignore_errors=True)


@pytest.fixture(scope="module")
def stack():
    daemon = Daemon(metrics=True, env={"ABLATION_FAKE_SLEEP_MS": "400"})
    prometheus = Prometheus(daemon.metrics_port)
    yield daemon, prometheus
    prometheus.stop()
    daemon.stop()


def test_prometheus_scrapes_a_run_and_answers_queries(stack):
    daemon, prometheus = stack
    prometheus.wait('up{job="ablationd"}', lambda r: r and r[0][1] == 1, "the target is not up")

    # 2 variants x 2 shapes x 2 rounds: a window per shape and round, each 12 settling chunks and
    # the window at the fake's 400 ms a task: some 20 s, many scrapes while running.
    with ablationd.connect(daemon.address) as d:
        summary = d.run(variants=["L1_R1_s3", "cublas_bf16"], shapes=["128", "256"], rounds=2,
                        tags=["prometheus"])
    assert summary.state == "succeeded" and summary.ok == 8

    prometheus.wait('ablationd_measurements_total{status="ok"}', lambda r: r and r[0][1] == 8,
                    "the measurements were not counted")
    prometheus.wait('ablationd_runs_total{kind="ablation",state="succeeded"}',
                    lambda r: r and r[0][1] == 1, "the run was not counted")
    running = prometheus.query('max_over_time(ablationd_runs_running{gpu="0"}[5m])')
    assert running and running[0][1] == 1, "no scrape saw the run running"
    assert prometheus.query('ablationd_queue_length{gpu="0"}')[0][1] == 0

    tflops = prometheus.query('ablationd_latest_operations_per_second{variant="cublas_bf16"}')
    assert sorted(m["shape"] for m, _ in tflops) == ["128x128x128", "256x256x256"]
    assert all(m["dtype"] == "bf16" and m["device_uuid"].startswith("GPU-") and v > 0
               for m, v in tflops)

    # The histogram is one Prometheus can compute with: a row's wall time is its share of its
    # window's, 13 tasks of 400 ms over 2 rows, about 2.6 s: the median is within the buckets
    # around it.
    median = prometheus.query(
        "histogram_quantile(0.5, sum by (le) (ablationd_measurement_wall_seconds_bucket))")
    assert median and 1 <= median[0][1] <= 5, median


@pytest.mark.skipif(not has_ipv6_loopback(), reason="no IPv6 loopback (::1) on this machine")
def test_prometheus_scrapes_the_ipv6_loopback():
    """--metrics-listen [::1]:PORT, the form the daemon's help names, scraped by Prometheus."""
    daemon = Daemon(metrics=True, metrics_host="::1")
    try:
        prometheus = Prometheus(daemon.metrics_port, target_host="[::1]")
        try:
            prometheus.wait('up{job="ablationd"}', lambda r: r and r[0][1] == 1,
                            "the IPv6 target is not up")
            prometheus.wait('ablationd_queue_length{gpu="0"}', lambda r: r and r[0][1] == 0,
                            "the daemon's metrics were not stored")
        finally:
            prometheus.stop()
        assert f"metrics on http://[::1]:{daemon.metrics_port}/metrics" in daemon.log()
    finally:
        daemon.stop()
