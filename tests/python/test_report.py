"""Client.report: the CLI's report model read back as report_pb2.Report, its DataFrame, and the
other formats as text; and the notebook lines of docs/python.md, run as written."""

import os
import re

import pytest

import ablationd
from ablation.v1 import report_pb2

PYTHON_DOC = os.path.join(os.path.dirname(__file__), "..", "..", "docs", "python.md")


@pytest.fixture(scope="module")
def run_id(daemon):
    with ablationd.connect(daemon.address) as d:
        return d.run(preset="ladder-b", shapes=["256"], rounds=2).run_id


def test_report_is_the_clis_model(daemon, run_id):
    with ablationd.connect(daemon.address) as d:
        report = d.report(run_id)
        as_dicts = d.report_json(run_id)
    assert report.run.id == run_id and report.schema_version == 1
    ladder_b = next(s for s in report.sections if s.id == "ladder-b")
    rungs = [r.rung for r in ladder_b.rows]
    assert rungs[:3] == ["B0", "B1", "B2"] and "cuBLAS" in rungs
    assert all(r.status == report_pb2.ROW_STATUS_OK and r.tflops > 0 for r in ladder_b.rows)
    b2 = next(r for r in ladder_b.rows if r.rung == "B2")
    assert b2.vs == "B0" and b2.change.HasField("interval")
    assert [s["id"] for s in as_dicts["sections"]] == [s.id for s in report.sections]
    # The envelope's item, in the words of the CSV and the database.
    assert as_dicts["run"]["state"] == "succeeded" and as_dicts["run"]["kind"] == "ablation"
    statuses = {r["status"] for s in as_dicts["sections"] for r in s["rows"]}
    assert "ok" in statuses and statuses <= {"ok", "failed", "skipped", "missing"}

    df = ablationd.report_frame(report)
    rows = df[df["section"] == "ladder-b"]
    assert rows["rung"].tolist() == rungs
    assert rows.loc[rows["rung"] == "B2", "vs"].item() == "B0"
    assert not rows["change_low"].dropna().empty
    # The rungs of one shape share a window each round: their changes are paired.
    assert (rows["rounds"] == 2).all() and set(rows["change_basis"]) == {"", "paired_rounds"}


def test_report_text_formats(daemon, run_id):
    with ablationd.connect(daemon.address) as d:
        md = d.report_text(run_id, "md")
        html = d.report_text(run_id, "html")
    assert f"# Ablation report: run {run_id}" in md and "Ladder B" in md
    assert html.lstrip().lower().startswith("<!doctype html")


def test_a_report_of_a_run_that_does_not_exist_says_so(daemon):
    with ablationd.connect(daemon.address) as d:
        with pytest.raises(ablationd.AblationError, match="run 999999"):
            d.report(999999)


def test_a_missing_cli_is_named():
    client = ablationd.Client("127.0.0.1:1", cli="/nonexistent/ablation-client")
    with pytest.raises(FileNotFoundError):
        client.report_text()
    client.close()


def test_the_documented_notebook_lines_run_as_written(daemon, run_id):
    """The first ```python block of docs/python.md, with its address pointed at the test daemon."""
    with open(PYTHON_DOC) as f:
        blocks = re.findall(r"```python\n(.*?)```", f.read(), re.S)
    assert blocks, "docs/python.md has no ```python block for notebooks"
    code = blocks[0].replace("127.0.0.1:50051", daemon.address)
    code = code.replace('shapes=["4096"]', 'shapes=["128"]')  # the fake worker, quickly
    namespace = {}
    exec(compile(code, "docs/python.md", "exec"), namespace)  # noqa: S102 - our own docs
    assert "df" in namespace and not namespace["df"].empty


def test_a_report_travels_with_the_callers_token_and_tls(tmp_path):
    """Against a daemon that wants a token and speaks TLS, the report (rendered by the CLI) is
    fetched with the notebook's own credentials; without the token it is refused."""
    import subprocess

    from ablation_testing import Daemon, required_env

    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
                    "-keyout", str(tmp_path / "server.key"), "-out", str(tmp_path / "server.pem"),
                    "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"],
                   check=True, capture_output=True)
    token = "notebook-token-0123456789"
    line = subprocess.run([required_env("ABLATIOND"), "--hash-token", "alice:run"], input=token,
                          capture_output=True, text=True, check=True).stdout
    (tmp_path / "tokens").write_text(line)
    config = tmp_path / "ablationd.toml"
    config.write_text(f'[auth]\ntokens = "{tmp_path / "tokens"}"\n'
                      f'[tls]\ncert = "{tmp_path / "server.pem"}"\nkey = "{tmp_path / "server.key"}"\n')
    d = Daemon(extra_args=("--config", str(config)))
    try:
        roots = (tmp_path / "server.pem").read_bytes()
        with ablationd.connect(d.address, token=token, tls=True, root_certificates=roots) as c:
            summary = c.run(variants=["cublas_bf16"], shapes=["256"])
            text = c.report_text(summary.run_id)
            assert text.startswith(f"# Ablation report: run {summary.run_id}")
            assert c.report(summary.run_id).run.id == summary.run_id
        with ablationd.connect(d.address, tls=True, root_certificates=roots) as c:
            with pytest.raises(ablationd.AblationError) as refused:
                c.report_text(summary.run_id)
            assert "UNAUTHENTICATED" in str(refused.value) or "PERMISSION_DENIED" in str(refused.value)
    finally:
        d.stop()


def test_the_frame_of_a_ladder_run_holds_the_rows_it_measured(daemon):
    """A ladder-a run's report lays out every rung of every preset (nearly two hundred rows, all
    but a few "missing"); its frame holds the rows the run measured, and missing=True the rest."""
    with ablationd.connect(daemon.address) as d:
        report = d.report(d.run(preset="ladder-a", shapes=["256"], rounds=1).run_id)
    laid_out = sum(len(s.rows) for s in report.sections)
    missing = sum(s.missing for s in report.sections)
    assert missing > 100  # what the frame must not be made of
    df = ablationd.report_frame(report)
    assert "missing" not in set(df["status"])
    assert len(df) == laid_out - missing == sum(s.measured for s in report.sections)
    ladder = df[df["section"] == "ladder-a"]
    assert ladder["rung"].tolist() == ["A1", "A2", "A3", "cuBLAS"]
    assert (ladder["status"] == "ok").all() and (ladder["tflops"] > 0).all()
    everything = ablationd.report_frame(report, missing=True)
    assert len(everything) == laid_out
    assert (everything["status"] == "missing").sum() == missing
