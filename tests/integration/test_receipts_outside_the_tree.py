"""Issue 14: a run leaves the user's repository as it was. Receipts go to ``receipts/`` in the
operator's state directory (beside the run ledger), not into the working tree where
``git status`` would show them; ``--receipt-dir`` still chooses. Real hz processes in a real
git repository."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def _git(repo: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args],
        cwd=repo,
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout


def _hz(hz_argv: list[str], repo: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*hz_argv, *args],
        cwd=repo,
        env={**os.environ, "PYTHONPATH": str(REPO), "HZ_RUNNER": "echo", **env},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_a_run_leaves_git_status_clean(hz_argv: list[str], tmp_path: Path) -> None:
    repo, state = tmp_path / "repo", tmp_path / "state"
    repo.mkdir()
    _git(repo, "init", "-q")
    assert _hz(hz_argv, repo, "init").returncode == 0
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "hz init")
    done = _hz(hz_argv, repo, "run", "contracts/todo-summary.yaml", HZ_STATE_DIR=str(state))
    assert done.returncode == 0, done.stderr
    receipt = state / "receipts" / "000001-todo-summary.json"
    assert done.stderr.endswith(f" · receipt {receipt}\n")
    assert _git(repo, "status", "--porcelain", "--ignored") == ""
    verified = _hz(hz_argv, repo, "receipts", "verify", str(state / "receipts"))
    assert verified.stdout == f"ok: 1 receipt in {state / 'receipts'}, the chain is intact\n"


def test_the_state_directory_defaults_to_the_users_and_receipt_dir_still_chooses(
    hz_argv: list[str], tmp_path: Path
) -> None:
    repo, home = tmp_path / "repo", tmp_path / "home"
    repo.mkdir()
    assert _hz(hz_argv, repo, "init").returncode == 0
    run = ("run", "contracts/todo-summary.yaml", "-q")
    assert _hz(hz_argv, repo, *run, HOME=str(home), XDG_STATE_HOME="").returncode == 0
    assert (home / ".local/state/hz/receipts/000001-todo-summary.json").is_file()
    mine = _hz(hz_argv, repo, *run, "--receipt-dir", "mine", HOME=str(home))
    assert mine.returncode == 0, mine.stderr
    assert sorted(p.name for p in (repo / "mine").glob("*.json")) == ["000001-todo-summary.json"]
