"""hz killed (SIGKILL) in the middle of a GitHub write, after the server stored the comment and
before hz read the answer: the next ``hz publish`` sees the writer gone, looks the marker up and
records the comment it finds, or, when the server cannot be searched, leaves the step
``uncertain``; in neither case is the comment sent a second time."""

from __future__ import annotations

import json
import os
import signal
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.github_server import FakeGitHub, error
from tests.helpers.publishing import last_run, run_weekly, space

# Its children run code no in-process test runs: coverage measures them.
pytestmark = pytest.mark.child_coverage

COMMENTS = r"/repos/acme/app/issues/7/comments"


def _killed_mid_write(
    cli: Any, hz_argv: list[str], tmp_path: Path, github: FakeGitHub
) -> tuple[str, dict[str, str]]:
    """A completed run (mode approve) whose first step's writer was SIGKILLed while GitHub
    held the answer to the comment it had stored."""
    env = space(tmp_path, github, mode="approve") | {"TEAM_CHAT_WEBHOOK": "http://127.0.0.1:9/"}
    done = run_weekly(cli, tmp_path, env)
    assert done.returncode == 0, done.stderr
    run_id = last_run(cli, tmp_path, env)
    github.after_write(COMMENTS, "hold")
    writer = subprocess.Popen(
        [*hz_argv, "publish", run_id, "--step", "1"],
        cwd=tmp_path,
        env={**os.environ, **env},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        assert github.state.stored.wait(60), "the writer never reached GitHub"
        assert len(github.comments("acme/app", 7)) == 1
    finally:
        writer.send_signal(signal.SIGKILL)
        writer.wait()
    return run_id, env


def _step_one(cli: Any, run_id: str, tmp_path: Path, env: dict[str, str]) -> dict[str, Any]:
    shown = cli("runs", "show", run_id, "--format", "json", cwd=tmp_path, env=env)
    first: dict[str, Any] = json.loads(shown.stdout)["publishes"][0]
    return first


def test_a_write_killed_after_github_stored_it_is_found_by_its_marker(
    cli: Any, hz_argv: list[str], tmp_path: Path
) -> None:
    with FakeGitHub() as github:
        github.add_pull("acme/app", 7, merged_at="2026-03-02T10:00:00Z")
        run_id, env = _killed_mid_write(cli, hz_argv, tmp_path, github)
        assert _step_one(cli, run_id, tmp_path, env)["state"] == "publishing"
        again = cli("publish", run_id, "--step", "1", cwd=tmp_path, env=env)
        [comment] = github.comments("acme/app", 7)
        github.state.release.set()
    assert again.returncode == 0, again.stderr
    assert again.stdout == (
        f"step 1: code-host.pull_request_comment: published: {comment['html_url']} (an earlier "
        "write was not observed; found by its marker)\n"
    )
    step = _step_one(cli, run_id, tmp_path, env)
    assert (step["state"], step["attempts"]) == ("published", 1)
    assert step["detail"] == "an earlier write was not observed; found by its marker"
    assert [s.method for s in github.seen].count("POST") == 1


def test_a_write_killed_on_a_server_that_cannot_be_searched_is_uncertain(
    cli: Any, hz_argv: list[str], tmp_path: Path
) -> None:
    with FakeGitHub() as github:
        github.add_pull("acme/app", 7, merged_at="2026-03-02T10:00:00Z")
        github.fail(COMMENTS, error(403, "Resource not accessible by integration"))
        run_id, env = _killed_mid_write(cli, hz_argv, tmp_path, github)
        again = cli("publish", run_id, "--step", "1", cwd=tmp_path, env=env)
        twice = cli("publish", run_id, "--step", "1", cwd=tmp_path, env=env)
        github.state.release.set()
        assert len(github.comments("acme/app", 7)) == 1
    assert again.returncode == 1
    assert again.stdout == (
        "step 1: code-host.pull_request_comment: uncertain (an earlier write was not observed; "
        "GitHub could not be searched (GET /repos/acme/app/issues/7/comments?per_page=100&page=1"
        "): 403 Resource not accessible by integration: not sent again)\n"
    )
    assert twice.stdout == again.stdout
    assert [s.method for s in github.seen].count("POST") == 1
