"""The tests' own layout: what several test modules share lives in tests/helpers/ (or is a fake
under tests/fakes/), never in a test module that others import — importing a test module runs
its collection-time code and ties one file's tests to another's internals."""

from __future__ import annotations

import ast
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]

#: Packages any test file may import from; besides them only these modules (the root conftest's
#: fixtures and types, the PostgreSQL cluster the session fixture starts).
SHARED_PACKAGES = ("tests.helpers", "tests.fakes")
SHARED_MODULES = ("tests.conftest", "tests.pg")


def imported(node: ast.AST, module: str) -> list[str]:
    """The ``tests.*`` modules an import statement in ``module`` names (relative ones resolved)."""
    if isinstance(node, ast.Import):
        return [a.name for a in node.names]
    if isinstance(node, ast.ImportFrom):
        base = node.module or ""
        if node.level:
            parent = module.split(".")[: -node.level]
            base = ".".join([*parent, *([base] if base else [])])
        if node.module is None or base in ("tests", *SHARED_PACKAGES):
            # ``from tests.helpers import x``: x may be a module
            return [f"{base}.{a.name}" for a in node.names]
        return [base]
    return []


def allowed(name: str) -> bool:
    if not (name == "tests" or name.startswith("tests.")):
        return True
    if name in SHARED_MODULES or name in SHARED_PACKAGES:
        return True
    return any(name.startswith(f"{package}.") for package in SHARED_PACKAGES)


def offences(source: str, path: Path) -> list[str]:
    """``FILE:LINE: imports MODULE`` for every import of a test module or of a shared module
    that lives outside tests/helpers/ and tests/fakes/."""
    relative = path.relative_to(TESTS.parent)
    module = ".".join(relative.with_suffix("").parts)
    found = [
        (node.lineno, name)
        for node in ast.walk(ast.parse(source, filename=str(path)))
        for name in imported(node, module)
        if not allowed(name)
    ]
    return [f"{relative}:{line}: imports {name}" for line, name in sorted(found)]


def test_no_test_file_imports_a_test_module_or_a_shared_module_outside_helpers() -> None:
    found = []
    for path in sorted(TESTS.rglob("*.py")):
        if "cases" in path.relative_to(TESTS).parts:
            continue  # contract corpora, not Python the tests import
        found += offences(path.read_text(encoding="utf-8"), path)
    assert found == []


def test_a_planted_import_of_a_test_module_is_named_with_its_line() -> None:
    source = (
        "from __future__ import annotations\n"
        "from tests.helpers.packets import make_packet\n"
        "from tests.fakes import agent\n"
        "from tests.conftest import Cli\n"
        "def f():\n"
        "    from tests.unit.test_execute import make_packet\n"
        "import tests.integration.ledger_env\n"
        "from tests import run_request\n"
        "from .test_run import CONTRACT\n"
    )
    path = TESTS / "cli" / "test_planted.py"
    assert offences(source, path) == [
        "tests/cli/test_planted.py:6: imports tests.unit.test_execute",
        "tests/cli/test_planted.py:7: imports tests.integration.ledger_env",
        "tests/cli/test_planted.py:8: imports tests.run_request",
        "tests/cli/test_planted.py:9: imports tests.cli.test_run",
    ]
