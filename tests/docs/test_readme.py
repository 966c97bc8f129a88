"""The README is one screen: what the project is, exactly two commands (the main job and the
tests), each with what it needs and how long it takes, one real example, and a table of contents
into docs/. Every relative link of the README and of docs/ resolves; the README's test command is
the one CI runs (.ci/run); and the main job's second half (scripts/demo.sh on the built binaries)
runs here without a GPU."""

import os
import pathlib
import re
import socket
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
DOCS = ROOT / "docs"

FENCE = re.compile(r"^```([^\n]*)\n(.*?)^```", re.M | re.S)
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def fenced(text):
    """(language, body) of every fenced code block."""
    return [(lang.strip(), body) for lang, body in FENCE.findall(text)]


def commands(text):
    """The commands of the README: the lines of its shell blocks."""
    shell = [body for lang, body in fenced(text) if lang in ("sh", "bash", "shell", "console", "")]
    return [line.strip() for body in shell for line in body.splitlines() if line.strip()]


def slug(heading):
    """GitHub's anchor of a Markdown heading."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def anchors(path):
    return {slug(h) for h in re.findall(r"^#+ (.*)$", path.read_text(), re.M)}


def broken_links(path):
    """The relative links of a Markdown file whose file (or heading) does not exist."""
    broken = []
    for target in LINK.findall(FENCE.sub("", path.read_text())):
        if re.match(r"^[a-z]+:", target):
            continue  # http:, https:, mailto:
        file, _, anchor = target.partition("#")
        resolved = (path.parent / file).resolve() if file else path
        if not resolved.exists():
            broken.append(f"{path.relative_to(ROOT)}: {target} (no such file)")
        elif anchor and resolved.suffix == ".md" and anchor not in anchors(resolved):
            broken.append(f"{path.relative_to(ROOT)}: {target} (no such heading)")
    return broken


def test_the_readme_fits_on_one_screen():
    text = README.read_text()
    assert len(text.splitlines()) <= 120, len(text.splitlines())
    assert len(text.split()) <= 900, len(text.split())


def test_the_readme_names_exactly_two_commands_that_exist_as_scripts():
    text = README.read_text()
    assert commands(text) == ["scripts/main.sh", "scripts/test.sh"], commands(text)
    for command in commands(text):
        script = ROOT / command
        assert script.is_file() and os.access(script, os.X_OK), command


def test_each_command_says_what_it_needs_and_how_long_it_takes():
    text = README.read_text()
    for command in ("scripts/main.sh", "scripts/test.sh"):
        after = text[text.index(f"```sh\n{command}\n```"):]
        lines = after.split("\n\n")[1]  # the paragraph under the block
        assert re.search(r"^- Needs: \S", lines, re.M), command
        assert re.search(r"^- Takes: .*\d+ (s|min)\b", lines, re.M | re.S), command


def test_the_readmes_test_command_is_the_one_ci_runs():
    ci = (ROOT / ".ci" / "run").read_text()
    run = [line.split()[1:] for line in ci.splitlines() if line.startswith("exec ")]
    assert run == [["scripts/test.sh"]], run
    assert commands(README.read_text())[1] == "scripts/test.sh"


def test_the_readme_has_a_table_of_contents_into_every_docs_page():
    linked = {DOCS / pathlib.Path(t).name for t in LINK.findall(README.read_text())
              if t.startswith("docs/")}
    pages = set(DOCS.glob("*.md"))
    assert pages and linked == pages, (sorted(map(str, pages - linked)), sorted(map(str, linked - pages)))


def test_every_link_of_the_readme_and_docs_resolves():
    broken = [b for page in [README, *sorted(DOCS.glob("*.md"))] for b in broken_links(page)]
    assert broken == []


def test_the_link_checker_finds_a_broken_link(tmp_path):
    page = tmp_path / "page.md"
    (tmp_path / "there.md").write_text("# A heading\n")
    page.write_text("[ok](there.md#a-heading) [gone](missing.md) [bad](there.md#nowhere)\n"
                    "```sh\n[not a link](inside-a-fence.md)\n```\n")
    global ROOT
    saved, ROOT = ROOT, tmp_path
    try:
        assert broken_links(page) == ["page.md: missing.md (no such file)",
                                      "page.md: there.md#nowhere (no such heading)"]
    finally:
        ROOT = saved


def test_the_example_is_the_kept_h200_run():
    """The README's example figures are the kept database's, as its report prints them."""
    text = README.read_text()
    assert "examples/h200-main-job/" in text
    for row in ("| B1 | cp.async, 1 stage | 233.8 | B0 | +5.9% [+5.8, +6.0] paired |",
                "| B3 | cp.async, double buffer (2 stages) | 322.0 | B2 | +40.0% [+39.9, +40.1] paired |"):
        assert row in text


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.skipif("ABLATION_BIN_DIR" not in os.environ, reason="ABLATION_BIN_DIR not set (ctest sets it)")
def test_the_main_jobs_second_half_runs_here_without_a_gpu(tmp_path):
    """scripts/demo.sh on the built binaries, the GPU hidden: the kept H200 run's answer, what its
    figures say, and its HTML reports, all under main-job/ of the folder it ran in."""
    done = subprocess.run(
        ["bash", str(ROOT / "scripts" / "demo.sh"), os.environ["ABLATION_BIN_DIR"]],
        cwd=tmp_path, capture_output=True, text=True, timeout=60, check=False,
        env={**os.environ, "ABLATION_PORT": str(free_port()), "CUDA_VISIBLE_DEVICES": ""})
    out = done.stdout + done.stderr
    assert done.returncode == 0, out
    assert "FAILED_PRECONDITION" not in out and "expected to be" not in out
    assert "B3 against B2: +40.0% [+39.9, +40.1], faster (significant)" in out
    paths = out.rstrip().splitlines()[-2:]
    for p in paths:
        assert pathlib.Path(p.strip()).is_file() and p.strip().endswith(".html"), out
    assert [p.name for p in tmp_path.iterdir()] == ["main-job"]
