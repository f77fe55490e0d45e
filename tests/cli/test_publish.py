"""Publishing a completed run's draft: one write per step, found again by its marker, never
sent twice (docs/publishing.md), against the fake GitHub, a local webhook and a folder."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.github_server import FakeGitHub, error
from tests.helpers.publishing import TOKEN, last_run, run_weekly, space
from tests.helpers.webhook import Webhook


@pytest.fixture
def github() -> Any:
    with FakeGitHub() as server:
        server.add_pull("acme/app", 7, merged_at="2026-03-02T10:00:00Z")
        yield server


def test_a_run_publishes_once_to_a_comment_a_file_and_a_webhook(
    cli: Any, tmp_path: Path, github: FakeGitHub
) -> None:
    with Webhook() as hook:
        env = space(tmp_path, github) | {"TEAM_CHAT_WEBHOOK": hook.url}
        done = run_weekly(cli, tmp_path, env)
        assert done.returncode == 0, done.stderr
        run_id = last_run(cli, tmp_path, env)
        [comment] = github.comments("acme/app", 7)
        assert comment["body"].endswith(f"<!-- hz-publish:{run_id}:1 -->")
        # the draft's mention and slash command are neutralised
        assert "@\u2060acme/team" in comment["body"]
        assert "\n\\/deploy now" in comment["body"]
        report = tmp_path / "reports" / "w10.md"
        assert report.read_text() == "Status of week w10 for @acme/team\n/deploy now\n"
        sidecar = json.loads((tmp_path / "reports" / ".w10.md.hz-publish.json").read_text())
        assert sidecar["marker"] == f"hz-publish:{run_id}:2"
        [(headers, body)] = hook.received
        assert headers["idempotency-key"] == f"hz-publish:{run_id}:3"
        assert body == {"text": "Status of week w10 for @acme/team\n/deploy now\n"}
        assert TOKEN not in json.dumps(hook.received)

        again = cli("publish", run_id, "--format", "json", cwd=tmp_path, env=env)
        assert again.returncode == 0, again.stderr
        assert [s["state"] for s in json.loads(again.stdout)] == ["published"] * 3
        assert len(github.comments("acme/app", 7)) == 1
        assert len(hook.received) == 1


def test_a_lost_answer_is_found_by_its_marker_not_sent_twice(
    cli: Any, tmp_path: Path, github: FakeGitHub
) -> None:
    github.after_write(r"/repos/acme/app/issues/7/comments", "5xx")
    with Webhook() as hook:
        env = space(tmp_path, github) | {"TEAM_CHAT_WEBHOOK": hook.url}
        done = run_weekly(cli, tmp_path, env)
        assert done.returncode == 0, done.stderr
        run_id = last_run(cli, tmp_path, env)
    assert len(github.comments("acme/app", 7)) == 1
    shown = cli("runs", "show", run_id, "--format", "json", cwd=tmp_path, env=env)
    [first, *_] = json.loads(shown.stdout)["publishes"]
    assert first["state"] == "published"
    assert first["detail"] == (
        "GitHub answered 502 for POST /repos/acme/app/issues/7/comments: Server Error; "
        "found by its marker"
    )


def test_a_lost_answer_on_a_server_that_cannot_be_searched_is_uncertain(
    cli: Any, tmp_path: Path, github: FakeGitHub
) -> None:
    github.after_write(r"/repos/acme/app/issues/7/comments", "5xx")
    github.fail(r"/repos/acme/app/issues/7/comments", error(500, "boom"), accept=None)
    with Webhook() as hook:
        env = space(tmp_path, github) | {"TEAM_CHAT_WEBHOOK": hook.url}
        done = run_weekly(cli, tmp_path, env)
        run_id = last_run(cli, tmp_path, env)
        assert done.returncode == 1
        again = cli("publish", run_id, "--format", "json", cwd=tmp_path, env=env)
    steps = json.loads(again.stdout)
    assert [s["state"] for s in steps] == ["uncertain", "published", "published"]
    assert len(github.comments("acme/app", 7)) == 1  # stored once; the fault hides the list
    writes = [s for s in github.seen if s.method == "POST"]
    assert len(writes) == 1  # never re-sent


def test_mode_approve_writes_nothing_until_hz_publish(
    cli: Any, tmp_path: Path, github: FakeGitHub
) -> None:
    with Webhook() as hook:
        env = space(tmp_path, github, mode="approve") | {"TEAM_CHAT_WEBHOOK": hook.url}
        done = run_weekly(cli, tmp_path, env)
        assert done.returncode == 0, done.stderr
        run_id = last_run(cli, tmp_path, env)
        assert github.comments("acme/app", 7) == []
        assert not (tmp_path / "reports" / "w10.md").exists()
        assert hook.received == []
        staged = cli("publish", run_id, "--staged", cwd=tmp_path, env=env)
        assert staged.returncode == 0, staged.stderr
        assert staged.stdout == (
            f"step 1: code-host.pull_request_comment -> a comment on acme/app#7 ({github.url}) "
            "(credential: $GITHUB_TOKEN) [pending]\n"
            "  Status of week w10 for @\\u2060acme/team\n"
            "  \\/deploy now\n"
            f"step 2: files.write -> {tmp_path}/reports/w10.md [pending]\n"
            "  Status of week w10 for @acme/team\n"
            "  /deploy now\n"
            "step 3: webhook.post -> webhook team-chat (the URL in TEAM_CHAT_WEBHOOK) "
            "(credential: $TEAM_CHAT_WEBHOOK) [pending]\n"
            "  Status of week w10 for @acme/team\n"
            "  /deploy now\n"
        )
        assert github.comments("acme/app", 7) == []
        published = cli("publish", run_id, cwd=tmp_path, env=env)
        assert published.returncode == 0, published.stderr
        assert len(github.comments("acme/app", 7)) == 1
        assert len(hook.received) == 1


def test_a_repository_the_policy_does_not_allow_is_refused_before_the_session(
    cli: Any, tmp_path: Path, github: FakeGitHub
) -> None:
    env = space(tmp_path, github, repos="acme/other") | {"TEAM_CHAT_WEBHOOK": "http://127.0.0.1:9/"}
    done = run_weekly(cli, tmp_path, env)
    assert done.returncode == 2
    assert done.stderr == (
        "hz: error: job 'weekly-status' cannot publish as its contract asks, so it was not "
        "started: publish 1 (code-host.pull_request_comment): the repository 'acme/app' is not in "
        "[publish] repositories\n"
        "  hint: the operator's configuration decides where drafts may go: [publish] allow, "
        "repositories, folders, jobs, [publish.webhooks.NAME] and [publish.commands.NAME] "
        "(docs/publishing.md)\n"
    )
    assert (
        not (tmp_path / "state").exists()
        or "run_" not in cli("runs", "list", cwd=tmp_path, env=env).stdout
    )
