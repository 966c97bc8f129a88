"""tools/sm90_bucket_table.py: the per-bucket tables (S8, S10, S12) from measured results databases. Its
rule on databases made here, its reasons on the real evidence, and the table in the tree made
again from the databases it names."""
import importlib.util
import lzma
import os
import re
import sqlite3
import subprocess
import sys

import pytest

SOURCE = os.environ.get("ABLATION_SOURCE_DIR",
                        os.path.join(os.path.dirname(__file__), "..", ".."))
TOOL = os.path.join(SOURCE, "tools", "sm90_bucket_table.py")
TABLES = {"s8": os.path.join(SOURCE, "kernels", "sm90", "sm90_bucket_picks.inc"),
          "s10": os.path.join(SOURCE, "kernels", "sm90", "sm90_bucket_picks_s10.inc"),
          "s12": os.path.join(SOURCE, "kernels", "sm90", "sm90_bucket_picks_s12.inc")}
EVIDENCE = "evidence/2026-12-05-h100-small-shapes/burst-1.db.xz"

spec = importlib.util.spec_from_file_location("sm90_bucket_table", TOOL)
tool = importlib.util.module_from_spec(spec)
spec.loader.exec_module(tool)

COLUMNS = """run_id INTEGER, variant TEXT, dtype TEXT, m INTEGER, n INTEGER, k INTEGER,
    status TEXT, verification_outcome TEXT, median_cycles REAL, median_ms REAL,
    solo_measured INTEGER, solo_median_cycles REAL"""


def make_db(path, rows, compress=False, dispatched=False):
    """A database of `rows`: (run, variant, m, n, k, cycles[, solo cycles[, outcome[, the entry
    it dispatched to]]]); with `dispatched`, of schema v22 (a dispatched_to column)."""
    con = sqlite3.connect(path)
    extra = ", dispatched_to TEXT NOT NULL DEFAULT ''" if dispatched else ""
    con.execute(f"CREATE TABLE measurements ({COLUMNS}{extra})")
    for row in rows:
        run, variant, m, n, k, cycles = row[:6]
        solo = row[6] if len(row) > 6 else None
        outcome = row[7] if len(row) > 7 else "passed"
        values = [run, variant, m, n, k, outcome, cycles, cycles / 1e6, 1 if solo else 0, solo]
        if dispatched:
            values.append(row[8] if len(row) > 8 else "")
        more = ", ?" if dispatched else ""
        con.execute("INSERT INTO measurements VALUES "
                    f"(?, ?, 'bf16', ?, ?, ?, 'ok', ?, ?, ?, ?, ?{more})", values)
    con.commit()
    con.close()
    if compress:
        with open(path, "rb") as f, lzma.open(path + ".xz", "wb") as out:
            out.write(f.read())
        os.unlink(path)
        return path + ".xz"
    return path


def run_tool(*args):
    return subprocess.run([sys.executable, TOOL, *args], capture_output=True, text=True,
                          cwd=SOURCE)


D, A, B = "sm90_s7_swap_tiles", "sm90_h12_fitted_unclustered", "sm90_s1_few_rows"


def test_a_build_beating_the_default_everywhere_beyond_the_noise_is_picked(tmp_path):
    db = make_db(str(tmp_path / "r.db"), [
        (1, D, 16, 4096, 4096, 100), (1, A, 16, 4096, 4096, 80), (1, B, 16, 4096, 4096, 90),
        (1, D, 8, 2048, 4096, 100), (1, A, 8, 2048, 4096, 85), (1, B, 8, 2048, 4096, 70),
        # 1 row: A within the noise (x1.01), B slower
        (1, D, 1, 4096, 4096, 100), (1, A, 1, 4096, 4096, 99), (1, B, 1, 4096, 4096, 120),
    ], compress=True)
    rows = tool.rows_of(db)
    chosen, figures = tool.picks(rows, D)
    # bucket (1, 4, 0): A x1.25 and x1.176 (geomean 1.213); B x1.111 and x1.429 (1.26): B wins
    assert chosen[(1, 4, 0)][0] == B
    assert chosen[(1, 4, 0)][1] == pytest.approx((100 / 90 * 100 / 70) ** 0.5)
    assert figures[((1, 4, 0), A)][0] == pytest.approx((100 / 80 * 100 / 85) ** 0.5)
    assert (0, 4, 0) not in chosen  # nothing beyond the noise at one row
    out = run_tool("--table", "s8", "--default", D, db)
    assert out.returncode == 0, out.stderr
    assert f'{{1, 4, 0, "{B}"}}' in out.stdout
    assert "std::array<BucketPick, 1> kPicks" in out.stdout
    assert f'kDefault = "{D}"' in out.stdout
    assert "namespace bucket_s8 {" in out.stdout and "}  // namespace bucket_s8" in out.stdout
    assert "<- picked" in out.stderr


def test_a_table_never_picks_a_per_bucket_rung(tmp_path):
    # S8 (a table itself) ran faster than S9 at both shapes: S10's table over S9 does not pick it;
    # a kernel build that did picks.
    db = make_db(str(tmp_path / "r.db"), [
        (1, "sm90_s9_deeper_split", 512, 4096, 4096, 100), (1, "sm90_s8_buckets", 512, 4096, 4096, 80),
        (1, "sm90_h12_rows64", 512, 4096, 4096, 90),
        (1, "sm90_s9_deeper_split", 256, 4096, 4096, 100), (1, "sm90_s8_buckets", 256, 4096, 4096, 80),
        (1, "sm90_h12_rows64", 256, 4096, 4096, 90),
    ])
    chosen, figures = tool.picks(tool.rows_of(db), "sm90_s9_deeper_split")
    assert chosen[(3, 4, 0)][0] == "sm90_h12_rows64"
    assert not any(v == "sm90_s8_buckets" for _, v in figures)


def test_a_build_slower_at_one_shape_or_missing_or_failed_is_not_picked(tmp_path):
    db = make_db(str(tmp_path / "r.db"), [
        # A: x1.5 at one shape, x0.95 at the other: its geomean wins, its worst does not
        (1, D, 16, 4096, 4096, 100), (1, A, 16, 4096, 4096, 66.7),
        (1, D, 16, 1024, 4096, 100), (1, A, 16, 1024, 4096, 105.3),
        # B fast but not measured at the second shape of its bucket
        (1, D, 128, 4096, 4096, 100), (1, B, 128, 4096, 4096, 50),
        (1, D, 128, 1024, 4096, 100),
        # A fast, but its verification failed
        (1, D, 512, 4096, 4096, 100), (1, A, 512, 4096, 4096, 50, None, "failed"),
    ])
    chosen, _ = tool.picks(tool.rows_of(db), D)
    assert chosen == {}


def test_a_build_measured_in_another_run_counts_where_it_ran_beside_the_default(tmp_path):
    # Run 1 (a sweep) has the default alone at both shapes; run 2 (a run of tile builds) has A
    # beside it at both: A covers the bucket, over run 2's cells only.
    db = make_db(str(tmp_path / "r.db"), [
        (1, D, 256, 4096, 4096, 100), (1, D, 512, 4096, 4096, 100),
        (2, D, 256, 4096, 4096, 100), (2, A, 256, 4096, 4096, 85),
        (2, D, 512, 4096, 4096, 100), (2, A, 512, 4096, 4096, 90),
        # at 512 x 256, A ran only in a run without the default: no cell, so no pick there
        (1, D, 512, 256, 4096, 100), (3, A, 512, 256, 4096, 10),
    ])
    chosen, figures = tool.picks(tool.rows_of(db), D)
    assert chosen[(3, 4, 0)][0] == A
    assert figures[((3, 4, 0), A)][2] == 2
    assert (3, 3, 0) not in chosen


def test_solo_spans_decide_where_both_have_one_and_runs_count_alike(tmp_path):
    db = make_db(str(tmp_path / "r.db"), [
        # the window says A is slower (its neighbour drew the power); both solo spans say faster
        (1, D, 16, 4096, 4096, 100, 100), (1, A, 16, 4096, 4096, 120, 80),
        # a second run of the same shape: also faster
        (2, D, 16, 4096, 4096, 100, 100), (2, A, 16, 4096, 4096, 120, 90),
    ])
    chosen, figures = tool.picks(tool.rows_of(db), D)
    assert chosen[(1, 4, 0)][0] == A
    assert figures[((1, 4, 0), A)][2] == 2  # two cells: one per run
    assert figures[((1, 4, 0), A)][0] == pytest.approx((100 / 80 * 100 / 90) ** 0.5)


def test_a_per_bucket_rung_s_rows_count_as_cells_of_the_build_they_ran(tmp_path):
    # Run 1 measured B beside the default (x1.053); in run 2 the per-bucket rung ran B (its
    # dispatched_to) beside the default and lost (x0.971): B is no pick. Where a run has B's own
    # row at that shape, that row is the cell, not the rung's.
    rung = "sm90_s12_buckets"
    rows = [(1, D, 16, 4096, 4096, 100), (1, B, 16, 4096, 4096, 95),
            (2, D, 16, 4096, 4096, 100), (2, rung, 16, 4096, 4096, 103, None, "passed", B)]
    cells = tool.rows_of(make_db(str(tmp_path / "a.db"), rows, dispatched=True))
    assert cells[(str(tmp_path / "a.db"), 2, 16, 4096, 4096)][B] == (103, None, True)
    chosen, figures = tool.picks(cells, D)
    assert (1, 4, 0) not in chosen
    assert figures[((1, 4, 0), B)][2:] == (2, 1)  # two cells, one of them the rung's row
    with_own = rows + [(2, B, 16, 4096, 4096, 96)]
    cells = tool.rows_of(make_db(str(tmp_path / "b.db"), with_own, dispatched=True))
    assert cells[(str(tmp_path / "b.db"), 2, 16, 4096, 4096)][B] == (96, None, False)
    assert tool.picks(cells, D)[0][(1, 4, 0)][0] == B
    out = run_tool("--table", "s12", "--default", D, make_db(
        str(tmp_path / "d.db"), [(1, D, 16, 4096, 4096, 100), (1, rung, 16, 4096, 4096, 90, None,
                                                                 "passed", B)], dispatched=True))
    assert out.returncode == 0, out.stderr
    assert "1 cells (1 of a per-bucket rung's rows)" in out.stdout
    # A row the rung ran on the default itself, or before v22 (no column), adds nothing.
    plain = [row[:6] for row in rows]
    cells = tool.rows_of(make_db(str(tmp_path / "c.db"), plain))
    assert B not in cells[(str(tmp_path / "c.db"), 2, 16, 4096, 4096)]


def test_no_default_row_makes_an_empty_table_and_says_so(tmp_path):
    db = make_db(str(tmp_path / "r.db"), [(1, A, 16, 4096, 4096, 80)])
    out = run_tool("--table", "s8", "--default", D, db)
    assert out.returncode == 0, out.stderr
    assert "std::array<BucketPick, 0>" in out.stdout
    assert "no passed row" in out.stderr


def test_bad_input_is_named(tmp_path):
    out = run_tool("--table", "s8", "--default", D, str(tmp_path / "none.db"))
    assert out.returncode != 0 and "no such database" in out.stderr
    junk = tmp_path / "junk.db"
    junk.write_bytes(b"not sqlite at all" * 100)
    out = run_tool("--table", "s8", "--default", D, str(junk))
    assert out.returncode != 0 and "not a results database" in out.stderr
    db = make_db(str(tmp_path / "r.db"), [(1, D, 16, 4096, 4096, 100)])
    out = run_tool("--table", "S8; int x", "--default", D, db)
    assert out.returncode != 0 and "lower-case identifier" in out.stderr
    out = run_tool("--default", D, db)
    assert out.returncode != 0 and "--table" in out.stderr


def test_the_real_evidence_names_the_sixteen_row_loss():
    # At 16 rows the CUDA-core few-row path of S3-S5 ran at half H12's speed (the H100 run): the
    # table made against S5 sends those buckets to H12, and keeps one row on S5.
    chosen, figures = tool.picks(tool.rows_of(os.path.join(SOURCE, EVIDENCE)),
                                 "sm90_s5_short_ranges")
    assert chosen[(1, 4, 0)][0] == A
    assert chosen[(1, 4, 0)][1] > 1.5
    assert (0, 4, 0) not in chosen
    assert figures[((0, 4, 0), "sm90_s3_split_k")][0] == pytest.approx(1.0, abs=0.02)


def test_the_tool_and_the_header_class_shapes_alike():
    header = open(os.path.join(SOURCE, "kernels", "sm90", "sm90_buckets.h")).read()

    def bounds(name):
        found = re.search(name + r" = \{([^}]*)\}", header)
        return tuple(int(x) for x in found.group(1).split(","))
    assert bounds("kBucketRowBounds") == tool.ROW_BOUNDS
    assert bounds("kBucketDepthBounds") == tool.DEPTH_BOUNDS
    assert tool.bucket_of(16, 4096, 14336) == (1, 4, 1)
    assert tool.bucket_of(512, 14336, 4096) == (3, 5, 0)


@pytest.mark.parametrize("table", sorted(TABLES))
def test_the_tables_in_the_tree_are_made_again_from_the_databases_they_name(table):
    text = open(TABLES[table]).read()
    default = re.search(r'kDefault = "([^"]+)"', text).group(1)
    sources = re.findall(r"^//   (\S+)$", text, re.M)
    assert sources, "the table names no database"
    rule = re.search(r"Rule: (\w+)\.", text)
    out = run_tool("--table", table, "--default", default,
                   *(["--rule", rule.group(1)] if rule else []), *sources)
    assert out.returncode == 0, out.stderr
    assert out.stdout == text
