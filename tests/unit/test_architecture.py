"""The layering: the runtime works without the compiler and the CLI installed.

import-linter checks the whole graph in the quality gates (``make lint``); these tests keep the
two promises a user relies on visible in the suite, with a fresh interpreter for the second.
"""

from __future__ import annotations

import ast
import re
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


def _is_forbidden(name: str) -> bool:
    return any(name == top or name.startswith(top + ".") for top in ("hz.compiler", "hz.cli"))


def test_runtime_never_imports_compiler_or_cli() -> None:
    offenders = sorted(
        f"{path.relative_to(REPO)} imports {name}"
        for path in (REPO / "runtime").rglob("*.py")
        for name in _imported_modules(path)
        if _is_forbidden(name)
    )
    assert offenders == []


def test_runtime_imports_cleanly_without_compiler() -> None:
    code = (
        "import importlib, pkgutil, sys, hz.runtime\n"
        "for m in pkgutil.walk_packages(hz.runtime.__path__, 'hz.runtime.'):\n"
        "    importlib.import_module(m.name)\n"
        "print(sorted(n for n in sys.modules if n.startswith(('hz.compiler', 'hz.cli'))))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "[]"


def test_no_module_name_prefix_families() -> None:
    """Three modules in one folder starting with the same word are a package, not a prefix."""
    families: dict[tuple[Path, str], list[str]] = {}
    for path in [*(REPO / "compiler").rglob("*.py"), *(REPO / "runtime").rglob("*.py")]:
        if path.name == "__init__.py" or "_" not in path.stem:
            continue
        families.setdefault((path.parent, path.stem.split("_")[0]), []).append(path.name)
    assert {k: v for k, v in families.items() if len(v) >= 3} == {}


def test_running_a_packet_never_imports_the_compiler(tmp_path: Path) -> None:
    """`hz run PACKET` on a machine that only runs packets: no compiler, no Jinja2."""
    (tmp_path / "greet.yaml").write_text(
        "hz:\n  contract: 1\n  name: greet\n  timeout: 30\n  agent: {max_usd: 0.1}\n"
        "contract: Be brief.\nprompt: Say hi.\n"
    )
    (tmp_path / "config.toml").write_text('[capabilities]\nagent_runner = "echo"\n')
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "HZ_CONFIG": "config.toml"}
    render = [sys.executable, "-m", "hz", "render", "greet.yaml", "-o", "p.json"]
    subprocess.run(render, cwd=tmp_path, env=env, check=True, capture_output=True)
    code = (
        "import atexit, sys\n"
        "atexit.register(lambda: print(sorted({n.split('.')[1] for n in sys.modules"
        " if n.startswith('hz.compiler')} | {n for n in sys.modules if n == 'jinja2'}),"
        " file=sys.stderr))\n"
        "from hz.cli import main\n"
        "main(['run', 'p.json', '-q', '--receipt-dir', 'receipts'])\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True
    )
    assert (done.returncode, done.stdout, done.stderr) == (0, "Say hi.\n", "[]\n")


#: What SQL looks like in a string (hz spells SQL in capitals): a statement with the clause it
#: needs, or a condition on a ledger column (a WHERE clause handed to the store).
_SQL = (
    r"\b(SELECT\b.*\bFROM|INSERT\s+INTO|UPDATE\b.*\bSET|DELETE\s+FROM|CREATE\s+TABLE)\b",
    r"\b(state|batch|owner|created_at|held_reason)\s*(=|IN\b|IS\b|>|<)",
    r"\bWHERE\b",
)


def sql_in(source: str) -> list[str]:
    """The string literals (f-strings' literal parts included) of ``source`` that hold SQL."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            text = node.value
            if any(re.search(pattern, text) for pattern in _SQL):
                found.append((node.lineno, node.col_offset, text))
    return [text for _, _, text in sorted(found)]


def test_the_cli_speaks_no_sql() -> None:
    """Every statement lives in the ledger's store (``hz.runtime.ledger.store``): the
    commands call its functions (``Ledger.retry``, ``Ledger.listed``), never SQL."""
    found = {
        str(path.relative_to(REPO)): sql_in(path.read_text(encoding="utf-8"))
        for path in sorted((REPO / "hz" / "cli").glob("*.py"))
    }
    assert {name: texts for name, texts in found.items() if texts} == {}


def test_the_sql_check_finds_sql_planted_in_a_command() -> None:
    planted = """
LIVE = "state IN ('queued', 'prepared')"
def retry(c, run_id):
    c.execute(f"SELECT id FROM runs WHERE id = {run_id!r}")
    c.execute("UPDATE runs SET state = ? WHERE id = ?", ("queued", run_id))
    ledger.select("batch = ?", ("b",))
    print("hz: the select of the runs is done")  # prose, not SQL
"""
    assert sql_in(planted) == [
        "state IN ('queued', 'prepared')",
        "SELECT id FROM runs WHERE id = ",
        "UPDATE runs SET state = ? WHERE id = ?",
        "batch = ?",
    ]
