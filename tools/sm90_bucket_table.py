#!/usr/bin/env python3
"""A per-bucket table of the small-shape ladder (S8, S10, S12), from measured results databases.

    tools/sm90_bucket_table.py --table s8 --default VARIANT DB... > kernels/sm90/sm90_bucket_picks.inc
    tools/sm90_bucket_table.py --table s10 --default VARIANT DB... > kernels/sm90/sm90_bucket_picks_s10.inc
    tools/sm90_bucket_table.py --table s12 --rule worst --default VARIANT DB... \
        > kernels/sm90/sm90_bucket_picks_s12.inc

A shape's bucket is the class of each of M, N and K: the first bound at or above it (M and N: 1, 16,
128, 512, 4096, more; K: 4096, 16384, more; kernels/sm90/sm90_buckets.h has the same). For every run
and shape where `--default` (the ladder's rung the table is over) ran and passed verification, each
other Hopper build measured there (an sm90_ bf16 variant other than a per-bucket rung,
sm90_s*_buckets: a table does not pick a table; status ok, verification passed) has a speed-up: the
default's median time over its own, in cycles (the work, whatever the clock; solo spans' where both
have one, else the window's; milliseconds where a row has no cycles). A build replaces the default
in a bucket only where it ran beside the default at every shape of the bucket the default ran (in
one run or more: each run where both ran is a cell), its geometric mean speed-up over those cells
exceeds 1 + MARGIN, and it is at no shape slower than 1 - MARGIN: picks inside the noise would be a
coin toss, and a pick that loses somewhere is not a pick. A per-bucket rung's own row names the
build it ran there (dispatched_to, schema v22): it is a cell of that build beside the default in its
run, where the run has no row of the build itself at that shape, so that a later run of the rung can
overturn a pick. Of those, the fastest: by default the one of the highest geometric mean (S8's and
S10's tables), with `--rule worst` the one whose slowest cell is fastest (S12's). A bucket spans
shapes a build may serve unevenly: at 129 to 512 rows a 64x64 tile gained x1.50 at 256 rows but
x1.01 at 512, where the 64x256 tile gained x1.15, and the geometric mean picked the 64x64 tile for
the bucket, losing 12% at the serving preset's 512 rows to the pick it replaced. The worst cell
ranks a build by the gain it gives at every shape measured. Buckets where nothing was measured keep
the default (all of them, where the default itself was not measured: said on stderr).

The output is a C++ fragment for kernels/sm90/sm90_buckets.h, its constants in the namespace
bucket_TABLE; it names the databases it was made from (as given on the command line) so that it can
be made again and compared (tests/python/test_bucket_table.py does), and its rule where that is not
the geometric mean. Databases may be xz-compressed (NAME.db.xz). The per-bucket figures go to
stderr: the reasons for each pick.
"""
import argparse
import lzma
import math
import os
import re
import sqlite3
import sys
import tempfile

ROW_BOUNDS = (1, 16, 128, 512, 4096)
DEPTH_BOUNDS = (4096, 16384)
MARGIN = 0.02
RULES = {  # how a bucket's qualifying builds are ranked: a chosen entry's key
    "geomean": lambda entry: (entry[1], entry[2]),
    "worst": lambda entry: (entry[2], entry[1]),
}
TABLE_RUNGS = "sm90\\_s%\\_buckets"  # the per-bucket rungs, as a LIKE pattern (\\_: an underscore)


def class_of(value, bounds):
    for i, bound in enumerate(bounds):
        if value <= bound:
            return i
    return len(bounds)


def bucket_of(m, n, k):
    return (class_of(m, ROW_BOUNDS), class_of(n, ROW_BOUNDS), class_of(k, DEPTH_BOUNDS))


def rows_of(path):
    """(path, run, m, n, k) -> {variant: (window time, solo time or None, whether the row is a
    per-bucket rung's that ran the variant)} of the passed rows of
    the database at `path` (decompressed into a temporary folder first where it ends in .xz)."""
    if not path.endswith(".xz"):
        return rows_in(sqlite3.connect(f"file:{path}?mode=ro", uri=True), path)
    with tempfile.TemporaryDirectory() as tmp:
        db = os.path.join(tmp, "results.db")
        with lzma.open(path) as src, open(db, "wb") as dst:
            dst.write(src.read())
        return rows_in(sqlite3.connect(db), path)


def rows_in(con, path):
    def select(name, which):
        return f"""
        SELECT run_id, m, n, k, {name}, median_cycles, median_ms,
               CASE WHEN solo_measured = 1 THEN solo_median_cycles END
        FROM measurements
        WHERE dtype = 'bf16' AND status = 'ok' AND verification_outcome = 'passed'
          AND {name} LIKE 'sm90\\_%' ESCAPE '\\' AND variant {which} ? ESCAPE '\\'"""

    out = {}

    def add(query, from_rung):
        for run, m, n, k, variant, cycles, ms, solo in con.execute(query, (TABLE_RUNGS,)):
            window = cycles if cycles else ms
            if not window or window <= 0:
                continue
            cell = out.setdefault((path, run, m, n, k), {})
            if not from_rung or variant not in cell:
                cell[variant] = (window, solo if solo else None, from_rung)

    add(select("variant", "NOT LIKE"), False)
    # A per-bucket rung's row names the build it ran (schema v22): a cell of that build too,
    # where the run has no row of the build itself at that shape.
    if "dispatched_to" in {row[1] for row in con.execute("PRAGMA table_info(measurements)")}:
        add(select("dispatched_to", "LIKE"), True)
    con.close()
    return out


def speedup(default, other):
    """The default's time over the other's, solo where both have a solo span."""
    if default[1] and other[1]:
        return default[1] / other[1]
    return default[0] / other[0]


def picks(rows, default, rule="geomean"):
    """{bucket: (variant, geomean, worst, cells, of them a rung's rows)} of the buckets where a
    build beats `default`,
    and the figures of every bucket measured (for the reasons). Of the builds that qualify, the
    one of the highest geometric mean (rule "geomean") or of the highest worst cell ("worst")."""
    per_bucket = {}
    for (path, run, m, n, k), variants in rows.items():
        if default not in variants:
            continue
        per_bucket.setdefault(bucket_of(m, n, k), []).append(((m, n, k), variants))
    chosen, figures = {}, {}
    for bucket, cells in sorted(per_bucket.items()):
        shapes = {shape for shape, _ in cells}
        candidates = set().union(*(set(v) for _, v in cells)) - {default}
        for variant in sorted(candidates):
            mine = [(shape, v) for shape, v in cells if variant in v]
            if {shape for shape, _ in mine} != shapes:
                continue  # not beside the default at every shape of the bucket
            ups = [speedup(v[default], v[variant]) for _, v in mine]
            geomean = math.exp(sum(math.log(u) for u in ups) / len(ups))
            ran = sum(1 for _, v in mine if v[variant][2])
            figures[(bucket, variant)] = (geomean, min(ups), len(ups), ran)
            if geomean > 1 + MARGIN and min(ups) >= 1 - MARGIN:
                entry = (variant, geomean, min(ups), len(ups), ran)
                if bucket not in chosen or RULES[rule](entry) > RULES[rule](chosen[bucket]):
                    chosen[bucket] = entry
    return chosen, figures


def rung_rows(count):
    """How many of a build's cells are a per-bucket rung's rows that ran it (none: nothing)."""
    return f" ({count} of a per-bucket rung's rows)" if count else ""


def fragment(chosen, table, default, sources, rule="geomean"):
    lines = [
        "// Generated by tools/sm90_bucket_table.py (do not edit; make it again from the",
        "// databases below and compare: tests/python/test_bucket_table.py). Made from:",
    ]
    if rule != "geomean":
        lines[1] = lines[1].replace(" Made from:", f" Rule: {rule}. Made from:")
    lines += [f"//   {s}" for s in sources]
    lines.append(f"namespace bucket_{table} {{")
    lines.append(f'inline constexpr std::string_view kDefault = "{default}";')
    lines.append(f"inline constexpr std::array<BucketPick, {len(chosen)}> kPicks = {{{{")
    for (mc, nc, kc), (variant, geomean, worst, count, ran) in sorted(chosen.items()):
        lines.append(f'    {{{mc}, {nc}, {kc}, "{variant}"}},  // x{geomean:.3f} geomean, '
                     f"x{worst:.3f} worst, {count} cells{rung_rows(ran)}")
    lines.append("}};")
    lines.append(f"}}  // namespace bucket_{table}")
    return "\n".join(lines) + "\n"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--table", required=True,
                        help="the table's name: its constants go in namespace bucket_TABLE (s8)")
    parser.add_argument("--default", required=True, help="the rung the table is over")
    parser.add_argument("--rule", choices=sorted(RULES), default="geomean",
                        help="how a bucket's qualifying builds are ranked: by their geometric "
                        "mean speed-up (S8, S10), or by their worst cell (S12 on)")
    parser.add_argument("databases", nargs="+")
    args = parser.parse_args(argv)
    if not re.fullmatch(r"[a-z][a-z0-9]*", args.table):
        parser.error(f"--table {args.table!r}: a lower-case identifier such as s8")
    rows = {}
    for path in args.databases:
        if not os.path.exists(path):
            parser.error(f"no such database: {path}")
        try:
            rows.update(rows_of(path))
        except (sqlite3.DatabaseError, lzma.LZMAError) as e:
            parser.error(f"{path}: not a results database ({e})")
    if not any(args.default in v for v in rows.values()):
        print(f"{args.default}: no passed row in these databases, so no bucket has a pick",
              file=sys.stderr)
    chosen, figures = picks(rows, args.default, args.rule)
    for (bucket, variant), (geomean, worst, count, ran) in sorted(figures.items()):
        mark = " <- picked" if chosen.get(bucket, ("",))[0] == variant else ""
        print(f"bucket {bucket}: {variant} x{geomean:.3f} geomean, x{worst:.3f} worst over "
              f"{count} cells{rung_rows(ran)}{mark}", file=sys.stderr)
    sys.stdout.write(fragment(chosen, args.table, args.default, args.databases, args.rule))
    return 0


if __name__ == "__main__":
    sys.exit(main())
