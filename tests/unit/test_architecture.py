"""The runtime must work without the compiler installed: it never imports it."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def _imported_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


def test_runtime_never_imports_compiler() -> None:
    offenders = sorted(
        f"{path.relative_to(REPO)} imports {name}"
        for path in (REPO / "runtime").rglob("*.py")
        for name in _imported_modules(path)
        if name == "compiler" or name.startswith("compiler.")
    )
    assert offenders == []


def test_runtime_imports_cleanly_without_compiler() -> None:
    code = (
        "import importlib, pkgutil, sys, runtime\n"
        "for m in pkgutil.walk_packages(runtime.__path__, 'runtime.'):\n"
        "    importlib.import_module(m.name)\n"
        "print(sorted(n for n in sys.modules if n == 'compiler' or n.startswith('compiler.')))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "[]"
