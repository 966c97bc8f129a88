#!/usr/bin/env python3
"""Compares the kernels of two PTX files entry by entry, names aside.

What it is for: a restructuring of the Hopper family (kernels/sm90/) must leave the code each
rung runs unchanged. Template arguments appear in the mangled names of the kernels (and in the
names of their parameters, `<entry>_param_N`), so a change of the knobs' type renames every entry
without changing a single instruction. This script takes each `.entry` function of both files,
replaces its own name by ENTRY wherever it occurs in its text (the parameters follow), numbers the
labels of each function as if it were the only one (`$L__BB3_7` -> `$L__BB_7`), and compares the
bodies.

Pairing: by the order of the entries in the files (the order of instantiation), which a
restructuring keeps when it binds the rungs in the same order. An entry that differs from the one
at its place but equals another is reported as moved. The demangled names of each pair are printed
(through c++filt or cu++filt when one is on PATH), so that the pairing can be checked by eye.

Making the PTX, before and after a change (the flags of kernels/CMakeLists.txt, Release):
  nvcc -O3 -DNDEBUG -std=c++20 -gencode=arch=compute_90a,code=sm_90a -I. -ptx \
       -o /tmp/before-wgmma.ptx kernels/sm90/sm90_wgmma.cu        (and sm90_mma.cu, sm90_tma.cu)

Usage:
  tools/sm90_ptx_compare.py BEFORE.ptx AFTER.ptx [--diff N] [--allow-new]
  tools/sm90_ptx_compare.py --dirs BEFORE_PREFIX AFTER_PREFIX NAME...   (BEFORE_PREFIX-NAME.ptx)
Exit status 0 when every entry is identical after normalisation, 1 otherwise, 2 on bad input (a
file with no .entry in it among them). With --allow-new, entries the after file adds (a new build:
more entries after than before, each of before's found identical in after) are listed and do not
fail.
"""
import argparse
import difflib
import hashlib
import re
import shutil
import subprocess
import sys

# `.visible .entry` (an extern kernel), `.weak .entry`, or a bare `.entry` (a kernel of an
# anonymous namespace, as the few-row builds are).
ENTRY_RE = re.compile(r"^(?:\.(?:visible|weak)\s+)?\.entry\s+([A-Za-z_$][\w$]*)\s*\(", re.M)
LABEL_RE = re.compile(r"\$L__BB\d+_")


def entries(text):
    """[(name, body)] of the .entry functions, in file order; a body runs from `.entry` to the
    closing brace of its outermost block."""
    out = []
    for m in ENTRY_RE.finditer(text):
        name = m.group(1)
        start = m.start()
        brace = text.index("{", m.end())
        depth, i = 0, brace
        while True:
            c = text[i]
            if c == "{":
                depth += 1
            elif c == "}":
                depth -= 1
                if depth == 0:
                    break
            i += 1
        out.append((name, text[start : i + 1]))
    return out


def normalise(name, body):
    body = body.replace(name, "ENTRY")
    if name.startswith("_Z"):
        # A function-local static (a __shared__ array) is mangled _ZZ<the name past _Z>E<its
        # name>: renamed with its kernel.
        body = body.replace("_ZZ" + name[2:], "_ZZENTRY")
    body = LABEL_RE.sub("$L__BB_", body)
    return body


def demangle(names):
    tool = shutil.which("cu++filt") or shutil.which("c++filt")
    if not tool:
        return names
    try:
        r = subprocess.run([tool], input="\n".join(names), capture_output=True, text=True, check=True)
        return r.stdout.splitlines()
    except (OSError, subprocess.CalledProcessError):
        return names


class NoEntries(Exception):
    pass


def compare(before_path, after_path, diff_lines, allow_new=False):
    with open(before_path) as f:
        before = entries(f.read())
    with open(after_path) as f:
        after = entries(f.read())
    for path, found in ((before_path, before), (after_path, after)):
        if not found:
            raise NoEntries(f"{path}: no .entry function (not PTX, or no kernel in it)")
    print(f"== {before_path} ({len(before)} entries) vs {after_path} ({len(after)} entries)")
    nb = [normalise(n, b) for n, b in before]
    na = [normalise(n, b) for n, b in after]
    digest_after = {}
    for j, body in enumerate(na):
        digest_after.setdefault(hashlib.sha256(body.encode()).hexdigest(), j)
    names_b = demangle([n for n, _ in before])
    names_a = demangle([n for n, _ in after])
    ok = len(before) == len(after) or (allow_new and len(after) > len(before))
    if len(before) != len(after):
        print(f"  DIFFERENT NUMBER OF ENTRIES: {len(before)} before, {len(after)} after")
    matched = set()
    for i, body in enumerate(nb):
        lines = body.count("\n") + 1
        if i < len(na) and na[i] == body:
            matched.add(i)
            print(f"  [{i}] identical ({lines} lines)")
            print(f"      before: {names_b[i]}")
            print(f"      after:  {names_a[i]}")
            continue
        j = digest_after.get(hashlib.sha256(body.encode()).hexdigest())
        if j is not None:
            matched.add(j)
            print(f"  [{i}] identical to after's entry [{j}] (moved)")
            print(f"      before: {names_b[i]}")
            print(f"      after:  {names_a[j]}")
            continue
        ok = False
        print(f"  [{i}] DIFFERS ({lines} lines before)")
        print(f"      before: {names_b[i]}")
        if i < len(na):
            print(f"      after:  {names_a[i]}")
            diff = list(difflib.unified_diff(body.splitlines(), na[i].splitlines(), "before",
                                             "after", n=1, lineterm=""))
            changed = sum(1 for d in diff if d[:1] in "+-" and d[:3] not in ("+++", "---"))
            print(f"      {changed} lines added or removed; first {diff_lines} lines of the diff:")
            for d in diff[:diff_lines]:
                print("      " + d)
    for j in range(len(na)):
        if j not in matched:
            print(f"  after's entry [{j}] matches none of before's: {names_a[j]}")
    return ok


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("files", nargs="*")
    p.add_argument("--dirs", action="store_true",
                   help="files are BEFORE_PREFIX AFTER_PREFIX NAME...: compares PREFIX-NAME.ptx")
    p.add_argument("--diff", type=int, default=40, help="diff lines shown per differing entry")
    p.add_argument("--allow-new", action="store_true",
                   help="entries after has beyond before's (a new build, anywhere in the file) "
                   "do not fail, each of before's found identical in after")
    a = p.parse_args()
    if a.dirs:
        if len(a.files) < 3:
            p.error("--dirs needs BEFORE_PREFIX AFTER_PREFIX NAME...")
        pairs = [(f"{a.files[0]}-{n}.ptx", f"{a.files[1]}-{n}.ptx") for n in a.files[2:]]
    else:
        if len(a.files) != 2:
            p.error("two PTX files")
        pairs = [tuple(a.files)]
    ok = True
    for before, after in pairs:
        try:
            ok = compare(before, after, a.diff, a.allow_new) and ok
        except (OSError, NoEntries) as e:
            print(e, file=sys.stderr)
            return 2
    print("ALL IDENTICAL" if ok else "SOME ENTRIES DIFFER")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
