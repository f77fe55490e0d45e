"""Publishing a completed run's draft: one write per step, found again by its marker, never
sent twice (docs/publishing.md), against the fake GitHub, a local webhook and a folder."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.github_server import FakeGitHub, error
from tests.helpers.clock import FakeClock
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

        shown = cli("runs", "show", run_id, "--format", "json", cwd=tmp_path, env=env)
        document = json.loads(shown.stdout)
        receipt = Path(document["receipt"])
        for step in document["publishes"]:
            record = json.loads(
                receipt.with_name(f"{receipt.stem}.publish-{step['step']}.json").read_text()
            )
            assert (record["marker"], record["sha256"], record["location"]) == (
                f"hz-publish:{run_id}:{step['step']}",
                step["sha256"],
                step["location"],
            )
            assert record["receipt_sha256"] == hashlib.sha256(receipt.read_bytes()).hexdigest()
        assert document["publishes"][1]["sha256"] == hashlib.sha256(report.read_bytes()).hexdigest()

        text = cli("runs", "show", run_id, cwd=tmp_path, env=env).stdout
        assert text.split("publishes:\n")[1].split("draft:")[0] == (
            f"  1 code-host.pull_request_comment: published: {comment['html_url']}\n"
            f"  2 files.write: published: {report}\n"
            "  3 webhook.post: published: webhook team-chat\n"
        )

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


def test_a_worker_publishes_what_hz_submit_queued(
    cli: Any, tmp_path: Path, github: FakeGitHub
) -> None:
    with Webhook() as hook:
        env = space(tmp_path, github) | {"TEAM_CHAT_WEBHOOK": hook.url}
        args = ("--input", "pr=7", "--input", "week=w10")
        queued = cli("submit", "weekly.yaml", *args, cwd=tmp_path, env=env)
        assert queued.returncode == 0, queued.stderr
        worked = cli("worker", "--drain", "-j", "1", cwd=tmp_path, env=env)
        assert worked.returncode == 0, worked.stderr
        run_id = queued.stdout.strip()
        assert f"hz: {run_id}: publish step 3: webhook.post: published: webhook team-chat\n" in (
            worked.stderr
        )
        assert len(github.comments("acme/app", 7)) == 1
        assert len(hook.received) == 1
        assert (tmp_path / "reports" / "w10.md").exists()


def test_hz_submit_refuses_an_undeliverable_publish_before_queueing(
    cli: Any, tmp_path: Path, github: FakeGitHub
) -> None:
    env = space(tmp_path, github) | {"TEAM_CHAT_WEBHOOK": "http://127.0.0.1:9/"}
    (tmp_path / "weekly.yaml").write_text(
        (tmp_path / "weekly.yaml").read_text().replace("reports/{{", "drafts/{{")
    )
    args = ("--input", "pr=7", "--input", "week=w10")
    done = cli("submit", "weekly.yaml", *args, cwd=tmp_path, env=env)
    assert done.returncode == 2
    assert done.stderr.startswith(
        "hz: error: job 'weekly-status' cannot publish as its contract asks, so it was not "
        "started: publish 2 (files.write): files.write: 'drafts/w10.md' is in no folder "
        "[publish] folders allows (reports)\n"
    )
    assert done.stdout == ""


def test_an_uncertain_step_is_resent_or_skipped_only_when_a_person_says_so(
    cli: Any, tmp_path: Path, github: FakeGitHub
) -> None:
    github.after_write(r"/repos/acme/app/issues/7/comments", "drop")
    github.fail(r"/repos/acme/app/issues/7/comments", error(502, "Bad gateway"))
    with Webhook(status=502) as hook:
        env = space(tmp_path, github) | {"TEAM_CHAT_WEBHOOK": hook.url}
        run_weekly(cli, tmp_path, env)
        run_id = last_run(cli, tmp_path, env)
        hook_step = cli("publish", run_id, "--step", "3", cwd=tmp_path, env=env)
        assert hook_step.stdout == (
            "step 3: webhook.post: uncertain (webhook team-chat answered 502; "
            "a webhook cannot be asked whether it received a request: not sent again)\n"
        )
        gave_up = cli("publish", run_id, "--step", "3", "--skip", cwd=tmp_path, env=env)
        assert gave_up.returncode == 0, gave_up.stderr
        assert gave_up.stdout == ("step 3: webhook.post: skipped (skipped by hz publish --skip)\n")
        assert len(hook.received) == 1
        bare = cli("publish", run_id, "--resend", cwd=tmp_path, env=env)
        assert bare.returncode == 2
        assert "--skip and --resend take one step: give --step N" in bare.stderr
        resent = cli("publish", run_id, "--step", "1", "--resend", cwd=tmp_path, env=env)
        assert resent.returncode == 0, resent.stderr
        assert resent.stdout.startswith("step 1: code-host.pull_request_comment: published: ")
        assert len(github.comments("acme/app", 7)) == 2  # the person's call: sent again
        skipped = cli("publish", run_id, "--step", "1", "--skip", cwd=tmp_path, env=env)
    assert skipped.returncode == 2
    assert skipped.stderr == (
        f"hz: error: step 1 of {run_id} cannot be skipped: it does not exist, is published, or "
        "is being published now\n"
        f"  hint: hz runs show {run_id} lists its steps\n"
    )


def _away_for(monkeypatch: pytest.MonkeyPatch, times: int) -> FakeClock:
    """The database away for the first ``times`` makings of a run's publish steps (a restart
    just after its end was recorded); the clock publishing waits on, faked: no real wait."""
    from hz.runtime.ledger.db import LedgerUnavailable
    from hz.runtime.ledger.store import Ledger

    made = Ledger.add_steps
    failures = [times]

    def add_steps(self: Any, run_id: str, targets: Any) -> Any:
        if failures[0] > 0:
            failures[0] -= 1
            raise LedgerUnavailable("w: the PostgreSQL ledger cannot be used: the server restarts")
        return made(self, run_id, targets)

    monkeypatch.setattr(Ledger, "add_steps", add_steps)
    clock = FakeClock()
    monkeypatch.setattr("hz.runtime.process.clock.SYSTEM", clock)  # what publishing waits on
    return clock


def test_a_worker_waits_out_the_database_to_publish_a_completed_run_once(
    cli: Any, tmp_path: Path, github: FakeGitHub, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The database away just after the run's end was recorded: its publishes (made only by
    the process that completed it) are tried again as its records are, and written once."""
    with Webhook() as hook:
        env = space(tmp_path, github) | {"TEAM_CHAT_WEBHOOK": hook.url}
        queued = cli("submit", "weekly.yaml", "--input", "pr=7", "--input", "week=w10",
                     cwd=tmp_path, env=env)  # fmt: skip
        assert queued.returncode == 0, queued.stderr
        with monkeypatch.context() as patched:
            clock = _away_for(patched, 2)
            worked = cli("worker", "--drain", "-j", "1", cwd=tmp_path, env=env)
        assert worked.returncode == 0, worked.stderr
        run_id = queued.stdout.strip()
        assert clock.slept == [0.1, 0.2]
        assert "hz: error:" not in worked.stderr
        assert f"hz: {run_id}: publish step 3: webhook.post: published: webhook team-chat\n" in (
            worked.stderr
        )
        assert len(github.comments("acme/app", 7)) == 1
        assert len(hook.received) == 1
        again = cli("publish", run_id, "--format", "json", cwd=tmp_path, env=env)
        assert [s["state"] for s in json.loads(again.stdout)] == ["published"] * 3
        assert len(github.comments("acme/app", 7)) == 1
        assert len(hook.received) == 1


def test_a_run_the_worker_could_not_publish_says_so_and_hz_publish_writes_it_once(
    cli: Any, tmp_path: Path, github: FakeGitHub, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The database away past the patience: the worker says the publishes were not written
    and how to write them, hz runs show says none was attempted, hz publish writes each once."""
    with Webhook() as hook:
        env = space(tmp_path, github) | {"TEAM_CHAT_WEBHOOK": hook.url}
        queued = cli("submit", "weekly.yaml", "--input", "pr=7", "--input", "week=w10",
                     cwd=tmp_path, env=env)  # fmt: skip
        run_id = queued.stdout.strip()
        with monkeypatch.context() as patched:
            clock = _away_for(patched, 1000)
            worked = cli("worker", "--drain", "-j", "1", cwd=tmp_path, env=env)
        assert worked.returncode == 0, worked.stderr
        assert sum(clock.slept) > 60
        assert (
            f"hz: error: {run_id}: publishing: w: the PostgreSQL ledger cannot be used: the "
            "server restarts; its publishes were not written\n"
            f"  hint: hz publish {run_id} writes them (each once)\n"
        ) in worked.stderr
        assert github.comments("acme/app", 7) == []
        assert hook.received == []

        shown = cli("runs", "show", run_id, cwd=tmp_path, env=env).stdout
        assert shown.split("publishes:\n")[1].split("draft:")[0] == (
            f"  none attempted (3 asked): hz publish {run_id} writes them\n"
        )
        document = json.loads(
            cli("runs", "show", run_id, "--format", "json", cwd=tmp_path, env=env).stdout
        )
        assert document["publishes_not_made"] == 3
        for _ in range(2):
            published = cli("publish", run_id, "--format", "json", cwd=tmp_path, env=env)
            assert published.returncode == 0, published.stderr
            assert [s["state"] for s in json.loads(published.stdout)] == ["published"] * 3
        assert len(github.comments("acme/app", 7)) == 1
        assert len(hook.received) == 1
        assert (tmp_path / "reports" / "w10.md").exists()
