"""Issue 14: a run leaves the user's repository as it was. Receipts go to ``receipts/`` in the
operator's state directory (beside the run ledger), not into the working tree where
``git status`` would show them; ``--receipt-dir`` still chooses. hz in process in a real git
repository."""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests.conftest import Cli, CliResult
from tests.helpers.in_process import leaves_nothing


def _git(repo: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args],
        cwd=repo,
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout


def _hz(cli: Cli, repo: Path, *args: str, **env: str) -> CliResult:
    with leaves_nothing(f"hz {args[0]}"):
        return cli(*args, cwd=repo, env={"HZ_RUNNER": "echo", **env})


def test_a_run_leaves_git_status_clean(cli: Cli, tmp_path: Path) -> None:
    repo, state = tmp_path / "repo", tmp_path / "state"
    repo.mkdir()
    _git(repo, "init", "-q")
    assert _hz(cli, repo, "init").returncode == 0
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "hz init")
    done = _hz(cli, repo, "run", "contracts/todo-summary.yaml", HZ_STATE_DIR=str(state))
    assert done.returncode == 0, done.stderr
    receipt = state / "receipts" / "000001-todo-summary.json"
    assert done.stderr.endswith(f" · receipt {receipt}\n")
    assert _git(repo, "status", "--porcelain", "--ignored") == ""
    verified = _hz(cli, repo, "receipts", "verify", str(state / "receipts"))
    assert verified.stdout == f"ok: 1 receipt in {state / 'receipts'}, the chain is intact\n"


def test_the_state_directory_defaults_to_the_users_and_receipt_dir_still_chooses(
    cli: Cli, tmp_path: Path
) -> None:
    repo, home = tmp_path / "repo", tmp_path / "home"
    repo.mkdir()
    assert _hz(cli, repo, "init").returncode == 0
    run = ("run", "contracts/todo-summary.yaml", "-q")
    assert _hz(cli, repo, *run, HOME=str(home), XDG_STATE_HOME="").returncode == 0
    assert (home / ".local/state/hz/receipts/000001-todo-summary.json").is_file()
    mine = _hz(cli, repo, *run, "--receipt-dir", "mine", HOME=str(home))
    assert mine.returncode == 0, mine.stderr
    assert sorted(p.name for p in (repo / "mine").glob("*.json")) == ["000001-todo-summary.json"]
