"""The github provider against the fake GitHub (tests/fakes/github_server.py): every operation
with its exact value, pagination followed and capped, and every failure with its message."""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from hz.runtime.artifacts.distribution import extra_command
from hz.runtime.artifacts.errors import ConfigError
from hz.runtime.artifacts.operations import CATALOG, Window
from hz.runtime.providers.github import GitHubProvider
from hz.runtime.providers.github.client import ResponseCache
from hz.runtime.providers.github.settings import GitHubSettings
from hz.runtime.providers.protocol import FetchRequest, ProviderError, Readiness
from tests.fakes.github_server import (
    NOW,
    FakeGitHub,
    Fault,
    error,
    header_trickle,
    huge,
    malformed,
    rate_limited,
    redirect,
    retry_after,
    slow,
    trickle,
)
from tests.helpers.clock import FakeClock
from tests.helpers.end_to_end import no_proxy

TOKEN = "ghp_PlantedGitHubToken0123456789abcdefXYZ"
WEEK = Window(NOW - timedelta(days=7), NOW)
HOUR = timedelta(hours=1)


@pytest.fixture(autouse=True)
def _environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GITHUB_TOKEN", TOKEN)
    no_proxy(monkeypatch)


@pytest.fixture
def github() -> Iterator[FakeGitHub]:
    with FakeGitHub() as server:
        yield server


def provider(github: FakeGitHub, **settings: Any) -> GitHubProvider:
    table = {"api_url": github.url, "repositories": ["acme/*"], **settings}
    return GitHubProvider(GitHubSettings.from_table(table))


def fetch(
    target: GitHubProvider | FakeGitHub,
    operation: str,
    window: Window | None = None,
    *,
    clock: FakeClock | None = None,
    deadline: float = 600.0,
    max_bytes: int = 4 * 1024 * 1024,
    **args: Any,
) -> Any:
    if isinstance(target, FakeGitHub):
        target = provider(target)
    clock = clock or FakeClock()
    request = FetchRequest(
        CATALOG[operation],
        args,
        window,
        Path.cwd(),
        deadline=clock.monotonic() + deadline,
        max_bytes=max_bytes,
        clock=clock.monotonic,
        sleep=clock.sleep,
    )
    return target.fetch(request)


def failure(target: GitHubProvider | FakeGitHub, operation: str, **kwargs: Any) -> ProviderError:
    with pytest.raises(ProviderError) as caught:
        fetch(target, operation, **kwargs)
    assert TOKEN not in f"{caught.value.message} {caught.value.hint}"
    return caught.value


def _merged_history(github: FakeGitHub, count: int = 250) -> None:
    """Pull request 1000 - i merged i hours before NOW: 168 of them in the last week."""
    for i in range(count):
        moment = (NOW - i * HOUR).strftime("%Y-%m-%dT%H:%M:%SZ")
        github.add_pull("acme/app", 1000 - i, merged_at=moment, labels=("feature",))


def _list_pages(github: FakeGitHub, path: str) -> list[str | None]:
    return [seen.query.get("page") for seen in github.seen if seen.path == path]


# -- the operations -----------------------------------------------------------------------------


def test_merged_pull_requests_in_the_window_stop_paging_before_it(github: FakeGitHub) -> None:
    _merged_history(github)
    github.add_pull("acme/app", 5, state="closed", updated_at="2026-03-08T00:00:00Z")  # unmerged
    github.add_pull("acme/app", 6, state="open", updated_at="2026-03-08T00:00:00Z")

    value = fetch(github, "code-host.merged_pull_requests", WEEK, repository="acme/app")

    assert [record["number"] for record in value] == list(range(999, 831, -1))
    assert value[0] == {
        "number": 999,
        "title": "Pull request 999",
        "url": "https://github.com/acme/app/pull/999",
        "author": "octocat",
        "merged_at": "2026-03-09T11:00:00Z",
        "body": "",
        "labels": ["feature"],
    }
    # Page 2 ends before the window's start: page 3 is never asked for.
    assert _list_pages(github, "/repos/acme/app/pulls") == [None, "2"]
    first = github.seen[0]
    assert first.query == {
        "state": "closed",
        "sort": "updated",
        "direction": "desc",
        "per_page": "100",
    }
    assert first.headers["accept"] == "application/vnd.github+json"
    assert first.headers["x-github-api-version"] == "2022-11-28"
    assert first.headers["user-agent"].startswith("hz/")
    assert first.headers["authorization"] == f"Bearer {TOKEN}"


def test_merged_pull_requests_pass_the_base_on(github: FakeGitHub) -> None:
    github.add_pull("acme/app", 1, merged_at="2026-03-08T00:00:00Z", base="main")
    github.add_pull("acme/app", 2, merged_at="2026-03-08T01:00:00Z", base="release")

    value = fetch(
        github, "code-host.merged_pull_requests", WEEK, repository="acme/app", base="main"
    )

    assert [record["number"] for record in value] == [1]
    assert github.seen[0].query["base"] == "main"


def test_merged_pull_requests_past_max_pages_fail(github: FakeGitHub) -> None:
    _merged_history(github)

    e = failure(
        provider(github, max_pages=1),
        "code-host.merged_pull_requests",
        window=WEEK,
        repository="acme/app",
    )

    assert e.code == "HZ725"
    assert e.message == (
        "the merged pull requests of acme/app take more than 1 pages of 100 "
        "([providers.github] max_pages)"
    )
    assert e.hint == "narrow the window or the arguments, or raise max_pages"


def test_pull_request_with_its_files_and_diff(github: FakeGitHub) -> None:
    files = tuple(
        {"filename": f"src/f{i:03}.py", "additions": i, "deletions": 1} for i in range(150)
    )
    diff = "diff --git a/src/f000.py b/src/f000.py\n-old\n+new ✓\n"
    github.add_pull(
        "acme/app",
        42,
        title="Add the thing",
        merged_at="2026-03-02T10:00:00Z",
        body="Fixes #7",
        labels=("bug", "ui"),
        files=files,
        diff=diff,
    )

    value = fetch(github, "code-host.pull_request", repository="acme/app", number=42)

    assert {key: value[key] for key in value if key != "files"} == {
        "number": 42,
        "title": "Add the thing",
        "url": "https://github.com/acme/app/pull/42",
        "author": "octocat",
        "merged_at": "2026-03-02T10:00:00Z",
        "body": "Fixes #7",
        "labels": ["bug", "ui"],
        "state": "closed",
        "diff": diff,
        "truncated": False,
    }
    assert len(value["files"]) == 150
    assert value["files"][149] == {
        "path": "src/f149.py",
        "status": "modified",
        "additions": 149,
        "deletions": 1,
    }
    assert _list_pages(github, "/repos/acme/app/pulls/42/files") == [None, "2"]
    diff_request = [s for s in github.seen if s.path == "/repos/acme/app/pulls/42"][1]
    assert diff_request.headers["accept"] == "application/vnd.github.diff"


def _json_size(value: Any) -> int:
    """How the fetch counts an answer: its compact canonical JSON, as UTF-8."""
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return len(text.encode())


def test_pull_request_diff_is_read_up_to_the_budget_left(github: FakeGitHub) -> None:
    diff = "é ✓ text\n" * 5_000
    pull = github.add_pull("acme/app", 42, merged_at="2026-03-02T10:00:00Z", diff=diff)

    value = fetch(
        github, "code-host.pull_request", max_bytes=8000, repository="acme/app", number=42
    )

    left = 8000 - len(json.dumps(pull).encode()) - len(b"[]")  # the pull request, its files
    assert value["truncated"] is True
    # A cut through a character drops it rather than replacing it.
    assert value["diff"] == diff.encode()[:left].decode(errors="ignore")
    assert _json_size(value) <= 8000


@pytest.mark.parametrize("line", ["\n", "x\n", "\x1b[31m\n"])
def test_pull_request_diff_is_cut_so_the_value_fits_the_cap_as_json(
    github: FakeGitHub, line: str
) -> None:
    # A line break takes two bytes in the JSON, ESC six: the diff as read is cut further so
    # that the whole value fits, and no further than that.
    diff = line * 5_000
    github.add_pull("acme/app", 42, merged_at="2026-03-02T10:00:00Z", diff=diff)

    value = fetch(
        github, "code-host.pull_request", max_bytes=8000, repository="acme/app", number=42
    )

    assert value["truncated"] is True
    assert diff.startswith(value["diff"])
    assert 8000 - 6 < _json_size(value) <= 8000


def test_pull_request_diff_that_fits_is_whole(github: FakeGitHub) -> None:
    diff = "é ✓ text\n" * 100
    github.add_pull("acme/app", 42, merged_at="2026-03-02T10:00:00Z", diff=diff)

    value = fetch(
        github, "code-host.pull_request", max_bytes=8000, repository="acme/app", number=42
    )

    assert (value["diff"], value["truncated"]) == (diff, False)


def test_pull_request_diff_github_will_not_show_is_empty_and_truncated(
    github: FakeGitHub,
) -> None:
    github.add_pull("acme/app", 42, merged_at="2026-03-02T10:00:00Z", diff="x")
    github.fail(
        "/repos/acme/app/pulls/42",
        error(406, "Sorry, the diff exceeded the maximum number of lines (20000)"),
        accept="application/vnd.github.diff",
    )

    value = fetch(github, "code-host.pull_request", repository="acme/app", number=42)

    assert (value["diff"], value["truncated"]) == ("", True)


def test_issues_updated_in_the_window_without_pull_requests(github: FakeGitHub) -> None:
    github.add_issue(
        "acme/app",
        7,
        title="Crash on start",
        updated_at="2026-03-08T09:30:00Z",
        labels=("bug",),
        body="It crashes.",
    )
    github.add_issue("acme/app", 8, updated_at="2026-03-07T09:30:00Z", state="closed", author=None)
    github.add_issue("acme/app", 9, updated_at="2026-03-08T10:00:00Z", pull_request=True)
    github.add_issue("acme/app", 10, updated_at="2026-03-09T12:00:00Z")  # at the window's end
    github.add_issue("acme/app", 11, updated_at="2026-03-01T12:00:00Z")  # before it

    value = fetch(github, "tracker.issues_updated", WEEK, repository="acme/app")

    assert value == [
        {
            "number": 7,
            "title": "Crash on start",
            "url": "https://github.com/acme/app/issues/7",
            "author": "octocat",
            "state": "open",
            "updated_at": "2026-03-08T09:30:00Z",
            "body": "It crashes.",
            "labels": ["bug"],
        },
        {
            "number": 8,
            "title": "Issue 8",
            "url": "https://github.com/acme/app/issues/8",
            "author": None,
            "state": "closed",
            "updated_at": "2026-03-07T09:30:00Z",
            "body": "",
            "labels": [],
        },
    ]
    assert github.seen[0].query == {
        "state": "all",
        "sort": "updated",
        "direction": "desc",
        "since": "2026-03-02T12:00:00Z",
        "per_page": "100",
    }


def test_issues_updated_pass_state_and_labels_on(github: FakeGitHub) -> None:
    github.add_issue("acme/app", 1, labels=("bug", "ui"))
    github.add_issue("acme/app", 2, labels=("bug",))
    github.add_issue("acme/app", 3, labels=("bug", "ui"), state="closed")

    value = fetch(
        github,
        "tracker.issues_updated",
        WEEK,
        repository="acme/app",
        state="open",
        labels=["bug", "ui"],
    )

    assert [record["number"] for record in value] == [1]
    assert github.seen[0].query["labels"] == "bug,ui"


def test_issue_with_its_comments_over_two_pages(github: FakeGitHub) -> None:
    comments = tuple(
        ("hubot" if i % 2 else None, f"2026-03-0{1 + i // 100}T10:{i % 60:02}:00Z", f"comment {i}")
        for i in range(120)
    )
    github.add_issue("acme/app", 7, title="Crash", body=None, comments=comments)

    value = fetch(github, "tracker.issue", repository="acme/app", number=7)

    assert {key: value[key] for key in value if key != "comments"} == {
        "number": 7,
        "title": "Crash",
        "url": "https://github.com/acme/app/issues/7",
        "author": "octocat",
        "state": "open",
        "updated_at": "2026-03-05T10:00:00Z",
        "body": None,
        "labels": [],
    }
    assert len(value["comments"]) == 120
    assert value["comments"][0] == {
        "author": None,
        "created_at": "2026-03-01T10:00:00Z",
        "body": "comment 0",
    }
    assert value["comments"][119] == {
        "author": "hubot",
        "created_at": "2026-03-02T10:59:00Z",
        "body": "comment 119",
    }
    assert _list_pages(github, "/repos/acme/app/issues/7/comments") == [None, "2"]


def test_a_repeated_read_is_a_conditional_request(github: FakeGitHub) -> None:
    github.add_issue("acme/app", 7, comments=((None, "2026-03-01T10:00:00Z", "hi"),))
    shared = provider(github)

    first = fetch(shared, "tracker.issue", repository="acme/app", number=7)
    second = fetch(shared, "tracker.issue", repository="acme/app", number=7)

    assert second == first
    issue_requests = [s for s in github.seen if s.path == "/repos/acme/app/issues/7"]
    assert "if-none-match" not in issue_requests[0].headers
    assert issue_requests[1].headers["if-none-match"].startswith('"')


# -- rate limits ----------------------------------------------------------------------------------


def test_a_primary_rate_limit_within_the_ceiling_is_waited(github: FakeGitHub) -> None:
    github.add_issue("acme/app", 7)
    github.fail("/repos/acme/app/issues/7", rate_limited(reset_in=30), times=1)
    clock = FakeClock()

    value = fetch(github, "tracker.issue", clock=clock, repository="acme/app", number=7)

    assert value["number"] == 7
    assert clock.slept == [30.0]


def test_a_secondary_rate_limit_waits_its_retry_after(github: FakeGitHub) -> None:
    github.add_issue("acme/app", 7)
    github.fail("/repos/acme/app/issues/7", retry_after(20), times=1)
    github.fail("/repos/acme/app/issues/7/comments", retry_after(25, status=403), times=1)
    clock = FakeClock()

    fetch(github, "tracker.issue", clock=clock, repository="acme/app", number=7)

    assert clock.slept == [20.0, 25.0]


def test_a_rate_limit_past_the_ceiling_fails_saying_when_it_resets(github: FakeGitHub) -> None:
    github.fail("/repos/acme/app/issues/7", rate_limited(reset_in=90))
    clock = FakeClock()

    e = failure(github, "tracker.issue", clock=clock, repository="acme/app", number=7)

    assert e.code == "HZ723"
    assert e.message == (
        "GitHub's rate limit stopped issue 7 of acme/app (GET /repos/acme/app/issues/7) until "
        "2026-03-09T12:01:30Z (90 s): longer than [providers.github] max_wait_seconds allows "
        "(60 s)"
    )
    assert e.hint == (
        "run it again after that time, or raise max_wait_seconds (and the fetch's timeout) to "
        "wait for it"
    )
    assert clock.slept == []


def test_rate_limit_waits_add_up_against_the_ceiling(github: FakeGitHub) -> None:
    github.fail("/repos/acme/app/issues/7", retry_after(40))
    clock = FakeClock()

    e = failure(github, "tracker.issue", clock=clock, repository="acme/app", number=7)

    assert e.message == (
        "GitHub's rate limit stopped issue 7 of acme/app (GET /repos/acme/app/issues/7) until "
        "2026-03-09T12:00:40Z (40 s): longer than [providers.github] max_wait_seconds allows "
        "(60 s, after 40 s waited already)"
    )
    assert clock.slept == [40.0]


def test_a_rate_limit_past_the_deadline_fails(github: FakeGitHub) -> None:
    github.fail("/repos/acme/app/issues/7", rate_limited(reset_in=30, status=429))

    e = failure(github, "tracker.issue", deadline=10.0, repository="acme/app", number=7)

    assert e.code == "HZ723"
    assert e.message == (
        "GitHub's rate limit stopped issue 7 of acme/app (GET /repos/acme/app/issues/7) until "
        "2026-03-09T12:00:30Z (30 s): past the fetch's deadline (10 s left)"
    )


def test_a_rate_limit_is_never_waited_with_max_wait_zero(github: FakeGitHub) -> None:
    github.fail("/repos/acme/app/issues/7", retry_after(1))

    e = failure(
        provider(github, max_wait_seconds=0), "tracker.issue", repository="acme/app", number=7
    )

    assert e.code == "HZ723"
    assert e.message.endswith("longer than [providers.github] max_wait_seconds allows (0 s)")


# -- failures -------------------------------------------------------------------------------------


def test_not_found_names_the_repository_and_number(github: FakeGitHub) -> None:
    github.add_pull("acme/app", 1, merged_at="2026-03-02T10:00:00Z")

    e = failure(github, "code-host.pull_request", repository="acme/app", number=404)

    assert e.code == "HZ722"
    assert e.message == (
        "GitHub answered 404 Not Found for pull request 404 of acme/app "
        "(GET /repos/acme/app/pulls/404): Not Found"
    )
    assert e.hint == (
        "check the repository and the number; GitHub also answers 404 for a private repository "
        "the token cannot read"
    )


def test_a_refused_token_is_not_shown(github: FakeGitHub) -> None:
    github.fail(".*", error(401, f"Bad credentials: {TOKEN}"))

    e = failure(github, "tracker.issue", repository="acme/app", number=7)

    assert e.code == "HZ721"
    assert e.message == (
        "GitHub refused the token in GITHUB_TOKEN ([providers.github] token_env): "
        "401 Bad credentials: [token]"
    )
    assert e.hint == "check that the token is valid, not expired and not revoked"


def test_forbidden_says_what_the_token_may_lack(github: FakeGitHub) -> None:
    github.fail(".*", error(403, "Resource not accessible by personal access token"))

    e = failure(github, "tracker.issue", repository="acme/app", number=7)

    assert (e.code, e.message, e.hint) == (
        "HZ722",
        "GitHub answered 403 Forbidden for issue 7 of acme/app (GET /repos/acme/app/issues/7): "
        "Resource not accessible by personal access token",
        "the token may lack read access to the repository (docs/providers-github.md)",
    )


def test_malformed_json_is_refused(github: FakeGitHub) -> None:
    github.fail("/repos/acme/app/issues", malformed())

    e = failure(github, "tracker.issues_updated", window=WEEK, repository="acme/app")

    assert e.code == "HZ724"
    assert e.message == (
        "GitHub's answer for the issues of acme/app (GET /repos/acme/app/issues) is not JSON: "
        "Expecting value: line 1 column 25 (char 24)"
    )


def test_an_answer_of_another_shape_names_the_field(github: FakeGitHub) -> None:
    github.fail("/repos/acme/app/issues", malformed(b'[{"number": 7, "updated_at": 5}]'))

    e = failure(github, "tracker.issues_updated", window=WEEK, repository="acme/app")

    assert e.code == "HZ724"
    assert e.message == (
        "GitHub's answer for the issues of acme/app is not what its API documents: "
        "page 1 item 0.updated_at is not a string or null"
    )


def test_an_object_where_a_list_belongs_is_refused(github: FakeGitHub) -> None:
    github.fail("/repos/acme/app/pulls", malformed(b'{"message": "hello"}'))

    e = failure(github, "code-host.merged_pull_requests", window=WEEK, repository="acme/app")

    assert (e.code, e.message) == (
        "HZ724",
        "GitHub's answer for the merged pull requests of acme/app (GET /repos/acme/app/pulls) "
        "is not a list (got an object)",
    )


def test_a_huge_page_is_cut_at_the_cap(github: FakeGitHub) -> None:
    github.fail("/repos/acme/app/issues", huge(1024**3))

    e = failure(
        provider(github, max_bytes=1024 * 1024),
        "tracker.issues_updated",
        window=WEEK,
        repository="acme/app",
    )

    assert e.code == "HZ725"
    assert e.message == (
        "GitHub's answers for the issues of acme/app (GET /repos/acme/app/issues) are larger "
        "than the 1048576-byte cap of one fetch ([providers.github] max_bytes)"
    )


def test_the_fetch_cap_counts_every_page(github: FakeGitHub) -> None:
    _merged_history(github)

    e = failure(
        github,
        "code-host.merged_pull_requests",
        window=WEEK,
        max_bytes=150_000,
        repository="acme/app",
    )

    assert e.code == "HZ725"
    assert "(GET /repos/acme/app/pulls, page 2)" in e.message


def test_a_server_that_does_not_answer_is_stopped_at_the_timeout(github: FakeGitHub) -> None:
    github.fail("/repos/acme/app/issues/7", slow(30))

    e = failure(
        provider(github, timeout_seconds=0.2), "tracker.issue", repository="acme/app", number=7
    )

    assert e.code == "HZ726"
    assert e.message == (
        "GitHub did not answer issue 7 of acme/app (GET /repos/acme/app/issues/7) in time (the "
        "fetch's deadline, or 0.2 s without a byte: [providers.github] timeout_seconds)"
    )


def test_a_trickling_answer_is_stopped_at_the_deadline(github: FakeGitHub) -> None:
    github.fail("/repos/acme/app/issues/7", trickle(b'{"number": 7}' * 100, every=0.02))
    provider_ = provider(github)

    request = FetchRequest(
        CATALOG["tracker.issue"],
        {"repository": "acme/app", "number": 7},
        None,
        Path.cwd(),
        deadline=time.monotonic() + 0.3,
    )
    started = time.monotonic()
    with pytest.raises(ProviderError) as caught:
        provider_.fetch(request)

    assert caught.value.code == "HZ726"
    assert time.monotonic() - started < 2.0


def test_a_redirect_to_another_host_is_not_followed(github: FakeGitHub) -> None:
    with FakeGitHub(host="localhost") as elsewhere:
        elsewhere.add_issue("acme/app", 7)
        github.fail(
            "/repos/acme/app/issues/7", redirect(f"{elsewhere.url}/repos/acme/app/issues/7")
        )

        e = failure(github, "tracker.issue", repository="acme/app", number=7)

        assert e.code == "HZ722"
        assert e.message == (
            "GitHub redirected issue 7 of acme/app (GET /repos/acme/app/issues/7) to another "
            f"host ({elsewhere.url.removeprefix('http://')}); hz sends the token only to "
            "[providers.github] api_url and did not follow"
        )
        assert elsewhere.seen == []


def test_a_redirect_within_the_api_is_followed_with_the_token(github: FakeGitHub) -> None:
    github.add_issue("acme/renamed", 7)
    github.fail("/repos/acme/app/issues/7", redirect("/repos/acme/renamed/issues/7", 301))
    github.fail(
        "/repos/acme/app/issues/7/comments",
        redirect("/repos/acme/renamed/issues/7/comments?per_page=100", 301),
    )

    value = fetch(github, "tracker.issue", repository="acme/app", number=7)

    assert value["url"] == "https://github.com/acme/renamed/issues/7"
    assert [s.headers["authorization"] for s in github.seen[:2]] == [f"Bearer {TOKEN}"] * 2


def test_a_next_page_on_another_host_is_refused(github: FakeGitHub) -> None:
    with FakeGitHub(host="localhost") as elsewhere:
        for number in range(1, 151):
            github.add_issue("acme/app", number)
        github.state.origin = elsewhere.url  # the Link header now points there

        e = failure(github, "tracker.issues_updated", window=WEEK, repository="acme/app")

        assert e.code == "HZ724"
        assert e.message == (
            "GitHub's next page of the issues of acme/app (GET /repos/acme/app/issues) is on "
            f"another host ({elsewhere.url.removeprefix('http://')}): hz sends the token only "
            "to [providers.github] api_url"
        )
        assert elsewhere.seen == []


def test_a_repository_outside_the_allowed_ones_is_refused(github: FakeGitHub) -> None:
    e = failure(github, "tracker.issue", repository="evil/secrets", number=1)

    assert e.code == "HZ727"
    assert e.message == "repository 'evil/secrets' is not in [providers.github] repositories"
    assert github.seen == []


def test_a_missing_token_is_named_by_its_variable(
    github: FakeGitHub, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("GITHUB_TOKEN")

    e = failure(github, "tracker.issue", repository="acme/app", number=1)

    assert e.code == "HZ721"
    assert e.message == (
        "the environment variable GITHUB_TOKEN ([providers.github] token_env) holds no GitHub token"
    )
    assert github.seen == []


def test_a_token_with_a_line_break_is_refused_unshown(
    github: FakeGitHub, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GITHUB_TOKEN", f"{TOKEN}\n")

    e = failure(github, "tracker.issue", repository="acme/app", number=1)

    assert (e.code, e.message, e.hint) == (
        "HZ721",
        "the token in GITHUB_TOKEN ([providers.github] token_env) has blanks, control "
        "characters or characters that are not ASCII around or in it (it is not shown)",
        "export it without a trailing newline",
    )
    assert github.seen == []


@pytest.mark.parametrize("planted", ["\x0cSECRETPART", "\x0bSECRETPART", "S\u00c9CRETPART", "A B"])
def test_a_token_a_header_cannot_carry_is_refused_unshown(
    github: FakeGitHub, monkeypatch: pytest.MonkeyPatch, planted: str
) -> None:
    # h11 refused a form feed with the header's repr in its message: the token, escaped.
    monkeypatch.setenv("GITHUB_TOKEN", f"ghp_LEAKME{planted}")
    shared = provider(github)

    e = failure(shared, "tracker.issue", repository="acme/app", number=1)

    assert (e.code, e.message) == (
        "HZ721",
        "the token in GITHUB_TOKEN ([providers.github] token_env) has blanks, control "
        "characters or characters that are not ASCII around or in it (it is not shown)",
    )
    readiness = shared.ready(online=True)
    assert readiness.ok is False
    assert "LEAKME" not in readiness.detail
    assert github.seen == []


def test_a_message_never_shows_the_token_in_an_escaped_form(github: FakeGitHub) -> None:
    from hz.runtime.providers.github.client import Session

    token = "ghp_back\\slash\"quote'it"
    request = FetchRequest(CATALOG["tracker.issue"], {}, None, Path.cwd(), deadline=0.0)
    with Session(provider(github).settings, token, request, ResponseCache()) as session:
        shown = [
            session.outside(f"Illegal header value {said}")
            for said in (token, repr(token), repr(token.encode()), json.dumps(token))
        ]
    assert shown == [
        "Illegal header value [token]",
        "Illegal header value '[token]'",
        "Illegal header value b'[token]'",
        'Illegal header value "[token]"',
    ]


def test_the_response_cache_is_bounded() -> None:
    cache = ResponseCache(max_entries=2, max_bytes=10)
    cache.put(("a", "json"), '"1"', b"12345")
    cache.put(("b", "json"), '"2"', b"12345")
    cache.put(("b", "json"), '"3"', b"1234")
    cache.put(("c", "json"), '"4"', b"123")  # 3 entries: the oldest goes
    cache.put(("d", "json"), '"5"', b"x" * 11)  # larger than the cache: never kept

    assert [cache.get((key, "json")) for key in "abcd"] == [
        None,
        ('"3"', b"1234"),
        ('"4"', b"123"),
        None,
    ]
    cache.put(("e", "json"), '"6"', b"1234567")  # 14 bytes: b, the least recently used, goes
    assert [cache.get((key, "json")) for key in "bce"] == [
        None,
        ('"4"', b"123"),
        ('"6"', b"1234567"),
    ]


def test_without_httpx_the_provider_names_the_install_command(
    github: FakeGitHub, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "httpx", None)
    shared = provider(github)

    e = failure(shared, "tracker.issue", repository="acme/app", number=1)

    assert e.code == "HZ721"
    assert e.message == "the github provider needs httpx, which is not installed"
    assert e.hint == f"install the extra into hz's environment: {extra_command('github')}"
    assert shared.ready() == Readiness(False, f"{e.message}: {e.hint}")


def test_an_unreachable_api_is_named(github: FakeGitHub) -> None:
    with FakeGitHub() as gone:
        url = gone.url
    e = failure(provider(github, api_url=url), "tracker.issue", repository="acme/app", number=7)

    assert e.code == "HZ722"
    assert e.message == (
        "GitHub could not be reached for issue 7 of acme/app (GET /repos/acme/app/issues/7): "
        "ConnectError: [Errno 111] Connection refused"
    )


def test_an_error_that_is_not_json_shows_the_status(github: FakeGitHub) -> None:
    github.fail(".*", Fault(502, (), b"<html>"))

    e = failure(github, "tracker.issue", repository="acme/app", number=7)

    assert e.message == (
        "GitHub answered 502 Bad Gateway for issue 7 of acme/app (GET /repos/acme/app/issues/7): "
        "Bad Gateway"
    )


def test_a_secondary_rate_limit_without_retry_after_waits_a_minute(github: FakeGitHub) -> None:
    github.add_issue("acme/app", 7)
    github.fail(
        "/repos/acme/app/issues/7", error(403, "You have exceeded a secondary rate limit"), times=1
    )
    clock = FakeClock()

    fetch(
        provider(github, max_wait_seconds=60),
        "tracker.issue",
        clock=clock,
        repository="acme/app",
        number=7,
    )

    assert clock.slept == [60.0]


def test_an_encoded_answer_is_refused(github: FakeGitHub) -> None:
    github.fail(".*", Fault(200, (("Content-Encoding", "gzip"),), b"x"))

    e = failure(github, "tracker.issue", repository="acme/app", number=7)

    assert (e.code, e.message) == (
        "HZ724",
        "GitHub's answer for issue 7 of acme/app (GET /repos/acme/app/issues/7) is encoded "
        "(gzip) though hz asked for none",
    )


def test_a_redirect_loop_ends(github: FakeGitHub) -> None:
    github.fail("/repos/acme/app/issues/7", redirect("/repos/acme/app/issues/7", 307))

    e = failure(github, "tracker.issue", repository="acme/app", number=7)

    assert (e.code, e.message) == (
        "HZ722",
        "GitHub redirected issue 7 of acme/app (GET /repos/acme/app/issues/7) more than 5 times",
    )


def test_a_fetch_past_its_deadline_sends_nothing(github: FakeGitHub) -> None:
    e = failure(github, "tracker.issue", deadline=0.0, repository="acme/app", number=7)

    assert e.code == "HZ726"
    assert github.seen == []


def test_enterprise_server_under_a_path() -> None:
    with FakeGitHub(prefix="/api/v3") as enterprise:
        for number in range(1, 131):
            enterprise.add_issue("acme/app", number, updated_at="2026-03-08T09:30:00Z")
        enterprise.fail("/repos/acme/app/issues/7", error(404, "Not Found"))

        value = fetch(enterprise, "tracker.issues_updated", WEEK, repository="acme/app")
        e = failure(enterprise, "tracker.issue", repository="acme/app", number=7)

        assert len(value) == 130
        assert [s.path for s in enterprise.seen][:2] == ["/repos/acme/app/issues"] * 2
        assert e.message == (
            "GitHub answered 404 Not Found for issue 7 of acme/app "
            "(GET /repos/acme/app/issues/7): Not Found"
        )


# -- readiness and settings -----------------------------------------------------------------------


def test_ready_offline_and_online(github: FakeGitHub, monkeypatch: pytest.MonkeyPatch) -> None:
    shared = provider(github)
    detail = f"token in GITHUB_TOKEN, API {github.url}, repositories acme/*"

    assert shared.ready() == Readiness(True, detail)
    assert shared.ready(online=True) == Readiness(
        True, f"{detail}; reachable, 4990 of 5000 requests left"
    )
    assert [s.path for s in github.seen] == ["/rate_limit"]
    monkeypatch.delenv("GITHUB_TOKEN")
    assert shared.ready() == Readiness(
        False,
        "the environment variable GITHUB_TOKEN ([providers.github] token_env) holds no GitHub "
        "token: export a token that can read the repositories in GITHUB_TOKEN, or name another "
        "variable in token_env (docs/providers-github.md lists the permissions)",
    )


def test_ready_without_repositories_says_none_may_be_read(github: FakeGitHub) -> None:
    assert provider(github, repositories=[]).ready() == Readiness(
        False, "no repository may be read: [providers.github] repositories is empty"
    )


def test_ready_online_with_a_bad_token(github: FakeGitHub) -> None:
    github.fail("/rate_limit", error(401, "Bad credentials"))

    assert provider(github).ready(online=True) == Readiness(
        False,
        "GitHub refused the token in GITHUB_TOKEN ([providers.github] token_env): 401 Bad "
        "credentials",
    )


@pytest.mark.parametrize(
    ("table", "message"),
    [
        (
            {"token_env": TOKEN},
            "[providers.github] token_env looks like a token, not the name of a variable (the "
            "value is not shown)",
        ),
        (
            {"token_env": "0123456789abcdef0123456789abcdef01234567"},
            "[providers.github] token_env looks like a token, not the name of a variable (the "
            "value is not shown)",
        ),
        (
            {"token_env": "MY TOKEN"},
            "[providers.github] token_env must be the name of an environment variable (letters, "
            "digits and _, not starting with a digit; the value is not shown)",
        ),
        (
            {"api_url": "http://api.github.com"},
            "[providers.github] api_url must be an https:// URL, got 'http://api.github.com'",
        ),
        (
            {"api_url": "https://user:pw@ghe.example/api/v3"},
            "[providers.github] api_url must be a scheme, a host and a path only, got "
            "'https://user:pw@ghe.example/api/v3'",
        ),
        (
            {"repositories": ["acme"]},
            "[providers.github] repositories: 'acme' is not an owner/name glob",
        ),
        (
            {"max_wait_seconds": -1},
            "[providers.github] max_wait_seconds must be a number of seconds from 0 to 86400, "
            "got -1",
        ),
        (
            {"timeout_seconds": 0},
            "[providers.github] timeout_seconds must be a number of seconds from a number "
            "greater than 0 to 86400, got 0",
        ),
    ],
)
def test_settings_refused(table: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        GitHubSettings.from_table(table)
    assert caught.value.message == message
    assert TOKEN not in f"{caught.value.message} {caught.value.hint}"


def test_settings_defaults_and_loopback() -> None:
    settings = GitHubSettings.from_table({"api_url": "http://localhost:8080/api/v3/"})

    assert settings.api_url == "http://localhost:8080/api/v3"
    assert GitHubSettings.defaults() == {
        "token_env": "GITHUB_TOKEN",
        "api_url": "https://api.github.com",
        "repositories": [],
        "timeout_seconds": 60.0,
        "max_bytes": 4 * 1024 * 1024,
        "max_pages": 20,
        "max_wait_seconds": 60.0,
    }
    assert GitHubSettings.from_table({"repositories": ["Acme/*"]}).allows("acme/App")
    assert not GitHubSettings.from_table({"repositories": ["acme/a*"]}).allows("acme/lib")


# -- the token ------------------------------------------------------------------------------------


def test_the_planted_token_never_leaves_for_another_host_nor_in_a_value(
    github: FakeGitHub,
) -> None:
    github.add_issue(
        "acme/app",
        7,
        title=f"leaked {TOKEN}",
        comments=(("hubot", "2026-03-01T10:00:00Z", f"token={TOKEN}"),),
    )
    with FakeGitHub(host="localhost") as elsewhere:
        github.fail(
            "/repos/acme/app/issues/8", redirect(f"{elsewhere.url}/repos/acme/app/issues/8")
        )

        value = fetch(github, "tracker.issue", repository="acme/app", number=7)
        e = failure(github, "tracker.issue", repository="acme/app", number=8)

        assert TOKEN not in repr(value)
        assert value["title"] == "leaked [token]"
        assert value["comments"][0]["body"] == "token=[token]"
        assert TOKEN not in repr((e.message, e.hint))
        assert {s.headers.get("authorization") for s in github.seen} == {f"Bearer {TOKEN}"}
        assert elsewhere.seen == []


def test_the_docs_show_the_settings_and_every_operation() -> None:
    docs = (Path(__file__).parents[2] / "docs" / "providers-github.md").read_text()

    assert GitHubSettings.docs_table() in docs
    for name in GitHubProvider(GitHubSettings()).operations():
        assert f"| `{name}` (" in docs


# -- hostile answers: GitHub's fault, said so ------------------------------------------------


@pytest.mark.parametrize("merged_at", ["9999-12-31T23:59:59-23:59", "0001-01-01T00:00:00+14:00"])
def test_a_time_past_the_calendar_is_github_s_fault(github: FakeGitHub, merged_at: str) -> None:
    github.add_pull("acme/app", 1, merged_at=merged_at, updated_at="2026-03-08T00:00:00Z")

    e = failure(github, "code-host.merged_pull_requests", window=WEEK, repository="acme/app")

    assert (e.code, e.message) == (
        "HZ724",
        "GitHub's answer for the merged pull requests of acme/app is not what its API "
        "documents: page 1 item 0.merged_at is out of the years 1 to 9999 in UTC",
    )


def test_an_early_year_keeps_its_four_digits(github: FakeGitHub) -> None:
    github.add_pull("acme/app", 1, merged_at="0999-01-01T00:00:00Z")

    [pull] = fetch(github, "code-host.merged_pull_requests", repository="acme/app")

    assert pull["merged_at"] == "0999-01-01T00:00:00Z"


def test_a_rate_limit_dated_at_the_end_of_the_calendar_is_waited(github: FakeGitHub) -> None:
    github.add_issue("acme/app", 7)
    github.fail("/repos/acme/app/issues/7", retry_after(5), times=1)
    github.state.now = datetime(9999, 12, 31, 23, 59, 59, tzinfo=UTC)
    clock = FakeClock()

    value = fetch(github, "tracker.issue", clock=clock, repository="acme/app", number=7)

    assert value["number"] == 7
    assert clock.slept == [5.0]


@pytest.mark.parametrize(
    ("link", "why"),
    [("http://[::1", "Invalid port: ':1'"), ("http://127.0.0.1:abc/x", "Invalid port: 'abc'")],
)
def test_a_next_page_that_is_no_url_is_github_s_fault(
    github: FakeGitHub, link: str, why: str
) -> None:
    github.fail("/repos/acme/app/issues", Fault(200, (("Link", f'<{link}>; rel="next"'),), b"[]"))

    e = failure(github, "tracker.issues_updated", window=WEEK, repository="acme/app")

    assert (e.code, e.message) == (
        "HZ724",
        "GitHub's next page of the issues of acme/app (GET /repos/acme/app/issues) is no valid "
        f"URL ({link}): {why}",
    )


@pytest.mark.parametrize("body", [b'{"resources": []}', b'{"resources": {"core": 5}}', b"[]"])
def test_a_rate_limit_of_another_shape_is_not_ready(github: FakeGitHub, body: bytes) -> None:
    github.fail("/rate_limit", Fault(200, (), body))

    assert provider(github).ready(online=True) == Readiness(
        False,
        "GitHub's answer for the rate limit (GET /rate_limit) is not what its API documents: "
        "resources.core is not an object",
    )


@pytest.mark.parametrize("repository", ["acme/..", "acme/.", "../app", "./app"])
def test_a_repository_named_dot_or_dot_dot_is_refused(github: FakeGitHub, repository: str) -> None:
    e = failure(github, "tracker.issue", repository=repository, number=1)

    assert (e.code, e.message, e.hint) == (
        "HZ727",
        f"repository {repository!r} is not a GitHub repository's owner/name",
        "write it as owner/name, e.g. acme/app (neither part . or ..)",
    )
    assert github.seen == []


@pytest.mark.serial
def test_header_lines_trickling_past_the_deadline_are_stopped(github: FakeGitHub) -> None:
    # Each header line arrives within the read timeout: only a deadline for the whole
    # request stops it (h11 would read on to its 16 KiB header limit, minutes later).
    github.fail("/repos/acme/app/issues/7", header_trickle(0.05))
    github.fail("/rate_limit", header_trickle(0.05))
    shared = provider(github, timeout_seconds=0.5)
    request = FetchRequest(
        CATALOG["tracker.issue"],
        {"repository": "acme/app", "number": 7},
        None,
        Path.cwd(),
        deadline=time.monotonic() + 0.5,
    )
    started = time.monotonic()
    with pytest.raises(ProviderError) as caught:
        shared.fetch(request)
    assert caught.value.code == "HZ726"
    assert time.monotonic() - started < 3.0
    # hz providers --online: the same bound (timeout_seconds).
    started = time.monotonic()
    readiness = shared.ready(online=True)
    assert readiness.ok is False
    assert readiness.detail.startswith("GitHub did not answer the rate limit (GET /rate_limit)")
    assert time.monotonic() - started < 3.0
