"""The package installs with pip into a fresh virtual environment and imports there, away from
the build tree: what a notebook user does. Debian's grpcio and protobuf are the environment's
(--system-site-packages), and nothing is fetched (--no-index, --no-build-isolation)."""

import os
import pathlib
import subprocess
import sys
import venv

import pytest

PACKAGE = pathlib.Path(os.environ["PYTHONPATH"].split(":")[0])


def test_pip_installs_the_package_into_a_fresh_environment(tmp_path):
    assert (PACKAGE / "pyproject.toml").is_file(), f"{PACKAGE} has no pyproject.toml"
    env_dir = tmp_path / "venv"
    venv.EnvBuilder(system_site_packages=True, with_pip=True).create(env_dir)
    python = env_dir / "bin" / "python"
    clean = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    done = subprocess.run([str(python), "-m", "pip", "install", "--no-deps", "--no-index",
                           "--no-build-isolation", "--disable-pip-version-check", "-q", str(PACKAGE)],
                          capture_output=True, text=True, env=clean, cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    probe = ("import ablationd, ablation.v1.ablation_pb2 as pb, ablation.v1.ablation_pb2_grpc\n"
             "import ablationd.aio, ablationd.plot, ablationd.progress, importlib.metadata\n"
             "print(ablationd.__file__)\n"
             "print(pb.RunRequest(variants=['cublas_bf16']).variants[0])\n"
             "print(hasattr(ablationd, 'Client') and hasattr(ablationd.aio, 'Client'))\n"
             "print(','.join(sorted(importlib.metadata.metadata('ablationd')"
             ".get_all('Provides-Extra'))))\n")
    done = subprocess.run([str(python), "-c", probe], capture_output=True, text=True, env=clean,
                          cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    where, variant, has_client, extras = done.stdout.split()
    assert pathlib.Path(where).is_relative_to(env_dir), f"imported from {where}, not the environment"
    assert variant == "cublas_bf16"
    assert has_client == "True"
    assert extras == "pandas,plot,progress"  # matplotlib and tqdm: pip install 'ablationd[plot]'
    shown = subprocess.run([str(python), "-m", "pip", "show", "ablationd"], capture_output=True,
                           text=True, env=clean)
    assert "Name: ablationd" in shown.stdout
    assert "Requires: grpcio, protobuf" in shown.stdout
