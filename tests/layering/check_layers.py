#!/usr/bin/env python3
"""The walls of server/core and client/: no include runs from a lower folder to a higher one.

server/core's folders stand in one order, lowest first (LAYERS), and so do client/'s
(CLIENT_LAYERS, client/README.md). A file may include headers of its own folder and of the folders
below it, never above; a client command includes no other command (what two commands share lives
below them); the core never includes the rpc layer or gRPC; the kernels, the worker process and
the database never include the core. What the daemon and the worker share lives in
server/protocol/ (PROTOCOL_MAY_INCLUDE), which includes neither of them, and the core and the
worker never include each other. The compiler process (server/compile/) stands on
kernels/user/build.h and common/ alone, and only it includes its code or NVRTC. The metrics stand above the core (an observer the daemon wires
in): the core never includes server/metrics/ (ABOVE_THE_CORE). Reads the
#include lines of the tree as text, prints every include that breaks a rule, and exits 1 when
there is one. Run from anywhere: check_layers.py [REPO_ROOT]; with --dot it prints the folders'
include graph, generated from the code, as Graphviz (an include that runs back up in red).
"""
import pathlib
import re
import sys

# Lowest first. What each holds is in server/core/README.md.
LAYERS = ["base", "gpu", "history", "plan", "workers", "userkernels", "setup", "fleet", "runs", "inspect",
          "queries", "daemon"]
# client/'s folders, lowest first; app.cc and main.cc stand above them all, at client/'s root.
CLIENT_LAYERS = ["output", "report", "cli", "sources", "runs", "commands"]
INCLUDE = re.compile(r'^\s*#\s*include\s*[<"]([^">]+)[">]', re.M)
SOURCES = ("*.h", "*.cc", "*.cu", "*.cuh", "*.in")
# What the core builds on, which so never includes it.
OUTSIDE = {"kernels/": "the kernels' code", "db/": "the database layer",
           "server/worker/": "the worker process", "client/": "the client",
           "common/": "the common library"}
# The common library is the bottom of every process: it includes only itself and the generated API.
COMMON_MAY_INCLUDE = ("common/", "ablation/")
# What the daemon and the worker share (server/protocol/README.md): it builds on the common library
# and the API only.
PROTOCOL_MAY_INCLUDE = ("server/protocol/", "common/", "ablation/")
# The compiler process (server/compile/, NVRTC in a confined child of the daemon) stands on the
# build it is asked for (kernels/user/build.h) and the common library, and nothing outside
# server/compile/ includes its code: NVRTC never enters the daemon's or the worker's address space.
# Of third-party code it names abseil's strings (the base64 a cubin travels in) in quotes.
COMPILE_MAY_INCLUDE = ("server/compile/", "kernels/user/build.h", "common/", "absl/strings/")
# What stands above the core besides the rpc layer (the gRPC rule keeps that one out), never
# included by it.
ABOVE_THE_CORE = {"server/metrics/": "the metrics", "server/daemon/": "the daemon's start-up"}


def layer_of(path):
    """The layer of a server/core path ("server/core/runs/run_job.h" -> "runs"), else None."""
    parts = pathlib.PurePosixPath(path).parts
    if len(parts) >= 4 and parts[:2] == ("server", "core"):
        return parts[2]
    return None


def client_layer_of(path):
    """The folder of a client path ("client/cli/parse.h" -> "cli"); "" for client/'s root files;
    None outside client/."""
    parts = pathlib.PurePosixPath(path).parts
    if not parts or parts[0] != "client":
        return None
    return parts[1] if len(parts) >= 3 else ""


def client_problems(rel, target, where):
    """The client's walls for one include of a client file."""
    here, there = client_layer_of(rel), client_layer_of(target)
    if here is None or there is None:
        return []
    if here != "" and here not in CLIENT_LAYERS:
        return [f"{rel}: client/ files live at its root or in one of the folders {CLIENT_LAYERS}"]
    if there == "" and here != "":
        return [f"{where}: {here}/ may not include client/'s root (app, main)"]
    if here == "" or there not in CLIENT_LAYERS:
        return []
    if CLIENT_LAYERS.index(there) > CLIENT_LAYERS.index(here):
        return [f"{where}: client/{here}/ is below client/{there}/ and may not include it"]
    own = pathlib.PurePosixPath(rel).stem
    if here == "commands" and there == "commands" and pathlib.PurePosixPath(target).stem != own:
        return [f"{where}: a command includes no other command (what they share lives below "
                "client/commands/)"]
    return []


def check(root):
    root = pathlib.Path(root)
    problems = []
    files = [p for pattern in SOURCES for p in root.glob("**/" + pattern)
             if "build" not in p.relative_to(root).parts[:1]]
    for path in sorted(files):
        rel = path.relative_to(root).as_posix()
        text = path.read_text(errors="replace")
        here = layer_of(rel)
        if rel.startswith("server/core/") and here not in LAYERS:
            problems.append(f"{rel}: server/core/ files live in one of the folders {LAYERS}")
            continue
        for number, line in enumerate(text.splitlines(), 1):
            m = INCLUDE.match(line)
            if not m:
                continue
            target = m.group(1)
            where = f"{rel}:{number}: includes {target}"
            there = layer_of(target)
            if target.startswith("server/core/") and there not in LAYERS:
                problems.append(f"{where}: no such core folder")
            elif here is not None:
                if there is not None and LAYERS.index(there) > LAYERS.index(here):
                    problems.append(f"{where}: {here}/ is below {there}/ and may not include it")
                if target.startswith("server/rpc/") or target.startswith("grpc"):
                    problems.append(f"{where}: the core knows nothing of gRPC")
            if rel.startswith("common/") and '"' in line and not target.startswith(
                    COMMON_MAY_INCLUDE):
                problems.append(f"{where}: the common library includes only common/ and the API")
            if rel.startswith("server/protocol/") and '"' in line and not target.startswith(
                    PROTOCOL_MAY_INCLUDE):
                problems.append(f"{where}: server/protocol/ (what the daemon and the worker "
                                "share) includes only itself, common/ and the API")
            if rel.startswith("server/compile/") and '"' in line and not target.startswith(
                    COMPILE_MAY_INCLUDE):
                problems.append(f"{where}: the compiler process (server/compile/) includes only "
                                "itself, kernels/user/build.h and common/")
            if not rel.startswith(("server/compile/", "tests/")) and (
                    target.startswith("server/compile/") or target == "nvrtc.h"):
                problems.append(f"{where}: NVRTC lives in the compiler process alone (the daemon "
                                "runs it as a child: server/core/userkernels/compiler.h)")
            if rel.startswith("server/worker/") and target.startswith(
                    tuple(ABOVE_THE_CORE) + ("server/rpc/",)):
                problems.append(f"{where}: the worker process includes nothing of the daemon")
            if here is not None:
                if target.startswith("server/worker/"):
                    problems.append(f"{where}: the core never includes the worker process (what "
                                    "they share is in server/protocol/)")
                for prefix, who in ABOVE_THE_CORE.items():
                    if target.startswith(prefix):
                        problems.append(f"{where}: {who} stand above the core, which never "
                                        "includes them (it reports to DaemonEvents)")
            # The fleet's PostgreSQL code stands apart from the SQLite store (the client links
            # it without the store), and the client reaches storage only through it.
            if rel.startswith("db/fleet/") and (
                    (target.startswith("db/") and not target.startswith("db/fleet/"))
                    or target == "sqlite3.h"):
                problems.append(f"{where}: db/fleet/ knows nothing of the SQLite store")
            if rel.startswith("client/") and target.startswith("db/") and not target.startswith(
                    "db/fleet/"):
                problems.append(f"{where}: the client reads storage only through db/fleet/")
            problems += client_problems(rel, target, where)
            if here is None and there is not None:
                for prefix, who in OUTSIDE.items():
                    if rel.startswith(prefix):
                        problems.append(f"{where}: {who} never includes the core")
    return problems


def folder_graph(root):
    """{(from folder, to folder): includes} between server/core's folders, from the code."""
    root = pathlib.Path(root)
    edges = {}
    for path in sorted((root / "server" / "core").glob("**/*")):
        if path.suffix not in (".h", ".cc"):
            continue
        here = layer_of(path.relative_to(root).as_posix())
        for m in INCLUDE.finditer(path.read_text(errors="replace")):
            there = layer_of(m.group(1))
            if there and there != here:
                edges[(here, there)] = edges.get((here, there), 0) + 1
    return edges


def dot(root):
    """The folders of server/core and their includes as Graphviz, lowest at the bottom:
    check_layers.py --dot | dot -Tsvg > core.svg"""
    lines = ["digraph core {", "  rankdir=BT; node [shape=box];"]
    for layer in LAYERS:
        lines.append(f'  "{layer}";')
    for (a, b), n in sorted(folder_graph(root).items()):
        back = LAYERS.index(b) > LAYERS.index(a)
        style = ' color=red penwidth=2' if back else ''
        lines.append(f'  "{a}" -> "{b}" [label={n}{style}];')
    lines.append("}")
    return "\n".join(lines)


def main(argv):
    if "--dot" in argv:
        argv = [a for a in argv if a != "--dot"]
        root = argv[1] if len(argv) > 1 else pathlib.Path(__file__).resolve().parents[2]
        print(dot(root))
        return 0
    root = argv[1] if len(argv) > 1 else pathlib.Path(__file__).resolve().parents[2]
    problems = check(root)
    for p in problems:
        print(p)
    print(f"{len(problems)} include(s) against the layers {' < '.join(LAYERS)} (server/core/), "
          f"{' < '.join(CLIENT_LAYERS)} < its root (client/), and server/protocol/ below the "
          "core and the worker, server/metrics/ above the core")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
