"""The PEP 517 build backend of the ablationd package: in the tree (pyproject.toml's
`backend-path`), on the standard library alone, so that `pip install build/default/python` needs
nothing but pip, whichever python3 runs it.

setuptools cannot be that backend here: before setuptools 70.1 its wheels come from the separate
`wheel` module, which pyenv's, a fresh venv's or a python.org interpreter does not have ("invalid
command 'bdist_wheel'" with --no-build-isolation), and with build isolation pip must first
download setuptools and wheel, which an offline machine cannot. A wheel of pure Python is a zip
of the files and four small text files (PEP 427, 566, 376); writing them takes less code than
working around either. What goes in is read from pyproject.toml: [project] for the metadata and
[tool.ablationd-wheel] for the packages and the files left out (the build tree's `_build.py`,
which names this build's client by its absolute path)."""

import base64
import hashlib
import io
import os
import pathlib
import tarfile
import tomllib
import zipfile

_KEPT = ("*.py", "*.pyi", "py.typed")
_TIMESTAMP = (1980, 1, 1, 0, 0, 0)  # zip's earliest: the same files make the same wheel


def _project():
    with open("pyproject.toml", "rb") as f:
        config = tomllib.load(f)
    return config["project"], config.get("tool", {}).get("ablationd-wheel", {})


def _dist_info(project):
    return f"{project['name'].replace('-', '_')}-{project['version']}.dist-info"


def _metadata(project):
    lines = ["Metadata-Version: 2.1", f"Name: {project['name']}",
             f"Version: {project['version']}"]
    if "description" in project:
        lines.append(f"Summary: {project['description']}")
    if "requires-python" in project:
        lines.append(f"Requires-Python: {project['requires-python']}")
    lines += [f"Requires-Dist: {r}" for r in project.get("dependencies", [])]
    for extra, requirements in project.get("optional-dependencies", {}).items():
        lines.append(f"Provides-Extra: {extra}")
        lines += [f'Requires-Dist: {r}; extra == "{extra}"' for r in requirements]
    return "\n".join(lines) + "\n"


def _files(options):
    """(path in the wheel, path here) of every file of the packages, sorted."""
    excluded = set(options.get("exclude", []))
    out = []
    for package in options["packages"]:
        folder = pathlib.Path(*package.split("."))
        for pattern in _KEPT:
            for path in folder.glob(pattern):
                name = path.as_posix()
                if name not in excluded and path.is_file():
                    out.append((name, path))
    return sorted(set(out))


def _record_line(name, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def _write_wheel(wheel_directory, contents):
    """contents: [(name, bytes)] without the dist-info's RECORD, which is made here."""
    project, _ = _project()
    info = _dist_info(project)
    filename = f"{info[:-len('.dist-info')]}-py3-none-any.whl"
    record = [_record_line(name, data) for name, data in contents] + [f"{info}/RECORD,,"]
    contents = contents + [(f"{info}/RECORD", ("\n".join(record) + "\n").encode())]
    with zipfile.ZipFile(os.path.join(wheel_directory, filename), "w",
                         zipfile.ZIP_DEFLATED) as wheel:
        for name, data in contents:
            entry = zipfile.ZipInfo(name, _TIMESTAMP)
            entry.external_attr = 0o644 << 16
            entry.compress_type = zipfile.ZIP_DEFLATED
            wheel.writestr(entry, data)
    return filename


def _dist_info_files(project):
    info = _dist_info(project)
    wheel = ("Wheel-Version: 1.0\nGenerator: ablationd_backend\nRoot-Is-Purelib: true\n"
             "Tag: py3-none-any\n")
    return [(f"{info}/METADATA", _metadata(project).encode()), (f"{info}/WHEEL", wheel.encode())]


# ---------------------------------------------------------------- the PEP 517 and 660 hooks


def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def get_requires_for_build_editable(config_settings=None):
    return []


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    project, _ = _project()
    folder = pathlib.Path(metadata_directory, _dist_info(project))
    folder.mkdir(parents=True, exist_ok=True)
    for name, data in _dist_info_files(project):
        (folder / pathlib.PurePosixPath(name).name).write_bytes(data)
    return folder.name


prepare_metadata_for_build_editable = prepare_metadata_for_build_wheel


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    project, options = _project()
    contents = [(name, path.read_bytes()) for name, path in _files(options)]
    return _write_wheel(wheel_directory, contents + _dist_info_files(project))


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    """A wheel that only puts this folder on sys.path (a .pth file): edits here, and a rebuild
    of the stubs, are seen without installing again."""
    project, _ = _project()
    pth = (f"{project['name']}-editable.pth", (os.getcwd() + "\n").encode())
    return _write_wheel(wheel_directory, [pth] + _dist_info_files(project))


def build_sdist(sdist_directory, config_settings=None):
    project, options = _project()
    stem = f"{project['name']}-{project['version']}"
    files = _files(options) + [("pyproject.toml", pathlib.Path("pyproject.toml"))]
    files += [(p.as_posix(), p) for p in sorted(pathlib.Path("_backend").glob("*.py"))]
    filename = f"{stem}.tar.gz"
    with tarfile.open(os.path.join(sdist_directory, filename), "w:gz") as sdist:
        for name, data in [("PKG-INFO", _metadata(project).encode())] + [
                (name, path.read_bytes()) for name, path in files]:
            entry = tarfile.TarInfo(f"{stem}/{name}")
            entry.size, entry.mode = len(data), 0o644
            sdist.addfile(entry, io.BytesIO(data))
    return filename
