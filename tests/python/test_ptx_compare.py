"""tools/sm90_ptx_compare.py: entries found whether extern (.visible) or of an anonymous namespace
(bare .entry), names and label numbers aside; a changed instruction, a lost entry or a file with
no entry fails; an added entry fails unless --allow-new."""
import os
import subprocess
import sys

TOOL = os.path.join(os.environ["ABLATION_SOURCE_DIR"], "tools", "sm90_ptx_compare.py")


def kernel(name, op="add.s32", visible=True, label=0):
    head = ".visible .entry" if visible else ".entry"
    return (f"{head} {name}(\n\t.param .u64 {name}_param_0\n)\n{{\n"
            f"\t.reg .b32 %r<4>;\n$L__BB{label}_1:\n\t{op} %r1, %r2, %r3;\n"
            f"\t@%p1 bra $L__BB{label}_1;\n\tret;\n}}\n")


def run(tmp_path, before, after, *flags):
    b, a = tmp_path / "before.ptx", tmp_path / "after.ptx"
    b.write_text(".version 9.0\n.target sm_90a\n" + before)
    a.write_text(".version 9.0\n.target sm_90a\n" + after)
    r = subprocess.run([sys.executable, TOOL, *flags, str(b), str(a)], capture_output=True,
                       text=True)
    return r.returncode, r.stdout + r.stderr


def test_renamed_entries_of_both_kinds_are_identical(tmp_path):
    before = kernel("_Z1fv", label=0) + kernel("_ZN12_GLOBAL__N_11gEv", visible=False, label=1)
    after = kernel("_Z1fIiEvv", label=3) + kernel("_ZN12_GLOBAL__N_11gIiEEvv", visible=False,
                                                  label=7)
    rc, out = run(tmp_path, before, after)
    assert rc == 0, out
    assert "(2 entries)" in out and "ALL IDENTICAL" in out


def test_a_kernels_shared_array_is_renamed_with_it(tmp_path):
    def with_local(name):
        local = "_ZZ" + name[2:] + "E7partial"
        return kernel(name).replace("{\n", f"{{\n\t.shared .align 4 .b8 {local}[64];\n"
                                    f"\tmov.u32 %r1, {local};\n", 1)
    rc, out = run(tmp_path, with_local("_Z1kILb1EEvv"), with_local("_Z1kILb1ELi4EEvv"))
    assert rc == 0, out
    rc, out = run(tmp_path, with_local("_Z1kILb1EEvv"),
                  with_local("_Z1kILb1ELi4EEvv").replace("E7partial", "E5other"))
    assert rc == 1, out


def test_a_changed_instruction_in_a_bare_entry_differs(tmp_path):
    rc, out = run(tmp_path, kernel("k", visible=False), kernel("k", op="sub.s32", visible=False))
    assert rc == 1, out
    assert "DIFFERS" in out


def test_a_file_without_entries_is_bad_input(tmp_path):
    rc, out = run(tmp_path, "", kernel("k"))
    assert rc == 2, out
    assert "no .entry function" in out


def test_an_added_entry_fails_unless_allowed_and_a_lost_one_always(tmp_path):
    one, two = kernel("a"), kernel("new", op="mul.lo.s32", label=1) + kernel("a", label=2)
    rc, out = run(tmp_path, one, two)
    assert rc == 1, out
    rc, out = run(tmp_path, one, two, "--allow-new")
    assert rc == 0, out
    assert "identical to after's entry [1] (moved)" in out
    assert "after's entry [0] matches none of before's" in out
    rc, out = run(tmp_path, two, one, "--allow-new")
    assert rc == 1, out
