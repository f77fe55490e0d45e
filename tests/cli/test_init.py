"""``hz init`` in process, in a fresh directory: what it writes, that the result validates
and runs with the echo runner, and that running it again keeps the user's files."""

from __future__ import annotations

import json
from pathlib import Path

from hz.compiler.checks.structure import schema_text
from tests.conftest import Cli, CliResult


def hz(cli: Cli, cwd: Path, *args: str, **env: str) -> CliResult:
    return cli(*args, cwd=cwd, env=env)


def test_init_writes_schema_starter_and_gitignore(cli: Cli, tmp_path: Path) -> None:
    (tmp_path / ".gitignore").write_text("node_modules/", encoding="utf-8")
    done = hz(cli, tmp_path, "init")
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout == (
        "wrote:     .hz/contract.schema.json\n"
        "wrote:     contracts/todo-summary.yaml\n"
        "updated:   .gitignore\n"
        "next:\n"
        "  hz validate contracts                              # every problem, with file:line:col\n"
        "  HZ_RUNNER=echo hz run contracts/todo-summary.yaml"
        "  # the built-in echo runner: no agent needed\n"
        "  hz doctor                                          # is the configured agent ready?\n"
    )
    schema = (tmp_path / ".hz/contract.schema.json").read_text(encoding="utf-8")
    assert json.loads(schema) == json.loads(schema_text())
    contract = (tmp_path / "contracts/todo-summary.yaml").read_text(encoding="utf-8")
    # The modeline is relative to the contract, so it resolves in the user's repository.
    assert contract.splitlines()[0] == "# yaml-language-server: $schema=../.hz/contract.schema.json"
    assert (tmp_path / "contracts" / "../.hz/contract.schema.json").resolve().is_file()
    assert (tmp_path / ".gitignore").read_text(encoding="utf-8") == (
        "node_modules/\n# hz's local receipt chain (the default of hz run --receipt-dir)\n"
        ".hz-receipts/\n"
    )

    checked = hz(cli, tmp_path, "validate", "contracts")
    assert (checked.returncode, checked.stderr) == (0, "Success: no issues found in 1 file\n")
    ran = hz(cli, tmp_path, "run", "contracts/todo-summary.yaml", "-q", HZ_RUNNER="echo")
    assert (ran.returncode, ran.stdout) == (
        0,
        "Write a short summary of the to-do items in this repository.\n",
    )


def test_init_again_keeps_the_contract_and_refreshes_the_schema(cli: Cli, tmp_path: Path) -> None:
    assert hz(cli, tmp_path, "init", "--contracts", "ci/hz", "--name", "triage").returncode == 0
    contract = tmp_path / "ci/hz/triage.yaml"
    assert contract.read_text(encoding="utf-8").splitlines()[0] == (
        "# yaml-language-server: $schema=../../.hz/contract.schema.json"
    )
    contract.write_text("edited\n", encoding="utf-8")
    (tmp_path / ".hz/contract.schema.json").write_text("{}", encoding="utf-8")
    again = hz(cli, tmp_path, "init", "--contracts", "ci/hz", "--name", "triage")
    assert again.stdout.splitlines()[:3] == [
        "wrote:     .hz/contract.schema.json",
        "kept:      ci/hz/triage.yaml",
        "unchanged: .gitignore",
    ]
    assert contract.read_text(encoding="utf-8") == "edited\n"
    assert json.loads((tmp_path / ".hz/contract.schema.json").read_text(encoding="utf-8")) != {}


def test_init_refuses_a_name_that_is_not_a_slug(cli: Cli, tmp_path: Path) -> None:
    done = hz(cli, tmp_path, "init", "--name", "Todo-Summary")
    assert done.returncode == 2
    assert done.stderr.splitlines()[-1] == (
        "Error: Invalid value for '--name': 'Todo-Summary' is not a lowercase slug"
    )
    assert list(tmp_path.iterdir()) == []
