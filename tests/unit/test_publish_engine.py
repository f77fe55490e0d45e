"""The engine's failures, each leaving the step it should: refused by the target or by the
draft (failed, nothing written), a command stopped (uncertain), a file written before its
sidecar found by its digest; credentials never recorded."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from hz.runtime.artifacts.models import PublishSpec
from hz.runtime.config.publish import PublishSettings
from hz.runtime.ledger.store import Ledger
from hz.runtime.publish.engine import Publishing, publish_run, stage
from hz.runtime.publish.policy import refusals
from tests.fakes.github_server import FakeGitHub, error, huge, trickle
from tests.helpers.publish_engine import (
    ISSUE_COMMENT,
    OPEN,
    TOKEN,
    attempted,
    completed,
    github_publishing,
    open_publishing,
    webhook_publishing,
    webhook_settings,
)
from tests.helpers.webhook import Webhook

HOOK_SECRET = "https://127.0.0.1/hooks/planted-secret"


def test_a_target_that_refuses_leaves_failed_and_nothing_written(tmp_path: Path) -> None:
    with FakeGitHub() as github:
        github.fail(r"/repos/acme/app/issues/9/comments", error(404, "Not Found"), method="POST")
        ledger, run_id = completed(tmp_path, [ISSUE_COMMENT], "hello")
        ctx = github_publishing(github.url)
        [step] = publish_run(ledger, run_id, ctx)
    assert (step.state, step.attempts) == ("failed", 1)
    assert step.detail == (
        "GitHub answered 404 for POST /repos/acme/app/issues/9/comments: Not Found"
    )


@pytest.mark.parametrize("repository", ["acme/..", "acme/.", "../app", "acme/app/x"])
def test_a_repository_github_has_no_path_for_fails_the_step_and_sends_nothing(
    tmp_path: Path, repository: str
) -> None:
    # A forged packet or ledger row: "acme/.." would be folded into /repos/issues/9 by the
    # HTTP client, a repository the policy's "acme/*" never allowed.
    spec = PublishSpec(to="code-host.issue_comment", args={"repository": repository, "issue": 9})
    with FakeGitHub() as github:
        ledger, run_id = completed(tmp_path, [spec], "hello")
        [step] = publish_run(ledger, run_id, github_publishing(github.url))
        assert github.requests == []
    assert (step.state, step.attempts) == ("failed", 0)
    assert step.detail == (
        f"repository {repository!r} is not a GitHub repository's owner/name "
        "(letters, digits, '_', '.', '-'; neither part . or ..)"
    )


def test_a_missing_token_fails_the_step_naming_the_variable(tmp_path: Path) -> None:
    ledger, run_id = completed(tmp_path, [ISSUE_COMMENT], "hello")
    ctx = github_publishing("http://127.0.0.1:9", token=None)
    [step] = publish_run(ledger, run_id, ctx)
    assert (step.state, step.attempts) == ("failed", 0)  # checked before the attempt
    assert step.detail == (
        "the environment variable GITHUB_TOKEN holding the GitHub token is not set "
        "([providers.github] token_env)"
    )


def test_an_invalid_json_draft_fails_before_anything_is_sent(tmp_path: Path) -> None:
    with Webhook() as hook:
        spec = PublishSpec(to="webhook.post", args={"webhook": "metrics", "body": "json"})
        ledger, run_id = completed(tmp_path, [spec], "{not json", fmt="json")
        ctx = webhook_publishing("metrics", hook.url)
        [step] = publish_run(ledger, run_id, ctx)
        assert hook.received == []
    assert (step.state, step.attempts) == ("failed", 0)
    assert step.detail is not None
    assert step.detail.startswith("the draft is not valid JSON")


def test_a_json_draft_is_posted_as_itself_with_its_idempotency_key(tmp_path: Path) -> None:
    with Webhook() as hook:
        spec = PublishSpec(to="webhook.post", args={"webhook": "metrics", "body": "json"})
        ledger, run_id = completed(tmp_path, [spec], '{"open": 3}', fmt="json")
        ctx = webhook_publishing("metrics", hook.url)
        [step] = publish_run(ledger, run_id, ctx)
        [(headers, body)] = hook.received
    assert (step.state, step.location) == ("published", "webhook metrics")
    assert body == {"open": 3}
    assert headers["idempotency-key"] == f"hz-publish:{run_id}:1"


def test_a_command_that_is_stopped_leaves_the_step_uncertain(tmp_path: Path) -> None:
    spec = PublishSpec(to="command.run", args={"command": "slow"})
    ledger, run_id = completed(tmp_path, [spec], "hello")
    argv = [sys.executable, "-c", "import time; time.sleep(30)"]
    ctx = open_publishing(commands={"slow": {"argv": argv, "timeout_seconds": 0.5}})
    [step] = publish_run(ledger, run_id, ctx)
    assert (step.state, step.attempts) == ("uncertain", 1)
    assert step.detail == (
        "command slow was stopped before it finished; a command cannot be asked whether it "
        "wrote: not sent again"
    )
    assert publish_run(ledger, run_id, ctx)[0].attempts == 1  # never again by itself


def test_a_file_written_before_its_sidecar_is_found_by_its_digest(tmp_path: Path) -> None:
    (tmp_path / "reports").mkdir()
    spec = PublishSpec(to="files.write", args={"path": "reports/a.md"})
    ledger, run_id = completed(tmp_path, [spec], "the report")
    ctx = open_publishing(folders=["reports"])
    [step] = publish_run(ledger, run_id, ctx)
    assert step.state == "published"
    # As if hz was killed between the file and its sidecar, with the step left publishing.
    (tmp_path / "reports" / ".a.md.hz-publish.json").unlink()
    with ledger.tx() as c:
        c.execute("UPDATE publish_steps SET state = 'publishing', lease_until = 0")
    [again] = publish_run(ledger, run_id, ctx)
    assert (again.state, again.attempts, again.detail) == (
        "published",
        1,
        "an earlier write was not observed; found by its marker",
    )
    assert (tmp_path / "reports" / ".a.md.hz-publish.json").exists()


def test_credentials_are_never_recorded_or_staged(tmp_path: Path) -> None:
    spec = PublishSpec(to="webhook.post", args={"webhook": "chat"})
    ledger, run_id = completed(tmp_path, [spec], "hello")
    ctx = Publishing(webhook_settings("chat"), environ={"HOOK": HOOK_SECRET, "GITHUB_TOKEN": TOKEN})
    [staged] = stage(ledger, run_id, ctx)
    assert (staged.where, staged.credential) == ("webhook chat (the URL in HOOK)", "HOOK")
    [step] = publish_run(ledger, run_id, ctx)  # nothing listens there: refused
    dumped = json.dumps([s.to_json() for s in ledger.steps(run_id)])
    assert "planted-secret" not in dumped
    assert step.state == "failed"


@pytest.mark.parametrize(
    ("settings", "spec", "why"),
    [
        (
            {"allow": ["files.write"], "folders": ["r"], "jobs": ["weekly-*"]},
            PublishSpec(to="files.write", args={"path": "r/a"}),
            "job 'greet' may not publish ([publish] jobs: weekly-*)",
        ),
        (
            {},
            PublishSpec(to="files.write", args={"path": "r/a"}),
            "publish 1 (files.write): the target is not in [publish] allow",
        ),
        (
            {"allow": ["webhook.post"]},
            PublishSpec(to="webhook.post", args={"webhook": "x"}),
            "publish 1 (webhook.post): no webhook 'x' in [publish.webhooks]",
        ),
        (
            {"allow": ["command.run"]},
            PublishSpec(to="command.run", args={"command": "x"}),
            "publish 1 (command.run): no command 'x' in [publish.commands]",
        ),
        (
            {"allow": ["files.write"], "folders": ["r"]},
            PublishSpec(to="files.write", args={"path": "r/a", "overwrite": True}),
            "publish 1 (files.write): overwrite is asked for but [publish] overwrite is off",
        ),
    ],
)
def test_the_policy_names_each_refusal(
    tmp_path: Path, settings: dict[str, Any], spec: PublishSpec, why: str
) -> None:
    found = refusals("greet", [spec], PublishSettings.model_validate(settings), workdir=tmp_path)
    assert found == [why]


def test_a_comment_someone_else_wrote_with_the_marker_is_not_taken_for_ours(
    tmp_path: Path,
) -> None:
    with FakeGitHub() as github:
        ledger, run_id = completed(tmp_path, [ISSUE_COMMENT], "hello")
        # hz was killed after recording its attempt, before GitHub stored anything; meanwhile
        # someone posted a comment carrying the step's marker.
        attempted(ledger, run_id, "hello")
        planted = f"pwned\n\n<!-- hz-publish:{run_id}:1 -->"
        github.add_issue("acme/app", 9, comments=(("mallory", "2026-03-01T00:00:00Z", planted),))
        ctx = github_publishing(github.url)
        [step] = publish_run(ledger, run_id, ctx)
        bodies = [c["body"] for c in github.comments("acme/app", 9)]
    assert (step.state, step.attempts) == ("published", 2)
    assert bodies == [planted, f"hello\n\n<!-- hz-publish:{run_id}:1 -->"]


def test_a_github_answer_that_trickles_is_unobserved_then_found(tmp_path: Path) -> None:
    with FakeGitHub() as github:
        github.add_issue("acme/app", 9)
        body = json.dumps({"html_url": "x"}).encode()
        github.fail(
            r"/repos/acme/app/issues/9/comments", trickle(body, 0.3), method="POST", times=1
        )
        ledger, run_id = completed(tmp_path, [ISSUE_COMMENT], "hello")
        ctx = github_publishing(github.url, timeout_seconds=0.5)
        [step] = publish_run(ledger, run_id, ctx)
        github.state.release.set()
    # The trickled answer was a fault: nothing was stored, so the marker is not found and the
    # write is sent once more.
    assert (step.state, step.attempts) == ("published", 2)
    assert len(github.comments("acme/app", 9)) == 1


def test_a_lookup_answer_over_the_cap_cannot_tell(tmp_path: Path) -> None:
    with FakeGitHub() as github:
        github.add_issue("acme/app", 9)
        github.after_write(r"/repos/acme/app/issues/9/comments", "5xx")
        github.fail(r"/repos/acme/app/issues/9/comments", huge(5 * 1024 * 1024))
        ledger, run_id = completed(tmp_path, [ISSUE_COMMENT], "hello")
        ctx = github_publishing(github.url)
        [step] = publish_run(ledger, run_id, ctx)
    assert (step.state, step.attempts) == ("uncertain", 1)
    assert step.detail == (
        "GitHub answered 502 for POST /repos/acme/app/issues/9/comments: Server Error; GitHub "
        "could not be searched (GET /repos/acme/app/issues/9/comments?per_page=100&page=1): its "
        "answer is larger than 4,194,304 bytes: not sent again"
    )


def test_a_writer_gone_before_its_attempt_sent_nothing_and_is_not_looked_up(
    tmp_path: Path,
) -> None:
    from hz.runtime.publish.engine import make_steps

    (tmp_path / "reports").mkdir()
    spec = PublishSpec(to="files.write", args={"path": "reports/a.md"})
    ledger, run_id = completed(tmp_path, [spec], "the report")
    make_steps(ledger, run_id)
    assert ledger.take_step(run_id, 1, now=0.0, lease_seconds=1) is not None  # then killed
    [step] = publish_run(ledger, run_id, open_publishing(folders=["reports"]))
    assert (step.state, step.attempts, step.detail) == ("published", 1, None)


SHA = "d" * 40


@pytest.mark.parametrize(
    ("spec", "path"),
    [
        (
            PublishSpec(to="tracker.create_issue", args={"repository": "acme/app", "title": "T"}),
            r"/repos/acme/app/issues",
        ),
        (
            PublishSpec(
                to="tracker.update_issue_body",
                args={"repository": "acme/app", "issue": 9, "section": "status"},
            ),
            r"/repos/acme/app/issues/9",
        ),
        (
            PublishSpec(
                to="code-host.commit_status",
                args={"repository": "acme/app", "sha": SHA, "context": "hz/x"},
            ),
            rf"/repos/acme/app/statuses/{SHA}",
        ),
    ],
)
def test_each_github_target_is_found_again_after_a_lost_answer(
    tmp_path: Path, spec: PublishSpec, path: str
) -> None:
    with FakeGitHub() as github:
        github.add_issue("acme/app", 9, body="Intro.")
        github.after_write(path, "5xx")
        ledger, run_id = completed(tmp_path, [spec], "All green.")
        ctx = github_publishing(github.url)
        [step] = publish_run(ledger, run_id, ctx)
        writes = [s for s in github.seen if s.method in ("POST", "PATCH")]
    assert (step.state, step.attempts) == ("published", 1)
    assert step.detail is not None
    assert step.detail.endswith("; found by its marker")
    assert len(writes) == 1


@pytest.mark.parametrize(
    "token",
    [TOKEN + "\n", "ghp_é" + TOKEN[5:], " ", TOKEN[:10] + "\x00" + TOKEN[10:]],
)
def test_a_token_that_cannot_be_sent_fails_the_step_unshown_and_sends_nothing(
    tmp_path: Path, token: str
) -> None:
    with FakeGitHub() as github:
        github.add_issue("acme/app", 9)
        ledger, run_id = completed(tmp_path, [ISSUE_COMMENT], "hello")
        ctx = github_publishing(github.url, token=token)
        [step] = publish_run(ledger, run_id, ctx)
        assert github.seen == []
    assert (step.state, step.attempts, step.detail) == (
        "failed",
        0,
        "the token in GITHUB_TOKEN ([providers.github] token_env) has blanks, control "
        "characters or characters that are not ASCII around or in it (it is not shown)",
    )
    assert "plantedsecret" not in json.dumps([s.to_json() for s in ledger.steps(run_id)])


@pytest.mark.parametrize(
    ("url", "problem"),
    [
        (
            "https://hooks.example.com/services/planted-secret\n",
            "holds blanks, control characters or characters that are not ASCII",
        ),
        ("https://[::1/planted-secret", "does not hold a valid URL"),
        ("https://xn--/planted-secret", "does not hold a valid URL"),
        ("https://", "does not hold a valid URL (no host)"),
        ("ftp://planted-secret.example/", "must hold an https:// URL"),
    ],
)
def test_a_webhook_url_that_cannot_be_sent_to_fails_the_step_and_sends_nothing(
    tmp_path: Path, url: str, problem: str
) -> None:
    spec = PublishSpec(to="webhook.post", args={"webhook": "chat"})
    ledger, run_id = completed(tmp_path, [spec], "hello")
    settings = webhook_settings("chat")
    ctx = Publishing(settings, environ={"HOOK": url})
    [step] = publish_run(ledger, run_id, ctx)
    assert (step.state, step.attempts, step.detail) == (
        "failed",
        0,
        f"webhook.post: HOOK {problem} (the value is not shown)",
    )
    assert refusals("greet", [spec], settings, workdir=tmp_path, environ={"HOOK": url}) == [
        f"publish 1 (webhook.post): HOOK {problem} (the value is not shown)"
    ]


def test_an_unexpected_error_in_a_write_is_an_outcome_not_a_crash(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from hz.runtime.publish.targets.webhook import WebhookPublisher

    def broken(self: object, step: object, payload: object) -> str:
        raise ValueError("a bug")

    monkeypatch.setattr(WebhookPublisher, "write", broken)
    spec = PublishSpec(to="webhook.post", args={"webhook": "chat"})
    ledger, run_id = completed(tmp_path, [spec], "hello")
    settings = webhook_settings("chat")
    [step] = publish_run(ledger, run_id, Publishing(settings, environ={"HOOK": HOOK_SECRET}))
    assert (step.state, step.attempts, step.detail) == (
        "uncertain",
        1,
        "the write failed unexpectedly: ValueError; a webhook cannot be asked whether it "
        "received a request: not sent again",
    )


def test_what_a_target_says_never_shows_a_secret_by_value(tmp_path: Path) -> None:
    """The webhook's variable is not named like a secret: its value is redacted all the same."""
    from hz.runtime.publish.engine import publisher_for
    from hz.runtime.publish.targets.base import Refused
    from hz.runtime.publish.targets.webhook import WebhookPublisher

    settings = PublishSettings.model_validate(OPEN | {"webhooks": {"chat": {"url_env": "CHAT"}}})
    ctx = Publishing(settings, environ={"CHAT": HOOK_SECRET})
    publisher = publisher_for("webhook.post", ctx, tmp_path)

    def said(self: object, step: object) -> str:
        raise Refused(f"the server said: no such hook {HOOK_SECRET!r} or {json.dumps(HOOK_SECRET)}")

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(WebhookPublisher, "where", said)
        with pytest.raises(Refused) as refused:
            publisher.where(None)  # type: ignore[arg-type]
    assert str(refused.value) == "the server said: no such hook '[redacted]' or \"[redacted]\""


def test_a_github_answer_whose_headers_trickle_is_cut_at_the_deadline(tmp_path: Path) -> None:
    import time

    from tests.fakes.github_server import header_trickle

    with FakeGitHub() as github:
        github.add_issue("acme/app", 9)
        github.fail(
            r"/repos/acme/app/issues/9/comments", header_trickle(0.1), method="POST", times=1
        )
        ledger, run_id = completed(tmp_path, [ISSUE_COMMENT], "hello")
        ctx = github_publishing(github.url, timeout_seconds=0.5)
        started = time.monotonic()
        [step] = publish_run(ledger, run_id, ctx)
        took = time.monotonic() - started
        github.state.release.set()
    # Cut at 0.5 s (a header line every 0.1 s never trips httpx's own read timeout), then
    # the marker is looked up, not found, and the comment sent once more.
    assert took < 3
    assert (step.state, step.attempts) == ("published", 2)
    assert step.detail is None
    assert len(github.comments("acme/app", 9)) == 1


def test_the_lease_outlives_the_longest_write_in_flight(tmp_path: Path) -> None:
    """A webhook may wait 600 s, over the step's usual lease: renewed as the write starts, the
    lease still holds when the answer is due, so no other writer takes the step over."""
    leases: list[float | None] = []
    spec = PublishSpec(to="webhook.post", args={"webhook": "slow"})
    ledger, run_id = completed(tmp_path, [spec], "hello")

    def look() -> None:
        [seen] = Ledger(tmp_path / "ledger.sqlite3").steps(run_id)
        leases.append(seen.lease_until)

    with Webhook(during=look) as hook:
        settings = webhook_settings("slow", timeout_seconds=600)
        ctx = Publishing(settings, environ={"HOOK": hook.url}, lease_seconds=300, now=lambda: 1e6)
        [step] = publish_run(ledger, run_id, ctx)
    assert step.state == "published"
    assert leases == [1e6 + 600 + 60]


def test_a_lost_status_is_not_found_in_an_older_status_of_its_context(tmp_path: Path) -> None:
    """The previous run left ``hz/review = success``; this one's ``failure`` got a 502 and was
    never stored: it is sent again, not taken as found."""
    with FakeGitHub() as github:
        older = {"state": "success", "context": "hz/review", "description": "All good."}
        github.state.statuses[("acme/app", SHA)] = [older | {"creator": {"login": "hz-bot"}}]
        github.fail(
            rf"/repos/acme/app/statuses/{SHA}", error(502, "Bad Gateway"), method="POST", times=1
        )
        spec = PublishSpec(
            to="code-host.commit_status",
            args={"repository": "acme/app", "sha": SHA, "context": "hz/review", "state": "failure"},
        )
        ledger, run_id = completed(tmp_path, [spec], "BROKEN build\nmore")
        ctx = github_publishing(github.url)
        [step] = publish_run(ledger, run_id, ctx)
        statuses = github.state.statuses[("acme/app", SHA)]
    assert (step.state, step.attempts) == ("published", 2)
    assert [(s["state"], s["description"]) for s in statuses] == [
        ("failure", "BROKEN build"),
        ("success", "All good."),
    ]


def test_a_comment_with_our_exact_body_by_someone_else_is_not_adopted(tmp_path: Path) -> None:
    with FakeGitHub() as github:
        ledger, run_id = completed(tmp_path, [ISSUE_COMMENT], "hello")
        attempted(ledger, run_id, "hello")
        # Someone who learnt the run id posts the exact body and marker first.
        planted = f"hello\n\n<!-- hz-publish:{run_id}:1 -->"
        github.add_issue("acme/app", 9, comments=(("mallory", "2026-03-01T00:00:00Z", planted),))
        ctx = github_publishing(github.url)
        [step] = publish_run(ledger, run_id, ctx)
        authors = [c["user"]["login"] for c in github.comments("acme/app", 9)]
        asked = [s.path for s in github.seen if s.path == "/user"]
    assert (step.state, step.attempts) == ("published", 2)
    assert authors == ["mallory", "hz-bot"]
    assert asked == ["/user"]


def test_a_token_that_cannot_say_who_it_is_still_finds_its_comment(tmp_path: Path) -> None:
    """A GitHub App's token gets 403 for ``GET /user``: the marker and digest decide alone."""
    with FakeGitHub() as github:
        github.state.login = None
        github.add_issue("acme/app", 9)
        github.after_write(r"/repos/acme/app/issues/9/comments", "5xx")
        ledger, run_id = completed(tmp_path, [ISSUE_COMMENT], "hello")
        ctx = github_publishing(github.url)
        [step] = publish_run(ledger, run_id, ctx)
        assert len(github.comments("acme/app", 9)) == 1
    assert (step.state, step.attempts) == ("published", 1)


def test_a_plugin_publishers_unexpected_errors_are_outcomes() -> None:
    """Each of a plugin publisher's methods: an outcome it raises passes as it is; any other
    exception becomes the outcome that method's failure means, saying what it was."""
    from hz.runtime.publish.engine import _Guarded
    from hz.runtime.publish.targets.base import CannotTell, Refused, Unobserved

    class Broken:
        def __getattr__(self, name: str) -> Any:
            def method(*args: object) -> None:
                raise ValueError(f"{name} broke")

            return method

    class Refusing:
        def __getattr__(self, name: str) -> Any:
            def method(*args: object) -> None:
                raise Refused(f"{name} said no")

            return method

    guarded = _Guarded(Broken(), "fakechat")  # type: ignore[arg-type]
    step: Any = None
    calls: list[tuple[Any, type[Exception], str]] = [
        (lambda: guarded.credential(step), Refused, "credential"),
        (lambda: guarded.check(step), Refused, "check"),
        (lambda: guarded.where(step), Refused, "where"),
        (lambda: guarded.write(step, None), Unobserved, "write"),  # type: ignore[arg-type]
        (lambda: guarded.lookup(step), CannotTell, "lookup"),
    ]
    for call, outcome, name in calls:
        with pytest.raises(outcome) as caught:
            call()
        assert type(caught.value) is outcome
        assert str(caught.value) == f"provider 'fakechat' failed: ValueError: {name} broke"
    refusing = _Guarded(Refusing(), "fakechat")  # type: ignore[arg-type]
    with pytest.raises(Refused) as refused:
        refusing.write(step, None)  # type: ignore[arg-type]
    assert str(refused.value) == "write said no"
