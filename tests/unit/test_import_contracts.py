"""Each import contract of pyproject.toml fails on a wrong import planted in a copy of the tree.

`make lint` runs lint-imports over the real tree; these tests prove that every contract can fail,
and for the reason it states: a copy of the package gets the wrong import, and lint-imports (the
real command, on the real configuration, limited to the one contract) must report the contract
broken and name the planted import. Only the copy is written to (``hz/``, its links to
``compiler/`` and ``runtime/`` followed, and ``pyproject.toml``), never the repository.

lint-imports runs as a child process because grimp finds the root package with
``importlib.util.find_spec``: in this process that is the installed ``hz``, not the copy.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
#: lint-imports, run by this interpreter (its console script need not be on PATH).
LINT_IMPORTS = [sys.executable, "-c", "from importlinter.cli import lint_imports_command as c; c()"]

#: contract id -> (file in the copy, lines planted there, what the report must name)
PLANTS: dict[str, tuple[str, tuple[str, ...], tuple[str, ...]]] = {
    "hz-layers": (
        "hz/runtime/ledger/planted.py",
        ("import hz.cli",),
        ("hz.runtime.ledger.planted -> hz.cli",),
    ),
    # `ledger | testing`: neither may import the other, though both sit in the top layer.
    "runtime-layers": (
        "hz/runtime/testing/planted.py",
        ("import hz.runtime.ledger.view",),
        ("hz.runtime.testing.planted -> hz.runtime.ledger.view",),
    ),
    # store imports rows: rows importing store back is the cycle that was broken.
    "runtime-acyclic": (
        "hz/runtime/ledger/rows.py",
        ("import hz.runtime.ledger.store",),
        ("No cycles are allowed in hz.runtime.ledger.",),
    ),
    # The two examples: a deny-list of the compiler let both through.
    "compiler-allowed": (
        "hz/compiler/planted.py",
        ("import hz.runtime.ledger.store", "import hz.runtime.transcript.record"),
        (
            "hz.compiler.planted -> hz.runtime.ledger.store",
            "hz.compiler.planted -> hz.runtime.transcript.record",
        ),
    ),
    "ci-allowed": (
        "hz/ci/planted.py",
        ("import hz.runtime.execution.execute", "import hz.runtime.ledger.store"),
        (
            "hz.ci.planted -> hz.runtime.execution.execute",
            "hz.ci.planted -> hz.runtime.ledger.store",
        ),
    ),
    # A backend's internals, and a module of the store under the package's names.
    "cli-ledger-door": (
        "hz/cli/planted.py",
        ("import hz.runtime.ledger.db", "import hz.runtime.ledger.store.base"),
        (
            "hz.cli.planted -> hz.runtime.ledger.db",
            "hz.cli.planted -> hz.runtime.ledger.store.base",
        ),
    ),
    "runners-layers": (
        "hz/runtime/runners/echo.py",
        ("import hz.runtime.runners.registry",),
        ("hz.runtime.runners.echo -> hz.runtime.runners.registry",),
    ),
}


def _contracts() -> dict[str, str]:
    config = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    return {c["id"]: c["name"] for c in config["tool"]["importlinter"]["contracts"]}


@pytest.fixture(scope="module")
def package_copy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("tree")
    shutil.copytree(REPO / "hz", root / "hz", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(REPO / "pyproject.toml", root / "pyproject.toml")
    return root


def _lint(root: Path, *contracts: str) -> subprocess.CompletedProcess[str]:
    argv = [*LINT_IMPORTS, "--no-cache", "--no-logo", *(f"--contract={c}" for c in contracts)]
    # lint-imports puts its working directory first on sys.path, so the copy is the package; no
    # coverage of the child (it imports no hz). A wide console keeps a long contract name and its
    # KEPT or BROKEN on one line.
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH" and not k.startswith("COV")} | {
        "COLUMNS": "300"
    }
    return subprocess.run(argv, cwd=root, env=env, capture_output=True, text=True, timeout=60)


def test_every_contract_has_a_plant() -> None:
    assert sorted(_contracts()) == sorted(PLANTS)


def test_the_copy_keeps_every_contract(package_copy: Path) -> None:
    done = _lint(package_copy)
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"Contracts: {len(PLANTS)} kept, 0 broken." in done.stdout


@pytest.mark.parametrize("contract", sorted(PLANTS))
def test_a_planted_import_breaks_the_contract(package_copy: Path, contract: str) -> None:
    path, lines, named = PLANTS[contract]
    target = package_copy / path
    before = target.read_text(encoding="utf-8") if target.exists() else None
    target.write_text((before or "") + "".join(f"\n{line}  # planted" for line in lines) + "\n")
    try:
        done = _lint(package_copy, contract)
    finally:
        if before is None:
            target.unlink()
        else:
            target.write_text(before, encoding="utf-8")
    assert done.returncode == 1, done.stdout + done.stderr
    assert f"{_contracts()[contract]} BROKEN" in done.stdout
    assert [n for n in named if n not in done.stdout] == []


def test_a_package_added_to_the_runtime_must_be_placed_in_a_layer(package_copy: Path) -> None:
    added = package_copy / "hz" / "runtime" / "planted"
    added.mkdir()
    (added / "__init__.py").write_text("")
    try:
        done = _lint(package_copy, "runtime-layers")
    finally:
        shutil.rmtree(added)
    assert done.returncode == 1, done.stdout + done.stderr
    assert f"{_contracts()['runtime-layers']} BROKEN" in done.stdout
    assert "- hz.runtime.planted\n" in done.stdout
