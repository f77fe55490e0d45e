"""The wheel: ``pip install`` puts only ``hz`` into site-packages, and hz works in a fresh
environment beside a distribution that ships top-level ``runtime`` and ``compiler`` packages.

The wheel is built as docs/install.md says to build it offline (no index, no build isolation:
this environment's setuptools), then installed into a fresh venv. pip resolves hz's declared
dependencies there, offline (``--no-index``), from wheels repacked out of the distributions this
test environment has installed: no package index, no download, and still nothing in the venv
that hz's metadata does not ask for.
"""

from __future__ import annotations

import base64
import hashlib
import importlib.metadata
import shutil
import subprocess
import sys
import venv
import zipfile
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from hz import __version__
from hz.runtime.artifacts.distribution import DISTRIBUTION
from tests.helpers.contracts import GREET as CONTRACT

REPO = Path(__file__).resolve().parents[2]

#: The other distribution's packages: importing either says whose it is.
CLASH = {
    "runtime/__init__.py": "WHOSE = 'clash'\n",
    "compiler/__init__.py": "WHOSE = 'clash'\n",
}


def _run(argv: list[str | Path], cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(a) for a in argv],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=600,
        env={"PATH": "/usr/bin:/bin", "HOME": str(cwd), **env},
        check=False,
    )


def _write_wheel(path: Path, files: dict[str, bytes], dist_info: str) -> Path:
    """Writes a wheel of ``files`` (their names relative to site-packages) with its RECORD."""
    record = []
    for name, data in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
        record.append(f"{name},sha256={digest.decode()},{len(data)}")
    record.append(f"{dist_info}/RECORD,,")
    with zipfile.ZipFile(path, "w") as wheel:  # stored: these wheels are unpacked once
        for name, data in files.items():
            wheel.writestr(name, data)
        wheel.writestr(f"{dist_info}/RECORD", "\n".join(record) + "\n")
    return path


def _clash_wheel(directory: Path) -> Path:
    """A wheel of the distribution ``clash`` 1.0, written by hand (no build backend needed)."""
    files = {
        **CLASH,
        "clash-1.0.dist-info/METADATA": "Metadata-Version: 2.1\nName: clash\nVersion: 1.0\n",
        "clash-1.0.dist-info/WHEEL": (
            "Wheel-Version: 1.0\nGenerator: hz-tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
        ),
    }
    encoded = {name: text.encode() for name, text in files.items()}
    return _write_wheel(directory / "clash-1.0-py3-none-any.whl", encoded, "clash-1.0.dist-info")


def _requirements(name: str) -> set[str]:
    """The distributions that installing ``name`` pulls in here, transitively (markers and
    extras evaluated), by their normalized names; ``name`` not included."""
    found: dict[str, frozenset[str]] = {}
    todo: list[tuple[str, frozenset[str]]] = [(name, frozenset())]
    while todo:
        wanted, extras = todo.pop()
        key = canonicalize_name(wanted)
        if key in found and extras <= found[key]:
            continue
        extras = found[key] = found.get(key, frozenset()) | extras
        for line in importlib.metadata.distribution(wanted).requires or ():
            req = Requirement(line)
            envs = [{"extra": extra} for extra in extras or {""}]
            if req.marker is None or any(req.marker.evaluate(env) for env in envs):
                todo.append((req.name, frozenset(req.extras)))
    return set(found) - {canonicalize_name(name)}


#: What pip writes into a dist-info when it installs (the wheel never carries them).
INSTALLED_ONLY = {"INSTALLER", "REQUESTED", "RECORD", "direct_url.json"}


def _repack(name: str, directory: Path) -> Path:
    """A wheel of the installed distribution ``name``, from the files its RECORD lists.

    Files outside site-packages (``../../bin/...``: console scripts) are left out; pip writes
    the scripts again from ``entry_points.txt``."""
    dist = importlib.metadata.distribution(name)
    meta = dist.metadata
    files: dict[str, bytes] = {}
    dist_info = ""
    for file in dist.files or ():
        parts = file.parts
        if parts[0] == ".." or "__pycache__" in parts:
            continue
        if parts[0].endswith(".dist-info"):
            dist_info = parts[0]
            if len(parts) == 2 and parts[1] in INSTALLED_ONLY:
                continue
        files[file.as_posix()] = file.read_binary()
    wheel_text = dist.read_text("WHEEL") or ""
    tags = [
        line.split(":", 1)[1].strip() for line in wheel_text.splitlines() if line.startswith("Tag:")
    ]
    # A wheel lists one tag per line (py2-none-any, py3-none-any): its file name joins each
    # part's values (py2.py3-none-any), or pip would judge it by the first tag alone.
    parts = zip(*(tag.split("-") for tag in tags), strict=True)
    tag = "-".join(".".join(dict.fromkeys(values)) for values in parts)
    stem = f"{canonicalize_name(meta['Name']).replace('-', '_')}-{meta['Version']}-{tag}"
    return _write_wheel(directory / f"{stem}.whl", files, dist_info)


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh venv with hz's wheel and the clashing distribution installed; its folder."""
    work = tmp_path_factory.mktemp("wheel")
    source = work / "source"  # a copy, so the build leaves nothing in the checkout
    source.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(REPO / name, source)
    for name in ("hz", "compiler", "runtime"):
        shutil.copytree(
            REPO / name, source / name, symlinks=True, ignore=shutil.ignore_patterns("__pycache__")
        )
    # The offline build of docs/install.md: no index, this environment's setuptools.
    build = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation"]
    built = _run([*build, "-w", work, source], work, PIP_NO_INDEX="1")
    assert built.returncode == 0, built.stderr
    (wheel,) = work.glob("*.whl")
    assert wheel.name == f"hz_contracts-{__version__}-py3-none-any.whl"
    house = work / "wheelhouse"
    house.mkdir()
    for name in sorted(_requirements(DISTRIBUTION)):
        _repack(name, house)
    env = work / "venv"
    venv.create(env, with_pip=False)
    # This environment's pip, installing into the venv's interpreter.
    pip = [sys.executable, "-m", "pip", "--python", env / "bin" / "python"]
    done = _run(
        [*pip, "install", "--no-index", "--find-links", house, wheel, _clash_wheel(work)], work
    )
    assert done.returncode == 0, done.stderr
    return env


def _site_packages(env: Path) -> Path:
    (site,) = env.glob("lib/python*/site-packages")
    return site


def test_pip_installs_only_hz_into_site_packages(installed: Path) -> None:
    site = _site_packages(installed)
    info = f"hz_contracts-{__version__}.dist-info"
    record = (site / info / "RECORD").read_text()
    tops = {line.split("/")[0] for line in record.splitlines() if not line.startswith("..")}
    assert tops == {"hz", info}
    assert (site / "hz" / "compiler" / "data" / "workflow-contract.schema.json").is_file()
    assert (site / "hz" / "runtime" / "artifacts" / "runs.schema.json").is_file()
    assert not (site / "hz" / "compiler").is_symlink()  # the links became real folders


def test_hz_works_beside_top_level_runtime_and_compiler(installed: Path, tmp_path: Path) -> None:
    (tmp_path / "greet.yaml").write_text(CONTRACT)
    python = installed / "bin" / "python"
    whose = _run(
        [python, "-c", "import runtime, compiler; print(runtime.WHOSE, compiler.WHOSE)"], tmp_path
    )
    assert whose.stdout == "clash clash\n"
    validated = _run([installed / "bin" / "hz", "validate", "greet.yaml"], tmp_path)
    assert (validated.returncode, validated.stdout, validated.stderr) == (
        0,
        "",
        "Success: no issues found in 1 file\n",
    )
    dry = _run(
        [installed / "bin" / "hz", "run", "greet.yaml", "--input", "who=Ann", "--dry-run"],
        tmp_path,
        HZ_RUNNER="echo",
    )
    assert (dry.returncode, dry.stderr) == (0, "")
    assert dry.stdout.splitlines()[:3] == [
        "hz run --dry-run: nothing was started",
        "  runner:       echo",
        "  argv:         (none: this runner starts no process)",
    ]


def test_a_project_with_its_own_runtime_folder_does_not_shadow_hz(
    installed: Path, tmp_path: Path
) -> None:
    (tmp_path / "greet.yaml").write_text(CONTRACT)
    for package in ("runtime", "compiler"):
        (tmp_path / package).mkdir()
        (tmp_path / package / "__init__.py").write_text('raise ImportError("the project\'s own")\n')
    # `python -m hz` puts the working directory first on the path: the trap of the old layout.
    done = _run([installed / "bin" / "python", "-m", "hz", "validate", "greet.yaml"], tmp_path)
    assert (done.returncode, done.stderr) == (0, "Success: no issues found in 1 file\n")


def test_a_missing_postgres_extra_names_the_command_for_this_environment(
    installed: Path, tmp_path: Path
) -> None:
    """The wheel alone has no procrastinate: hz names the extra by the distribution's name and
    the pip of the environment it runs in (`pip install 'hz[postgres]'` would install another
    project's `hz` over this one)."""
    config = tmp_path / "pg.toml"
    config.write_text('[system.queue]\nbackend = "postgres"\n')
    done = _run([installed / "bin" / "hz", "runs", "list"], tmp_path, HZ_CONFIG=str(config))
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == (
        'hz: error: [system.queue] backend = "postgres" needs psycopg and procrastinate '
        "(procrastinate is not installed)\n"
        f"  hint: install the extra into hz's environment: {installed}/bin/python -m pip install "
        "'hz-contracts[postgres]'\n"
    )
