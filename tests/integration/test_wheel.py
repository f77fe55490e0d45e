"""The wheel: ``pip install`` puts only ``hz`` into site-packages, and hz works in a fresh
environment beside a distribution that ships top-level ``runtime`` and ``compiler`` packages.

Slow (a wheel build and a fresh venv, about half a minute); dependencies come from the package
index pip is configured with, through its cache.
"""

from __future__ import annotations

import base64
import hashlib
import shutil
import subprocess
import sys
import venv
import zipfile
from pathlib import Path

import pytest

from hz import __version__
from tests.cli.test_run import CONTRACT

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


def _clash_wheel(directory: Path) -> Path:
    """A wheel of the distribution ``clash`` 1.0, written by hand (no build backend needed)."""
    files = {
        **CLASH,
        "clash-1.0.dist-info/METADATA": "Metadata-Version: 2.1\nName: clash\nVersion: 1.0\n",
        "clash-1.0.dist-info/WHEEL": (
            "Wheel-Version: 1.0\nGenerator: hz-tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
        ),
    }
    record = []
    for name, text in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=")
        record.append(f"{name},sha256={digest.decode()},{len(text.encode())}")
    record.append("clash-1.0.dist-info/RECORD,,")
    path = directory / "clash-1.0-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as wheel:
        for name, text in files.items():
            wheel.writestr(name, text)
        wheel.writestr("clash-1.0.dist-info/RECORD", "\n".join(record) + "\n")
    return path


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
    built = _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-w", work, source], work)
    assert built.returncode == 0, built.stderr
    (wheel,) = work.glob("hz-*.whl")
    env = work / "venv"
    venv.create(env, with_pip=True)
    done = _run([env / "bin" / "pip", "install", wheel, _clash_wheel(work)], work)
    assert done.returncode == 0, done.stderr
    return env


def _site_packages(env: Path) -> Path:
    (site,) = env.glob("lib/python*/site-packages")
    return site


def test_pip_installs_only_hz_into_site_packages(installed: Path) -> None:
    site = _site_packages(installed)
    record = (site / f"hz-{__version__}.dist-info" / "RECORD").read_text()
    tops = {line.split("/")[0] for line in record.splitlines() if not line.startswith("..")}
    assert tops == {"hz", f"hz-{__version__}.dist-info"}
    assert (site / "hz" / "compiler" / "data" / "workflow-contract.schema.json").is_file()
    assert (site / "hz" / "runtime" / "ledger" / "runs.schema.json").is_file()
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
