"""check_code.py: the tree as it is passes, and each rule catches what it is for."""
import pathlib
import shutil
import sys

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).parent))
import check_code  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[2]


def write(root, rel, text):
    p = root / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text)


def test_the_tree_keeps_its_shape():
    assert check_code.long_functions(ROOT) + check_code.repeats(ROOT) == []


@pytest.mark.skipif(shutil.which("ctags") is None, reason="no ctags (scripts/install-deps.sh)")
def test_a_function_over_the_limit_is_named_and_migrations_are_not(tmp_path):
    body = "".join(f"  x += {i};\n" for i in range(check_code.MAX_FUNCTION_LINES))
    write(tmp_path, "server/core/runs/long.cc", "int Long(int x) {\n" + body + "  return x;\n}\n"
          "int Short(int x) {\n  return x;\n}\n")
    write(tmp_path, "db/migrations.cc", "void MigrateV1() {\n" + body + "}\n")
    write(tmp_path, "kernels/k.cu", "__global__ void Kernel(int* x) {\n" + body + "}\n")
    problems = check_code.long_functions(tmp_path)
    assert len(problems) == 2, problems
    text = "\n".join(problems)
    assert "server/core/runs/long.cc:1: Long is 123 lines (at most 120)" in text
    assert "kernels/k.cu:1: Kernel is 122 lines" in text


def block(names):
    """Twelve lines of code, its identifiers and numbers taken from `names`."""
    a, b, c = names
    return "".join(f"  int {a}{i} = {b}({c}, {i});\n  if ({a}{i} > {i}) return {a}{i};\n"
                   for i in range(6))


def test_a_block_written_twice_is_named_with_its_lines(tmp_path):
    write(tmp_path, "client/commands/one.cc", "int One(int q) {\n" + block("xfq") + "  return 0;\n}\n")
    write(tmp_path, "server/rpc/two.cc",
          "// text\n\nint Two(int w) {\n" + block("ygw") + "  return 1;\n}\n")
    problems = check_code.repeats(tmp_path)
    # the function, the block and its return: 14 lines of one shape
    assert problems == ["server/rpc/two.cc:3-16 ~ client/commands/one.cc:1-14: a block of 10 lines "
                        "or more stands twice; make it one, or say why at both places (a comment "
                        "with \"alike\" above each)"]


def test_a_reason_at_both_places_lets_it_stand_and_at_one_does_not(tmp_path):
    reason = "// Alike to the other on purpose: the types differ.\n"
    write(tmp_path, "kernels/a.cc", reason + "int A(int q) {\n" + block("xfq") + "}\n")
    write(tmp_path, "kernels/b.cc", reason + "int B(int w) {\n" + block("ygw") + "}\n")
    assert check_code.repeats(tmp_path) == []
    write(tmp_path, "kernels/b.cc", "int B(int w) {\n" + block("ygw") + "}\n")
    assert len(check_code.repeats(tmp_path)) == 1


def test_prose_braces_and_short_repeats_are_not_blocks(tmp_path):
    prose = "".join(f'    "line {i} of a long message "\n' for i in range(12))
    write(tmp_path, "common/a.cc", "const char* A =\n" + prose + ";\n")
    write(tmp_path, "common/b.cc", "const char* B =\n" + prose + ";\n")
    nine = "".join(f"  f({i});\n" for i in range(8))  # with the signature: 9 lines
    write(tmp_path, "common/c.cc", "void C() {\n" + nine + "}\n}\n}\n")
    write(tmp_path, "common/d.cc", "void D() {\n" + nine + "}\n}\n}\n")
    assert check_code.repeats(tmp_path) == []
