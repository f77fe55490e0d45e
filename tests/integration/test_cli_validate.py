"""`hz validate` as a real process: a fresh interpreter's imports, a FIFO, a bug's exit 3."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.contracts import GREET
from tests.helpers.contracts import TINY as GOOD

REPO = Path(__file__).resolve().parents[2]
CASES = REPO / "tests" / "cases"


def hz(
    argv: list[str], *args: str, stdin: str | None = None, cwd: Path = REPO
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*argv, *args], input=stdin, capture_output=True, text=True, cwd=cwd, timeout=60
    )


def _modules_loaded_by_validate(cwd: Path, path: str = "c.yaml") -> str:
    probe = (
        "import sys, atexit\n"
        "atexit.register(lambda: print(sorted(sys.modules), file=sys.stderr))\n"
        "from hz.cli import main\n"
        f"main(['validate', {path!r}])\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, cwd=cwd, timeout=60
    )
    assert (result.returncode, result.stdout) == (0, ""), result.stderr
    return result.stderr.splitlines()[-1]


def test_validate_imports_neither_pydantic_nor_unneeded_modules(tmp_path: Path) -> None:
    (tmp_path / "c.yaml").write_text(GOOD.replace("{{ inputs.who }}", "you"))
    loaded = _modules_loaded_by_validate(tmp_path)
    assert "'pydantic'" not in loaded
    # A valid contract without input or output schemas takes the schema fast path:
    # jsonschema is not even imported (it is for an invalid file, to locate the errors).
    assert "'jsonschema'" not in loaded


#: What ``hz validate FILE`` of a valid contract must not import: each costs milliseconds a
#: pre-commit hook pays per run, and none is needed to say "valid" (benchmarks/README.md).
NOT_FOR_VALIDATE = (
    "jsonschema",  # the fast paths decide (the contract schema, its input and output schemas)
    "referencing",
    "fastjsonschema",  # the contract schema's validator is shipped as generated code
    "decimal",
    "jinja2",  # the template scanner decides a template in its subset (template_scan)
    "markdown_it",  # a YAML contract has no Markdown body
    "secrets",  # printable's workflow-command guard needs it only under GitHub Actions
    "hz.runtime.ledger",
    "hz.runtime.runners.protocol",  # the runners themselves; their tool tables are data
    "hz.runtime.runners.claude_code.runner",
    "hz.runtime.runners.command.runner",
    "pydantic",
)


def test_validate_of_a_valid_contract_imports_nothing_it_does_not_need() -> None:
    # weekly-digest has input schemas with a pattern, an enum and defaults, tools and a loop.
    loaded = _modules_loaded_by_validate(REPO, "contracts/weekly-digest.yaml")
    # Under `make test` coverage measures the child too, and coverage imports decimal itself.
    measured = "'coverage'" in loaded
    unneeded = [name for name in NOT_FOR_VALIDATE if not (measured and name == "decimal")]
    assert [name for name in unneeded if f"'{name}'" in loaded] == []
    assert [m for m in ast.literal_eval(loaded) if m.startswith("hz.runtime.ledger")] == []


def test_validate_judges_tools_the_core_runners_accept_without_importing_them(
    tmp_path: Path,
) -> None:
    # With nothing configured, the tools the runners hz ships accept are declared data: no
    # runner module (nor pydantic) is imported, and no entry point is looked up, since a core
    # runner accepts every tool named (a plugin could only add to the names accepted).
    contract = GOOD.replace("{{ inputs.who }}", "you").replace(
        "agent: {max_usd: 5}", "agent: {max_usd: 5, tools: [Read, Grep]}"
    )
    (tmp_path / "c.yaml").write_text(contract)
    loaded = _modules_loaded_by_validate(tmp_path)
    assert "'pydantic'" not in loaded
    assert "'importlib.metadata'" not in loaded
    assert "'hz.runtime.runners.claude_code.runner'" not in loaded


def test_fifo_in_a_directory_is_skipped_and_refused_by_name(
    hz_argv: list[str], tmp_path: Path
) -> None:
    import os

    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "ok.yaml").write_text(GOOD.replace("{{ inputs.who }}", "you"))
    os.mkfifo(tmp_path / "d" / "pipe.yaml")
    # Before, reading the FIFO blocked forever; hz() times out after 60 s.
    found = hz(hz_argv, "validate", "d", cwd=tmp_path)
    assert (found.returncode, found.stdout) == (0, "")
    assert found.stderr == "Success: no issues found in 1 file\n"
    named = hz(hz_argv, "validate", "d/pipe.yaml", cwd=tmp_path)
    assert (named.returncode, named.stdout) == (
        1,
        "d/pipe.yaml:0:0: error: not a regular file: a contract is read from a file "
        "(or - for stdin) [HZ001]\n",
    )


def _broken_validate(tmp_path: Path, message: str) -> dict[str, str]:
    """An environment whose sitecustomize breaks check_paths with RuntimeError(message): a
    bug in hz, seen as a user sees it."""
    import os

    broken = tmp_path / "site"
    broken.mkdir()
    (broken / "sitecustomize.py").write_text(
        "import hz.compiler.fanout\n"
        "def boom(*args, **kwargs):\n"
        f"    raise RuntimeError({message})\n"
        "hz.compiler.fanout.check_paths = boom\n"
    )
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(broken), str(REPO)])}


def test_a_bug_exits_3_and_shows_the_working_debug_command(
    hz_argv: list[str], tmp_path: Path
) -> None:
    env = _broken_validate(tmp_path, "'forced for a test'")
    args = ["validate", "my file.yaml", "--format", "json"]
    result = subprocess.run(
        [*hz_argv, *args], capture_output=True, text=True, cwd=tmp_path, env=env, timeout=60
    )
    assert (result.returncode, result.stdout) == (3, "")
    assert result.stderr == (
        "hz: unexpected error: RuntimeError: forced for a test\n"
        "  (this is a bug in hz; run again with --debug for the traceback: "
        "hz --debug validate 'my file.yaml' --format json)\n"
    )
    debug_args = ["--debug", *args]
    again = subprocess.run(
        [*hz_argv, *debug_args], capture_output=True, text=True, cwd=tmp_path, env=env, timeout=60
    )
    assert again.returncode == 3
    assert again.stderr.startswith("Traceback (most recent call last):\n")
    assert again.stderr.endswith(
        "RuntimeError: forced for a test\nhz: unexpected error: RuntimeError: forced for a test\n"
    )


def test_a_bug_with_control_characters_in_its_text_is_escaped(
    hz_argv: list[str], tmp_path: Path
) -> None:
    env = _broken_validate(tmp_path, "'a\\x1b[2J\\n::warning::x'")
    result = subprocess.run(
        [*hz_argv, "validate", "f\n::error::y"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        timeout=60,
    )
    assert result.returncode == 3
    assert result.stderr == (
        "hz: unexpected error: RuntimeError: a\\x1b[2J\\n::warning::x\n"
        "  (this is a bug in hz; run again with --debug for the traceback: "
        "hz --debug validate 'f\\n::error::y')\n"
    )


def test_validate_with_providers_bound_but_no_command_operations_imports_none(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The operator binds code-host and tracker to github (served from hz's catalog alone) and
    # declares no command operation: what a contract may read is the catalog, and no provider
    # module (nor httpx) is imported to say so. (An operator file's tables are checked with
    # pydantic, so pydantic is: the case without configuration is the test above.)
    (tmp_path / "operator.toml").write_text(
        '[capabilities]\ncode-host = "github"\ntracker = "github"\n'
    )
    (tmp_path / "c.yaml").write_text((CASES / "valid" / "read-inputs.yaml").read_text())
    monkeypatch.setenv("HZ_CONFIG", str(tmp_path / "operator.toml"))
    loaded = _modules_loaded_by_validate(tmp_path)
    assert "'httpx'" not in loaded
    assert [m for m in ast.literal_eval(loaded) if m.startswith("hz.runtime.providers.")] == [
        "hz.runtime.providers.registry"
    ]


def _plugins_after(args: list[str], cwd: Path, env: dict[str, str]) -> str:
    probe = (
        "import sys, atexit\n"
        "def said():\n"
        "    loader = sys.modules.get('pydantic.plugin._loader')\n"
        "    print(repr(loader and loader._plugins), file=sys.stderr)\n"
        "atexit.register(said)\n"
        "from hz.cli import main\n"
        f"main({args!r})\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, cwd=cwd, env=env, timeout=60
    )
    assert result.returncode == 0, result.stderr
    return result.stderr.splitlines()[-1]


def test_hz_does_not_look_up_pydantic_plugins(tmp_path: Path) -> None:
    # pydantic scans every installed distribution's entry points for plugins the first time
    # it builds a model (≈ 10 ms of every hz run); hz turns its plugins off for its own
    # process, and the scan's cache stays unset. An operator's own setting is kept.
    (tmp_path / "c.yaml").write_text(GREET)
    args = ["render", "c.yaml", "--input", "who=Ann", "-o", "p.json"]
    env = {k: v for k, v in os.environ.items() if k != "PYDANTIC_DISABLE_PLUGINS"}
    assert _plugins_after(args, tmp_path, env) == "None"
    assert _plugins_after(args, tmp_path, {**env, "PYDANTIC_DISABLE_PLUGINS": "x"}) == "{}"
