"""The hooks for working on hz itself: pre-commit accepts both configuration files, and the
commit-msg hook holds a subject to 72 characters and a blank line before the body."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
HOOK = REPO / ".ci" / "check-commit-msg"


def pre_commit(*args: str) -> subprocess.CompletedProcess[str]:
    argv = [sys.executable, "-m", "pre_commit", *args]
    return subprocess.run(argv, capture_output=True, text=True, check=False, cwd=REPO)


def test_pre_commit_accepts_the_configuration_and_the_hooks_manifest() -> None:
    config = pre_commit("validate-config", ".pre-commit-config.yaml")
    manifest = pre_commit("validate-manifest", ".pre-commit-hooks.yaml")
    assert (config.returncode, config.stdout, config.stderr) == (0, "", "")
    assert (manifest.returncode, manifest.stdout, manifest.stderr) == (0, "", "")


def test_the_commit_message_hook_is_installed_with_the_others() -> None:
    import yaml

    config = yaml.safe_load((REPO / ".pre-commit-config.yaml").read_text())
    assert config["default_install_hook_types"] == ["pre-commit", "commit-msg"]
    hooks = {hook["id"]: hook for repo in config["repos"] for hook in repo["hooks"]}
    assert hooks["commit-subject"]["entry"] == ".ci/check-commit-msg"
    assert hooks["commit-subject"]["stages"] == ["commit-msg"]


def check(tmp_path: Path, message: str) -> tuple[int, str]:
    path = tmp_path / "COMMIT_EDITMSG"
    path.write_text(message, encoding="utf-8")
    done = subprocess.run([str(HOOK), str(path)], capture_output=True, text=True, check=False)
    return done.returncode, done.stderr


@pytest.mark.parametrize(
    "message",
    [
        "x" * 72 + "\n",
        "Fix the lease watcher\n\nWhy: a transient error killed it.\n",
        # What git strips is not the message: comments, and a verbose commit's diff.
        "# Please enter the commit message\nShort subject\n",
        "Short subject\n\nbody\n# ------------------------ >8 ------------------------\n"
        + "y" * 200
        + "\n",
    ],
)
def test_a_short_subject_passes(tmp_path: Path, message: str) -> None:
    assert check(tmp_path, message) == (0, "")


def test_a_long_subject_is_refused(tmp_path: Path) -> None:
    assert check(tmp_path, "x" * 73 + "\n\nbody\n") == (
        1,
        "commit message: the subject has 73 characters; at most 72: say what changed, and "
        "put the why in the body\n",
    )


def test_a_body_glued_to_the_subject_is_refused(tmp_path: Path) -> None:
    assert check(tmp_path, "Subject\nbody right under it\n") == (
        1,
        "commit message: the subject is followed by text: leave a blank line before the body\n",
    )


def test_an_empty_message_is_refused(tmp_path: Path) -> None:
    assert check(tmp_path, "# only a comment\n\n") == (1, "commit message: the message is empty\n")
