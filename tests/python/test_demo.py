"""The main job (scripts/demo.sh, which scripts/main.sh ends in) on a bin/ folder whose
ablation-worker is the fake worker, so that its GPU path runs here: it ends with ladders A and B,
each rung's change and interval, and the HTML reports it wrote. And without a device: it says
so and shows the service answering."""

import os
import pathlib
import re
import shutil
import subprocess

import pytest

from ablation_testing import free_port, required_env

DEMO = pathlib.Path(__file__).parents[2] / "scripts" / "demo.sh"


@pytest.fixture
def bundle(tmp_path):
    """bin/ with copies (ablationd finds its worker beside its own executable, symlinks resolved)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    shutil.copy(required_env("ABLATIOND"), bin_dir / "ablationd")
    shutil.copy(required_env("ABLATION_CLIENT"), bin_dir / "ablation-client")
    shutil.copy(required_env("FAKE_WORKER"), bin_dir / "ablation-worker")
    return bin_dir


def demo(bundle, tmp_path, env=None):
    return subprocess.run(
        ["bash", str(DEMO), str(bundle), "256"], cwd=tmp_path, capture_output=True, text=True,
        timeout=240, check=False,
        env={**os.environ, "ABLATION_PORT": str(free_port()), "ABLATION_REPORT_DIR": str(tmp_path / "reports"),
             **(env or {})})


def test_the_main_job_ends_with_both_ladders_and_the_html_reports(bundle, tmp_path):
    done = demo(bundle, tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    out = done.stdout
    answer = out[out.index("== the answer: ladders A and B at 256"):]
    a = answer[answer.index("## "):answer.index("run ", answer.index("## "))]
    assert re.search(r"^## \d+\. Ladder A", a, re.M)
    # A3 is compared with the faster of A1 and A2 (the preset says so); the fake times them
    # within its 0.1% wobble, so either may be.
    for rung, vs in (("A2", "A1"), ("A3", "A[12]")):
        # "| A1 | +0.0% [-0.1, +0.1] |": the change and its interval (marks may follow).
        change = rf"\| {vs} \| [+-]\d+\.\d% \[[+-]\d+\.\d, [+-]\d+\.\d\][^|]*\|"
        assert re.search(rf"^\| {rung} \|.*{change}", a, re.M), rung
    b = answer[answer.index("## ", answer.index("(preset ladder-b)")):]
    assert re.search(r"^## \d+\. Ladder B", b, re.M)
    for rung in ("B0", "B1", "B2", "B3", "B4", "B5", "B6", "cuBLAS"):
        assert re.search(rf"^\| {rung} \|", b, re.M), rung
    assert "| B3 | cp.async, double buffer (2 stages) |" in b
    # The last lines: the reports, which exist and are HTML.
    tail = out.rstrip().splitlines()
    start = tail.index("HTML reports written:")
    paths = [line.strip() for line in tail[start + 1:]]
    assert len(paths) == 2 and all(p.endswith(".html") for p in paths)
    for p in paths:
        assert pathlib.Path(p).read_text().lstrip().lower().startswith("<!doctype html")
    assert "ladder-a" in paths[0] and "ladder-b" in paths[1]
    # What the figures say: read from each run's report, one line per change, with its sign.
    assert out.count("What the figures say (from the report's CSV") == 2
    assert re.search(r"^- B3 against B2: [+-]\d+\.\d% \[[+-]\d+\.\d, [+-]\d+\.\d\], "
                     r"(faster|slower) \(significant\)|within noise$", out, re.M)


def test_without_a_gpu_it_says_so_and_the_service_still_answers(bundle, tmp_path):
    done = demo(bundle, tmp_path, env={"ABLATION_FAKE_NO_DEVICE": "no CUDA device (test)"})
    assert done.returncode == 0, done.stdout + done.stderr
    # The refused run is a sentence, not a gRPC status code.
    assert "FAILED_PRECONDITION" not in done.stdout + done.stderr
    assert "== asked to run L0_R1_s1 anyway, the daemon refused: no GPU to run on: no CUDA device (test)" in done.stdout
    assert "== no GPU here: the daemon serves queries but refuses runs" in done.stdout
    assert "the ladders A" in done.stdout and "need a GPU" in done.stdout
    assert "== variants (first 10 of" in done.stdout
    assert re.search(r"^ladder-a ", done.stdout, re.M) and re.search(r"^ladder-b ", done.stdout, re.M)
    # Then what a GPU answers: the real H200 run kept in examples/h200-main-job/, rendered now.
    out = done.stdout
    kept = out[out.index("== what a GPU answers: the main job as it ran on an H200 (NVIDIA H200 GPU-"):]
    assert "kept in examples/h200-main-job/ as data and rendered now by this build" in kept
    a = kept[kept.index("(preset ladder-a)"):kept.index("(preset ladder-b)")]
    assert re.search(r"^## \d+\. Ladder A", a, re.M)
    # Its figures are the database's, not typed in: A3 (ldmatrix) against A2 with an interval.
    assert re.search(r"^\| A3 \| ldmatrix \| `abl_L1_R1_bl0_s3_sw1` \| bf16 \| \d+\.\d \|.*"
                     r"\| A2 \| \+\d+\.\d% \[\+\d+\.\d, \+\d+\.\d\]", a, re.M), a
    b = kept[kept.index("(preset ladder-b)"):]
    for rung in ("B0", "B3", "B6", "cuBLAS"):
        assert re.search(rf"^\| {rung} \|", b, re.M), rung
    # The reading under each ladder is the kept run's figures, not text written in advance: the
    # kept ladder B has B1 5.9% faster than B0, which no "expected to be flat" may contradict.
    assert "expected to be" not in out
    assert "- B1 against B0: +5.9% [+5.8, +6.0], faster (significant)" in b
    assert "- A3 against A2: +24.3% [+24.2, +24.4], faster (significant)" in a
    # Its HTML reports are written and named at the end.
    tail = out.rstrip().splitlines()
    paths = [pathlib.Path(line.strip()) for line in tail[tail.index("HTML reports written:") + 1:]]
    assert [p.name for p in paths] == ["h200-main-job-ladder-a-run1.html", "h200-main-job-ladder-b-run2.html"]
    for p in paths:
        assert p.read_text().lstrip().lower().startswith("<!doctype html")
    # The kept database itself is untouched (the daemon read a copy).
    kept_db = pathlib.Path(__file__).parents[2] / "examples" / "h200-main-job" / "results.db"
    assert subprocess.run(["git", "-C", str(kept_db.parent), "diff", "--quiet", "--", kept_db.name]).returncode == 0


def test_it_writes_only_under_its_state_folder(bundle, tmp_path):
    """Database, clock journal lock, log and reports: all under main-job/ of where it ran."""
    run_dir = tmp_path / "checkout"
    run_dir.mkdir()
    done = subprocess.run(
        ["bash", str(DEMO), str(bundle), "256"], cwd=run_dir, capture_output=True, text=True,
        timeout=240, check=False,
        env={**os.environ, "ABLATION_PORT": str(free_port()), "ABLATION_FAKE_NO_DEVICE": "no CUDA device (test)"})
    assert done.returncode == 0, done.stdout + done.stderr
    assert [p.name for p in run_dir.iterdir()] == ["main-job"]
    written = sorted(p.name for p in (run_dir / "main-job").iterdir())
    assert "results.db" in written and "ablationd.log" in written, written
    assert "h200-main-job-ladder-a-run1.html" in written, written
