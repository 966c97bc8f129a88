"""The package installs with pip into a fresh virtual environment and imports there, away from
the build tree: what a notebook user does. Debian's grpcio and protobuf are the environment's
(--system-site-packages), and nothing is fetched (--no-index). It also installs with an
interpreter that has no `wheel` module (a venv of its own, and the python3 first on PATH where
that is not Debian's), with and without build isolation; what it installs is typed (PEP 561)
and names nothing of the build machine."""

import os
import pathlib
import shutil
import subprocess
import venv

import pytest

PACKAGE = pathlib.Path(os.environ["PYTHONPATH"].split(":")[0])
CLEAN = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}


def make_venv(where, system_site_packages, python=None):
    """A venv with pip; with `python`, made by that interpreter (another than this one)."""
    if python is None:
        venv.EnvBuilder(system_site_packages=system_site_packages, with_pip=True).create(where)
    else:
        subprocess.run([python, "-m", "venv", str(where)], check=True, capture_output=True)
    return where / "bin" / "python"


def pip_install(python, *flags, cwd):
    return subprocess.run([str(python), "-m", "pip", "install", "--no-deps", "--no-index",
                           "--disable-pip-version-check", "-q", *flags, str(PACKAGE)],
                          capture_output=True, text=True, env=CLEAN, cwd=cwd)


def installed_files(python):
    """Every file pip installed for the distribution, as absolute paths (from its RECORD)."""
    probe = ("import importlib.metadata as m\n"
             "d = m.distribution('ablationd')\n"
             "print('\\n'.join(str(d.locate_file(f).resolve()) for f in d.files))\n")
    done = subprocess.run([str(python), "-c", probe], capture_output=True, text=True, env=CLEAN)
    assert done.returncode == 0, done.stderr
    return [pathlib.Path(line) for line in done.stdout.split()]


def test_pip_installs_the_package_into_a_fresh_environment(tmp_path):
    assert (PACKAGE / "pyproject.toml").is_file(), f"{PACKAGE} has no pyproject.toml"
    env_dir = tmp_path / "venv"
    python = make_venv(env_dir, system_site_packages=True)
    done = pip_install(python, "--no-build-isolation", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    probe = ("import ablationd, ablation.v1.ablation_pb2 as pb, ablation.v1.ablation_pb2_grpc\n"
             "import ablationd.aio, ablationd.plot, ablationd.progress, importlib.metadata\n"
             "print(ablationd.__file__)\n"
             "print(pb.RunRequest(variants=['cublas_bf16']).variants[0])\n"
             "print(hasattr(ablationd, 'Client') and hasattr(ablationd.aio, 'Client'))\n"
             "print(','.join(sorted(importlib.metadata.metadata('ablationd')"
             ".get_all('Provides-Extra'))))\n")
    done = subprocess.run([str(python), "-c", probe], capture_output=True, text=True, env=CLEAN,
                          cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    where, variant, has_client, extras = done.stdout.split()
    assert pathlib.Path(where).is_relative_to(env_dir), f"imported from {where}, not the environment"
    assert variant == "cublas_bf16"
    assert has_client == "True"
    assert extras == "pandas,plot,progress"  # matplotlib and tqdm: pip install 'ablationd[plot]'
    shown = subprocess.run([str(python), "-m", "pip", "show", "ablationd"], capture_output=True,
                           text=True, env=CLEAN)
    assert "Name: ablationd" in shown.stdout
    assert "Requires: grpcio, protobuf" in shown.stdout


def check_what_was_installed(python):
    files = installed_files(python)
    names = {f.relative_to(f.parents[1]).as_posix() for f in files if f.parent.name in
             ("ablationd", "ablation", "v1")}
    # PEP 561: both packages typed, the messages with protoc's stubs.
    assert {"ablationd/py.typed", "ablation/py.typed"} <= names, sorted(names)
    assert "v1/ablation_pb2.pyi" in names and "v1/report_pb2.pyi" in names, sorted(names)
    # Nothing of the build machine: no _build.py, and no installed file names the build tree.
    assert "ablationd/_build.py" not in names
    build_tree = str(PACKAGE.resolve().parent)
    for f in files:
        if f.suffix in (".py", ".pyi", ".txt", "") and f.is_file():
            assert build_tree not in f.read_text(errors="replace"), f"{f} names {build_tree}"


@pytest.mark.parametrize("isolation", [True, False], ids=["isolated", "no-build-isolation"])
def test_an_interpreter_without_the_wheel_module_installs_it_offline(tmp_path, isolation):
    python = make_venv(tmp_path / "venv", system_site_packages=False)
    lacks = subprocess.run([str(python), "-c", "import wheel"], capture_output=True, env=CLEAN)
    assert lacks.returncode != 0, "this venv has the wheel module: the test would prove nothing"
    done = pip_install(python, *([] if isolation else ["--no-build-isolation"]), cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "bdist_wheel" not in done.stderr
    check_what_was_installed(python)


def other_python3():
    """The python3 first on PATH when it is not Debian's (pyenv's, say), else None."""
    found = shutil.which("python3", path=CLEAN.get("PATH"))
    if not found or pathlib.Path(found).resolve() == pathlib.Path("/usr/bin/python3").resolve():
        return None
    done = subprocess.run([found, "-c", "import sys; print(sys.prefix)"], capture_output=True,
                          text=True, env=CLEAN)
    return found if done.returncode == 0 and done.stdout.strip() != "/usr" else None


@pytest.mark.skipif(other_python3() is None, reason="the python3 first on PATH is Debian's")
def test_the_python3_first_on_path_installs_it(tmp_path):
    python = make_venv(tmp_path / "venv", system_site_packages=False, python=other_python3())
    done = pip_install(python, "--no-build-isolation", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    check_what_was_installed(python)


@pytest.mark.skipif(shutil.which("mypy") is None, reason="mypy (Debian: mypy) is not installed")
def test_a_type_checker_reads_the_installed_packages_types(tmp_path):
    """mypy checks a notebook's code against the installed package's annotations and the
    messages' stubs, instead of calling the package untyped."""
    python = make_venv(tmp_path / "venv", system_site_packages=True)
    done = pip_install(python, "--no-build-isolation", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    notebook = tmp_path / "notebook.py"
    notebook.write_text("import ablationd\n"
                        "from ablation.v1 import ablation_pb2\n"
                        "client: int = ablationd.connect('127.0.0.1:1', wait=0)\n"
                        "name: int = ablation_pb2.Run().host_name\n")
    checked = subprocess.run(["mypy", "--no-incremental", "--python-executable", str(python),
                              str(notebook)], capture_output=True, text=True, env=CLEAN,
                             cwd=tmp_path)
    out = checked.stdout + checked.stderr
    assert "py.typed" not in out and "missing library stubs" not in out, out
    assert 'expression has type "Client"' in out, out  # connect's declared return type
    assert 'expression has type "str"' in out, out     # a message field's type, from the .pyi
