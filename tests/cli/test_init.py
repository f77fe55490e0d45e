"""``hz init`` in process, in a fresh directory: what it writes, that the result validates
and runs with the echo runner, and that running it again keeps the user's files."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from hz.compiler.checks.structure import schema_text
from tests.conftest import Cli, CliResult


def hz(cli: Cli, cwd: Path, *args: str, **env: str) -> CliResult:
    return cli(*args, cwd=cwd, env=env)


def test_init_writes_schema_and_starter(cli: Cli, tmp_path: Path) -> None:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True, timeout=30)  # a new repo
    (tmp_path / ".gitignore").write_text("node_modules/", encoding="utf-8")
    done = hz(cli, tmp_path, "init")
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout == (
        "wrote:     .hz/contract.schema.json\n"
        "wrote:     contracts/todo-summary.yaml\n"
        "next:\n"
        "  hz validate contracts                              # every problem, with file:line:col\n"
        "  HZ_RUNNER=echo hz run contracts/todo-summary.yaml"
        "  # the built-in echo runner: no agent needed\n"
        "  hz doctor                                          # is the configured agent ready?\n"
        "  hz compile contracts --out build/jobs              # then commit build/jobs: CI checks"
        " it\n"
    )
    schema = (tmp_path / ".hz/contract.schema.json").read_text(encoding="utf-8")
    assert json.loads(schema) == json.loads(schema_text())
    contract = (tmp_path / "contracts/todo-summary.yaml").read_text(encoding="utf-8")
    # The modeline is relative to the contract, so it resolves in the user's repository.
    assert contract.splitlines()[0] == "# yaml-language-server: $schema=../.hz/contract.schema.json"
    assert (tmp_path / "contracts" / "../.hz/contract.schema.json").resolve().is_file()
    # Nothing of hz's own stays in the tree to ignore: receipts go to the state directory.
    assert (tmp_path / ".gitignore").read_text(encoding="utf-8") == "node_modules/"

    checked = hz(cli, tmp_path, "validate", "contracts")
    assert (checked.returncode, checked.stderr) == (0, "Success: no issues found in 1 file\n")
    # The step CI needs: the compiled jobs the check of docs/ci-github.md compares.
    compiled = hz(cli, tmp_path, "compile", "contracts", "--out", "build/jobs")
    assert compiled.returncode == 0, compiled.stdout
    again = hz(cli, tmp_path, "compile", "contracts", "--out", "build/jobs", "--check")
    assert again.stderr == (
        "Success: no issues found in 1 contract and 1 job file\n1 job in build/jobs up to date\n"
    )
    # The step `next:` suggests, twice: each is a run of its own, with its own receipt.
    receipts = Path(os.environ["HOME"]) / ".local" / "state" / "hz" / "receipts"
    for n in (1, 2):
        ran = hz(cli, tmp_path, "run", "contracts/todo-summary.yaml", "-q", HZ_RUNNER="echo")
        assert (ran.returncode, ran.stdout, ran.stderr) == (
            0,
            "Write a short summary of the to-do items in this repository.\n",
            "",
        )
        assert sorted(p.name for p in receipts.glob("*.json")) == [
            f"00000{i}-todo-summary.json" for i in range(1, n + 1)
        ]


def test_init_markdown_starts_a_markdown_contract(cli: Cli, tmp_path: Path) -> None:
    done = hz(cli, tmp_path, "init", "--markdown")
    assert (done.returncode, done.stdout.splitlines()[:2]) == (
        0,
        ["wrote:     .hz/contract.schema.json", "wrote:     contracts/todo-summary.md"],
    )
    starter = (tmp_path / "contracts" / "todo-summary.md").read_text(encoding="utf-8")
    assert starter.startswith("---\nhz:\n  contract: 1\n  name: todo-summary\n")
    checked = hz(cli, tmp_path, "validate", "contracts")
    assert (checked.returncode, checked.stdout, checked.stderr) == (
        0,
        "",
        "Success: no issues found in 1 file\n",
    )
    ran = hz(cli, tmp_path, "run", "contracts/todo-summary.md", "-q", HZ_RUNNER="echo")
    # The echo runner answers with the request, which hz built from the body's sections.
    assert (ran.returncode, ran.stdout, ran.stderr) == (
        0,
        'Carry out the contract above. Reach the goal under "Goal". You are done when '
        'everything under "Done when" holds.\n\n## Input: topic\n\n'
        "the to-do items in this repository\n",
        "",
    )


def test_init_quotes_a_folder_with_a_space_in_its_next_steps(cli: Cli, tmp_path: Path) -> None:
    done = hz(cli, tmp_path, "init", "--contracts", "my contracts")
    assert done.stdout.splitlines()[3:] == [
        "  hz validate 'my contracts'                              # every problem, with "
        "file:line:col",
        "  HZ_RUNNER=echo hz run 'my contracts/todo-summary.yaml'  # the built-in echo runner: "
        "no agent needed",
        "  hz doctor                                               # is the configured agent "
        "ready?",
        "  hz compile 'my contracts' --out build/jobs              # then commit build/jobs: CI "
        "checks it",
    ]


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
        "next:",
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


def test_init_refuses_links_out_of_the_directory_before_writing(cli: Cli, tmp_path: Path) -> None:
    repo, outside = tmp_path / "repo", tmp_path / "outside"
    repo.mkdir()
    outside.mkdir()
    (outside / "bashrc").write_text("x\n", encoding="utf-8")
    (repo / ".hz").symlink_to(outside)
    done = hz(cli, repo, "init")
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == (
        "hz: error: .hz/contract.schema.json is a symbolic link that leads out of ."
        f" (to {outside}/contract.schema.json)\n"
        "  hint: remove the link, or run hz init in the tree it leads to\n"
    )
    (repo / ".hz").unlink()
    (repo / "contracts").symlink_to(outside)
    done = hz(cli, repo, "init")
    assert done.stderr.splitlines()[0] == (
        "hz: error: contracts/todo-summary.yaml is a symbolic link that leads out of ."
        f" (to {outside}/todo-summary.yaml)"
    )
    assert sorted(p.name for p in outside.iterdir()) == ["bashrc"]
    assert sorted(p.name for p in repo.iterdir()) == ["contracts"]
    assert (outside / "bashrc").read_text(encoding="utf-8") == "x\n"


def test_init_neither_blocks_on_nor_replaces_what_is_no_text_file(cli: Cli, tmp_path: Path) -> None:
    (tmp_path / ".hz").mkdir()
    os.mkfifo(tmp_path / ".hz/contract.schema.json")
    done = hz(cli, tmp_path, "init")
    assert (done.returncode, done.stdout, done.stderr) == (
        2,
        "",
        "hz: error: cannot read .hz/contract.schema.json: not a regular file (a named pipe)\n",
    )
    (tmp_path / ".hz/contract.schema.json").unlink()
    (tmp_path / ".hz/contract.schema.json").write_bytes(b"\xff\xfe")
    done = hz(cli, tmp_path, "init")
    assert done.stderr == "hz: error: cannot read .hz/contract.schema.json: it is not UTF-8 text\n"
    (tmp_path / ".hz/contract.schema.json").unlink()
    (tmp_path / ".hz/contract.schema.json").mkdir(parents=True)
    done = hz(cli, tmp_path, "init")
    assert done.stderr == "hz: error: cannot read .hz/contract.schema.json: Is a directory\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == [".hz"]


@pytest.mark.parametrize("planted", [".hz", "contracts"])
def test_init_refuses_a_link_swapped_in_after_its_check(
    cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, planted: str
) -> None:
    """The write went by name: a folder swapped for a link to another tree between the check
    for links and the write was followed. Each folder is now opened without following one."""
    import hz.cli.init as init

    repo, outside = tmp_path / "repo", tmp_path / "outside"
    (repo / planted).mkdir(parents=True)
    outside.mkdir()
    read = init._read

    def read_then_swap(path: Path, directory: Path) -> str | None:
        found = read(path, directory)  # after the checks for links; the last look before writing
        (repo / planted).rmdir()
        (repo / planted).symlink_to(outside)
        return found

    monkeypatch.setattr(init, "_read", read_then_swap)
    done = hz(cli, repo, "init")
    shown = ".hz/contract.schema.json" if planted == ".hz" else "contracts/todo-summary.yaml"
    assert (done.returncode, done.stdout, done.stderr) == (
        2,
        "",
        f"hz: error: {shown} is reached through a symbolic link ({planted}): hz init does not "
        "write through a link\n"
        "  hint: remove the link, or run hz init in the tree it leads to\n",
    )
    assert list(outside.iterdir()) == []
    assert sorted(p.name for p in repo.iterdir()) == sorted({".hz", planted})
    assert (repo / planted).is_symlink()


def test_init_says_which_folder_on_the_way_is_a_file(cli: Cli, tmp_path: Path) -> None:
    (tmp_path / "contracts").write_text("x\n", encoding="utf-8")
    done = hz(cli, tmp_path, "init")
    assert (done.returncode, done.stdout, done.stderr) == (
        2,
        "",
        "hz: error: cannot write contracts/todo-summary.yaml: contracts is not a folder\n",
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == [".hz", "contracts"]
    assert list((tmp_path / ".hz").iterdir()) == []  # no file written before the refusal
