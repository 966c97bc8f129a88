#!/usr/bin/env python3
"""Two rules of the code's shape, over server/, client/, db/, kernels/ and common/.

- Functions: none longer than MAX_FUNCTION_LINES (migrations and generated code aside), so that a
  reader who starts at one finds named steps, not a wall. The functions and their ends come from
  Universal Ctags (Debian's universal-ctags; scripts/install-deps.sh installs it), which reads C++
  and CUDA without compiling them.
- Repeats: no block of MIN_REPEAT_LINES lines or more stands twice in server/, client/, kernels/ or
  common/, to the letter or in the same shape with other names, strings and numbers, unless a
  comment at both places says why (a comment with the word "alike" in the lines just above the
  block: "Words of an enum by a switch ...: such switches look alike").

Written by hand rather than taken from a tool: the Debian archive's clone finders (pmd-cpd is not
packaged for Debian 12; simian is not free) either are missing or compare tokens of one language
without the "unless a comment says why" exception this project keeps. What counts as the same
shape: each line with its comments removed and its identifiers, numbers and strings each replaced
by one placeholder, keywords kept; blank lines, lines of punctuation alone (braces, `};`) and
lines of string literals alone (a message continued) are skipped, so that a block's length counts
lines of code.

Run from anywhere: check_code.py [REPO_ROOT] prints every problem and exits 1 when there is one.
"""
import collections
import pathlib
import re
import shutil
import subprocess
import sys

MAX_FUNCTION_LINES = 120
MIN_REPEAT_LINES = 10
FUNCTION_ROOTS = ("server", "client", "db", "kernels", "common")
REPEAT_ROOTS = ("server", "client", "kernels", "common")
SOURCES = (".h", ".cc", ".cu", ".cuh")
# Schema migrations are a history: each step is written once and never edited again.
FUNCTION_EXEMPT = ("db/migrations.cc", "db/fleet/fleet_schema.cc")
# How far above a block (in lines) its "alike" comment may stand.
REASON_WINDOW = 12

KEYWORDS = set("""
alignas alignof auto bool break case catch char class const consteval constexpr constinit
const_cast continue co_await co_return co_yield decltype default delete do double dynamic_cast
else enum explicit export extern false float for friend goto if inline int long mutable namespace
new noexcept nullptr operator override private protected public register reinterpret_cast
return short signed sizeof static static_assert static_cast struct switch template this
thread_local throw true try typedef typeid typename union unsigned using virtual void volatile
while final __global__ __device__ __host__ __forceinline__ __shared__
""".split())
TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\'|[A-Za-z_]\w*|\d[\w.]*|\S')
LINE_COMMENT = re.compile(r"//.*$")


def source_files(root, roots):
    root = pathlib.Path(root)
    for top in roots:
        for path in sorted((root / top).glob("**/*")):
            if path.suffix in SOURCES and path.is_file():
                yield path


# ---- functions -------------------------------------------------------------------------------

def functions(root, paths):
    """[(path, first line, last line, name)] of the function definitions Ctags finds."""
    ctags = shutil.which("ctags")
    if ctags is None:
        raise RuntimeError("no ctags on PATH: install universal-ctags (scripts/install-deps.sh)")
    rel = [p.relative_to(root).as_posix() for p in paths]
    out = subprocess.run(
        [ctags, "--languages=C++", "--langmap=C++:+.cu.cuh", "--kinds-C++=f", "--fields=+ne",
         "-x", "--_xformat=%{input}\t%{line}\t%{end}\t%{name}", "-L", "-"],
        input="\n".join(rel), cwd=root, capture_output=True, text=True, check=True).stdout
    found = []
    for line in out.splitlines():
        parts = line.split("\t")
        if len(parts) == 4 and parts[2].isdigit():
            found.append((parts[0], int(parts[1]), int(parts[2]), parts[3]))
    return found


def long_functions(root):
    root = pathlib.Path(root)
    paths = [p for p in source_files(root, FUNCTION_ROOTS)
             if p.relative_to(root).as_posix() not in FUNCTION_EXEMPT]
    problems = []
    for path, first, last, name in functions(root, paths):
        n = last - first + 1
        if n > MAX_FUNCTION_LINES:
            problems.append(f"{path}:{first}: {name} is {n} lines (at most {MAX_FUNCTION_LINES}): "
                            "split it into named steps")
    return problems


# ---- repeats ---------------------------------------------------------------------------------

def shape_of(text):
    """The line's shape: '' for a line with nothing to say (blank, comment, punctuation)."""
    code = LINE_COMMENT.sub("", text).strip()
    if code.startswith(("#include", "#pragma")):
        return ""
    words = []
    for t in TOKEN.findall(code):
        if t[0] in "\"'":
            words.append('"')  # a string: no word (a line of prose continued is not code)
        elif t[0].isdigit():
            words.append("N")
        elif t[0].isalpha() or t[0] == "_":
            words.append(t if t in KEYWORDS else "I")
        else:
            words.append(t)
    if not any(w[0].isalpha() for w in words):
        return ""  # braces, `});`, `) {`: no line of its own
    return " ".join(words)


def significant_lines(path):
    """[(line number, shape, text)] of the lines that say something, and the file's lines."""
    lines = path.read_text(errors="replace").splitlines()
    out = []
    in_block_comment = False
    for number, text in enumerate(lines, 1):
        stripped = text.strip()
        if in_block_comment:
            in_block_comment = "*/" not in stripped
            continue
        if stripped.startswith("/*"):
            in_block_comment = "*/" not in stripped
            continue
        shape = shape_of(text)
        if shape:
            out.append((number, shape))
    return out, lines


def has_reason(lines, first_line, last_line):
    """A comment saying why the block looks like another: "alike" in a comment on one of the
    REASON_WINDOW lines above the block or in it, or just above the declaration it stands in (the
    nearest line above it that starts at the left margin)."""
    i = first_line - 1  # 0-based
    for j in range(max(0, i - REASON_WINDOW), last_line):
        if says_alike(lines[j]):
            return True
    j = i - 1
    while j >= 0 and (not lines[j].strip() or lines[j][0] in " \t}#/"):
        j -= 1
    while j > 0 and lines[j - 1].strip().startswith("//"):
        j -= 1
        if says_alike(lines[j]):
            return True
    return False


def says_alike(line):
    return "//" in line and "alike" in line[line.index("//"):].lower()


def repeats(root, roots=REPEAT_ROOTS, min_lines=MIN_REPEAT_LINES):
    """Pairs of places sharing min_lines significant lines of one shape, without a reason."""
    root = pathlib.Path(root)
    files = {}
    windows = collections.defaultdict(list)
    for path in source_files(root, roots):
        rel = path.relative_to(root).as_posix()
        sig, lines = significant_lines(path)
        files[rel] = (sig, lines)
        for i in range(len(sig) - min_lines + 1):
            key = "\n".join(s for _, s in sig[i:i + min_lines])
            windows[key].append((rel, i))
    # A window that stands in many places is a pattern of the language, not a copy.
    pairs = {}
    for places in windows.values():
        if len(places) < 2 or len(places) > 8:
            continue
        for a in range(len(places)):
            for b in range(a + 1, len(places)):
                (fa, ia), (fb, ib) = places[a], places[b]
                if fa == fb and abs(ia - ib) < min_lines:
                    continue  # overlapping runs of one block
                pairs.setdefault((fa, fb), []).append((ia, ib))
    problems = []
    for (fa, fb), starts in sorted(pairs.items()):
        # Windows that overlap on both sides are one repeated block (a block repeated with lines
        # inserted, or a regular run such as a switch, matches at several offsets).
        clusters = []
        for ia, ib in sorted(starts):
            for c in clusters:
                if ia <= c[1] + min_lines and c[2] - min_lines <= ib <= c[3] + min_lines:
                    c[1], c[2], c[3] = max(c[1], ia), min(c[2], ib), max(c[3], ib)
                    break
            else:
                clusters.append([ia, ia, ib, ib])
        sig_a, lines_a = files[fa]
        sig_b, lines_b = files[fb]
        for a0, a1, b0, b1 in clusters:
            a_first, a_last = sig_a[a0][0], sig_a[a1 + min_lines - 1][0]
            b_first, b_last = sig_b[b0][0], sig_b[b1 + min_lines - 1][0]
            if fa == fb and a_first <= b_last and b_first <= a_last:
                continue  # one regular block matching itself shifted
            if has_reason(lines_a, a_first, a_last) and has_reason(lines_b, b_first, b_last):
                continue
            problems.append(f"{fa}:{a_first}-{a_last} ~ {fb}:{b_first}-{b_last}: a block of "
                            f"{min_lines} lines or more stands twice; make it one, or say why "
                            "at both places (a comment with \"alike\" above each)")
    return problems


def main(argv):
    root = pathlib.Path(argv[1] if len(argv) > 1 else pathlib.Path(__file__).resolve().parents[2])
    problems = long_functions(root) + repeats(root)
    for p in problems:
        print(p)
    print(f"{len(problems)} problem(s): functions of at most {MAX_FUNCTION_LINES} lines in "
          f"{', '.join(FUNCTION_ROOTS)}; no block of {MIN_REPEAT_LINES} lines twice in "
          f"{', '.join(REPEAT_ROOTS)}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
