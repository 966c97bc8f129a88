"""No line of the source refers to a seed document or a tracker issue by number.

A comment that cites a seed document by its three-digit number and section, or a tracker issue by
its number, sends a reader to a text in another language or to a tracker they may not have; the
comment should say the fact or rule itself. This walks the tracked files of the repository (git ls-files, or the tree
when there is no git checkout), skipping notes/ (the lab notebook), build folders and binary
files, and names FILE:LINE for every line with such a tag. Every line is read, not only comments:
a tag in a docstring, a Markdown page or a user-visible description is no easier to read. A
random-number seed ("seed 1234567", "seed = 7") is not a tag: the seed documents are numbered with
three digits starting at 0.
"""
import os
import pathlib
import re
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]

# A seed cited by number (three digits from 0, "seeds" too), an issue by number (with or without
# "#"), and the section sign the seeds' sections are cited with. The sign is written as an escape,
# and the examples below are assembled, so that this file passes its own check.
TAG = re.compile(r"\b[Ss]eeds?\s+0\d\d\b|\b[Ii]ssue\s+#?\d+\b|\u00a7")
# Top-level folders that are not source: the lab notebook and build trees.
SKIPPED_TOP = ("notes",)


def skipped(rel):
    """Whether a repository-relative POSIX path is outside the checked source."""
    parts = pathlib.PurePosixPath(rel).parts
    if not parts:
        return True
    top = parts[0]
    return top in SKIPPED_TOP or top.startswith("build") or top == ".git"


def tracked_files(root):
    """Repository-relative paths: git's tracked and untracked-but-not-ignored files when root is
    the top of a git checkout, else every file under root."""
    root = pathlib.Path(root).resolve()
    try:
        top = subprocess.run(["git", "-C", str(root), "rev-parse", "--show-toplevel"],
                             capture_output=True, text=True, check=True).stdout.strip()
        if pathlib.Path(top).resolve() == root:
            out = subprocess.run(
                ["git", "-C", str(root), "ls-files", "-z", "--cached", "--others",
                 "--exclude-standard"], capture_output=True, check=True).stdout
            return sorted({p.decode("utf-8", "replace") for p in out.split(b"\0") if p})
    except (OSError, subprocess.CalledProcessError):
        pass
    files = []
    for here, dirs, names in os.walk(root):
        rel_dir = pathlib.Path(here).relative_to(root).as_posix()
        dirs[:] = [d for d in dirs
                   if not skipped(d if rel_dir == "." else f"{rel_dir}/{d}")
                   and d not in ("__pycache__", "node_modules")]
        for name in names:
            files.append(name if rel_dir == "." else f"{rel_dir}/{name}")
    return sorted(files)


def read_text(path):
    """The file's text, or None for a binary file (a NUL byte, or not UTF-8)."""
    try:
        data = path.read_bytes()
    except OSError:
        return None
    if b"\0" in data:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def tags_in(rel, text):
    """'FILE:LINE: text' for every line of text that carries a seed or issue tag."""
    return [f"{rel}:{number}: {line.strip()}"
            for number, line in enumerate(text.splitlines(), 1) if TAG.search(line)]


def check(root):
    root = pathlib.Path(root)
    problems = []
    for rel in tracked_files(root):
        if skipped(rel):
            continue
        path = root / rel
        if not path.is_file() or path.is_symlink():
            continue
        text = read_text(path)
        if text is not None:
            problems.extend(tags_in(rel, text))
    return problems


def test_no_source_line_names_a_seed_or_an_issue_by_number():
    problems = check(ROOT)
    assert problems == [], (
        "say what the seed section or the issue says instead of its number:\n"
        + "\n".join(problems))


# The tags of the synthetic files are assembled, so that this file does not carry them itself.
SEED = "se" + "ed"
ISSUE = "is" + "sue"
SECTION = "\u00a7"


def write(root, rel, data):
    p = root / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(data, bytes):
        p.write_bytes(data)
    else:
        p.write_text(data, encoding="utf-8")


@pytest.mark.parametrize("line", [
    f"// The smem2reg kernels ({SEED} 001 {SECTION}1.3 pitfall 2).",
    f"# The pipe_ family ({ISSUE} 5, {SEED} 000)",
    f"/// Reading SASS ({SEED.capitalize()} 000 step 7).",
    f"// {ISSUE.capitalize()} 14: the measured answer leads.",
    f"// See {ISSUE} #21.",
    f"// The plan's {SECTION}1.5 table.",
])
def test_a_tag_is_named_with_its_file_and_line(tmp_path, line):
    write(tmp_path, "kernels/x.cuh", "#pragma once\n\n" + line + "\nint x;\n")
    assert check(tmp_path) == [f"kernels/x.cuh:3: {line}"]


def test_random_number_seeds_and_skipped_places_are_not_tags(tmp_path):
    write(tmp_path, "tests/stats_test.cc",
          f"// The reference outputs of splitmix64.c for {SEED} 1234567.\n"
          f"  t.set_{SEED}(7);  // another {SEED}, another order; {SEED} 42\n"
          f"// ldmatrix {ISSUE}s 4.0x fewer loads; the {ISSUE} is the bandwidth\n")
    write(tmp_path, "notes/old-session.md", f"# {ISSUE.capitalize()} 5, {SEED} 000\n")
    write(tmp_path, "build/gen/x.h", f"// {SEED} 001 {SECTION}2\n")
    write(tmp_path, "kernels/blob.bin", f"\0\1// {SEED} 001\n".encode())
    assert check(tmp_path) == []
    # The same tag outside those places is caught.
    write(tmp_path, "README.md", f"The {SEED} 001 ladder.\n")
    assert check(tmp_path) == [f"README.md:1: The {SEED} 001 ladder."]
