"""The Action on a pull request from a fork: the run's publishes are staged, not written, and
the step summary shows what would be written, where, with which credential's name."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from hz.ci.github import markdown_text
from tests.fakes.github_server import FakeGitHub

# Its children run code no in-process test runs: coverage measures them.
pytestmark = pytest.mark.child_coverage

REPO = Path(__file__).resolve().parents[2]
CONTRACT = """\
hz:
  contract: 1
  name: review
  timeout: 10m
  agent: {max_usd: 0.5}
  publishes:
    - to: code-host.pull_request_comment
      args: {repository: acme/app, pull_request: 7}
contract: |
  Review.
prompt: |
  Looks good, @octocat.
  ```` planted fence
"""


def _event(tmp_path: Path, head: str) -> Path:
    event = tmp_path / "event.json"
    event.write_text(
        json.dumps(
            {
                "pull_request": {
                    "number": 7,
                    "head": {"repo": {"full_name": head}},
                    "base": {"repo": {"full_name": "acme/app"}},
                }
            }
        )
    )
    return event


def _action(tmp_path: Path, github: FakeGitHub, head: str) -> str:
    repo = tmp_path / "repo"
    (repo / "contracts").mkdir(parents=True, exist_ok=True)
    (repo / "contracts" / "review.yaml").write_text(CONTRACT)
    (tmp_path / "operator.toml").write_text(
        f"""
[capabilities]
agent_runner = "echo"
code-host = "github"
[providers.github]
api_url = "{github.url}"
[publish]
allow = ["code-host.pull_request_comment"]
repositories = ["acme/app"]
"""
    )
    summary = tmp_path / f"summary-{head.replace('/', '-')}"
    summary.write_text("")
    env = {
        **os.environ,
        "PYTHONPATH": str(REPO),
        "HZ_CONFIG": str(tmp_path / "operator.toml"),
        "HZ_STATE_DIR": str(tmp_path / "state"),
        "GITHUB_TOKEN": "ghs_actiontoken000000000000000000000000",
        "GITHUB_ACTIONS": "true",
        "GITHUB_OUTPUT": str(tmp_path / "outputs"),
        "GITHUB_STEP_SUMMARY": str(summary),
        "GITHUB_EVENT_NAME": "pull_request",
        "GITHUB_EVENT_PATH": str(_event(tmp_path, head)),
        "GITHUB_REPOSITORY": "acme/app",
        "GITHUB_RUN_ID": "8123456789",
        "GITHUB_RUN_ATTEMPT": "1",
        "GITHUB_JOB": "contracts",
    }
    done = subprocess.run(
        [sys.executable, "-m", "hz.ci.github", "--compile", "write", "--run", "review"],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return summary.read_text()


def test_a_fork_stages_its_publishes_in_the_summary(tmp_path: Path) -> None:
    with FakeGitHub() as github:
        github.add_pull("acme/app", 7, merged_at="2026-03-02T10:00:00Z")
        summary = _action(tmp_path, github, "stranger/app")
        assert github.comments("acme/app", 7) == []
        staged = summary.split("#### Staged publishes\n", 1)[1]
        run = staged.split(", run ")[1].split("\n")[0]
        url = markdown_text(github.url)
        assert staged == (
            "\n"
            "A pull request from a fork publishes nothing; a maintainer runs `hz publish RUN` to "
            "write these.\n"
            "\n"
            "- review, step 1: code\\-host\\.pull\\_request\\_comment → a comment on "
            f"acme\\/app\\#7 \\({url}\\) (credential \\$GITHUB\\_TOKEN), run {run}\n"
            "\n"
            "`````text\n"
            "Looks good, @\\u2060octocat.\n"
            "```` planted fence\n"
            "`````\n"
        )


def test_a_pull_request_from_the_repository_itself_publishes(tmp_path: Path) -> None:
    with FakeGitHub() as github:
        github.add_pull("acme/app", 7, merged_at="2026-03-02T10:00:00Z")
        summary = _action(tmp_path, github, "acme/app")
        [comment] = github.comments("acme/app", 7)
    assert "Staged publishes" not in summary
    assert comment["body"].startswith("Looks good, @\u2060octocat.\n")
