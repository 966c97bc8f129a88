#!/usr/bin/env python3
"""Waits, before a pod of ablationd ends, until the daemon's fleet outbox is empty: the preStop
hook of the DaemonSet (deploy/k8s/base/daemonset.yaml). The fleet's PostgreSQL is the durable
store; a node's SQLite holds each finished run in its outbox (table fleet_outbox, db/schema.md)
until PostgreSQL has committed it, and the daemon's exporter stops at SIGTERM after the run it is
exporting (server/core/fleet/exporter.h). The kubelet sends SIGTERM only once this hook returns,
so runs that finished just before, or while the database was briefly away, are exported first.

    ablationd-drain-outbox --db /var/lib/ablationd/results.db [--seconds 60]

Without a fleet database (ABLATION_FLEET_DB unset or empty, as the optional Secret leaves it)
nothing is exported and nothing is waited for. The outbox is read-only here (the daemon's
database, as the dashboards read it). Exit 0 once the outbox is empty (or there is nothing to
drain); 1 when runs still wait after SECONDS (the database away): the kubelet reports the hook's
failure with this message, and the runs stay in the outbox on the node's volume, exported by the
next pod on that node (with an emptyDir database they go with the pod)."""

import argparse
import os
import pathlib
import sqlite3
import sys
import time


def waiting(db):
    """(runs in the outbox, the oldest one's age in seconds); (0, 0) where there is no outbox."""
    if not os.path.exists(db):
        return 0, 0.0
    uri = pathlib.Path(db).resolve().as_uri() + "?mode=ro"
    try:
        with sqlite3.connect(uri, uri=True, timeout=5) as connection:
            count, oldest = connection.execute(
                "SELECT count(*), min(enqueued_at_ms) FROM fleet_outbox").fetchone()
    except sqlite3.OperationalError as e:
        if "no such table" in str(e):
            return 0, 0.0
        raise
    return count, (time.time() - oldest / 1000) if oldest else 0.0


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--db", required=True, help="the daemon's SQLite database (its --db)")
    parser.add_argument("--seconds", type=float, default=60,
                        help="how long to wait at most (keep it below the pod's grace period)")
    parser.add_argument("--poll", type=float, default=1, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if not os.environ.get("ABLATION_FLEET_DB", "").strip():
        print("drain-outbox: no fleet database (ABLATION_FLEET_DB): nothing to export")
        return 0
    deadline = time.monotonic() + args.seconds
    count, age = waiting(args.db)
    first = count
    while count and time.monotonic() < deadline:
        time.sleep(args.poll)
        count, age = waiting(args.db)
    if count == 0:
        print(f"drain-outbox: the outbox is empty ({first} run(s) exported while waiting)")
        return 0
    print(f"drain-outbox: {count} finished run(s) still wait in the outbox after "
          f"{args.seconds:g} s (the oldest for {age:.0f} s): is the fleet database away? They stay "
          f"in {args.db}, for the next daemon on this node to export", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
