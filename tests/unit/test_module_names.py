"""Every dotted ``hz.…`` name in the code, the tests and the docs names something that exists.

Import contracts see only import statements. Module paths also live in strings (mock targets,
``python -m hz.runtime.artifacts.schemas``, the registry's ``"module:Class"``), docstrings,
comments and the docs; after a module moves, a stale one would go unnoticed until someone
follows it. Each name must be a module, or an attribute of one (a class, a function, a
constant), of the installed ``hz``.
"""

from __future__ import annotations

import importlib
import os
import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
#: Text files a module name may appear in (``""``: Makefile).
SUFFIXES = {".py", ".md", ".toml", ".yml", ".yaml", ".txt", ".ambr", ".cfg", ""}
SKIPPED_DIRS = {".git", ".venv", "build", "node_modules", "__pycache__"}
NAME = re.compile(r"(?<![\w.])hz\.(?:runtime|compiler|cli|ci)(?:\.\w+)+")
#: Names that are meant not to exist, and why.
ABSENT = {
    # test_registry: a plugin whose module cannot be imported is reported, not a traceback.
    "hz.runtime.runners.no_such_runner",
    # test_provider_registry: a core provider whose module cannot be imported, likewise.
    "hz.runtime.providers.no_such_provider",
    # test_import_contracts: the modules it plants in a copy of the tree, to break a contract.
    "hz.ci.planted",
    "hz.cli.planted",
    "hz.compiler.planted",
    "hz.runtime.ledger.planted",
    "hz.runtime.testing.planted",
    "hz.runtime.planted",
}


def _text_files() -> list[Path]:
    found = []
    for top, dirs, files in os.walk(REPO):
        dirs[:] = [
            d
            for d in dirs
            if d not in SKIPPED_DIRS
            and not d.endswith((".egg-info", "_cache"))
            and not (Path(top) / d).is_symlink()  # hz/compiler, hz/runtime: walked at the root
        ]
        paths = (Path(top) / f for f in files if Path(f).suffix in SUFFIXES)
        found += [p for p in paths if not p.is_symlink()]  # the cases' links lead anywhere
    return sorted(found)


def _resolves(name: str) -> bool:
    parts = name.split(".")
    for end in range(len(parts), 1, -1):
        try:
            found: object = importlib.import_module(".".join(parts[:end]))
        except ImportError:
            continue
        for attribute in parts[end:]:
            if not hasattr(found, attribute):
                return False
            found = getattr(found, attribute)
        return True
    return False


def test_every_dotted_hz_name_resolves() -> None:
    names: dict[str, list[str]] = {}
    for path in _text_files():
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        for number, line in enumerate(text.splitlines(), 1):
            for name in NAME.findall(line):
                where = f"{path.relative_to(REPO)}:{number}"
                names.setdefault(name, []).append(where)
    assert len(names) > 100  # the walk found the tree
    unresolved = {n: w for n, w in sorted(names.items()) if n not in ABSENT and not _resolves(n)}
    assert unresolved == {}
    assert sorted(n for n in ABSENT if n in names) == sorted(ABSENT)  # still needed
