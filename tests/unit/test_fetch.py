"""Fetching a job's read inputs (``hz.runtime.providers.fetch``): windows at an injected time,
since-last-success from a real ledger, the result-schema check, the size cap, a provider that
hangs, and every failure as a diagnostic naming the input, operation and provider."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from hz.runtime.artifacts.problem import Problem
from hz.runtime.providers.binding import Bindings
from hz.runtime.providers.fetch import FetchContext, Fetched, fetch_inputs
from tests.helpers import providers
from tests.helpers.providers import NAME, job_reading, merged

AT = datetime(2026, 5, 1, 9, 30, 15, 999, tzinfo=UTC)
FETCHED = datetime(2026, 5, 1, 9, 31, 0, tzinfo=UTC)
OP = "code-host.merged_pull_requests"


@pytest.fixture(autouse=True)
def fake_host(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    providers.register(monkeypatch)
    monkeypatch.setenv("FAKEHOST_TOKEN", "planted-secret-7f3a")
    providers.RELEASE.clear()
    yield
    providers.RELEASE.set()  # a hanging fetch's thread ends


def fetch(
    inputs: dict[str, Any],
    tmp_path: Path,
    *,
    settings: dict[str, Any] | None = None,
    last: datetime | None = None,
    given: tuple[str, ...] = (),
) -> Fetched:
    bindings = Bindings({"code-host": NAME, "files": "files"}, {NAME: settings or {}})
    context = FetchContext(
        bindings,
        tmp_path,
        at=AT,
        last_success=lambda job, name: [] if last is None else [("000001", utc(last))],
        where="digest.yaml",
        now=lambda: FETCHED,
    )
    return fetch_inputs(job_reading(inputs), context, given=given)


def utc(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def test_a_relative_window_ends_at_the_given_time(tmp_path: Path) -> None:
    found = fetch({"merged": merged("7d")}, tmp_path)
    assert found.problems == ()
    assert (
        found.values["merged"][0]["title"] == "merged 2026-04-24T09:30:15Z to 2026-05-01T09:30:15Z"
    )
    assert found.sources["merged"].to_json_data() == {
        "provider": NAME,
        "operation": OP,
        "args": {"repository": "acme/app"},
        "window": {
            "spec": "7d",
            "since": "2026-04-24T09:30:15Z",
            "until": "2026-05-01T09:30:15Z",
        },
        "fetched_at": "2026-05-01T09:31:00Z",
        "sha256": found.sources["merged"].sha256,
    }
    from hz.runtime.artifacts.canonical import digest_of

    assert found.sources["merged"].sha256 == digest_of(found.values["merged"])


def test_since_last_success_starts_where_the_last_window_ended(tmp_path: Path) -> None:
    last = datetime(2026, 4, 28, 6, 0, 0, tzinfo=UTC)
    window = (
        fetch({"merged": merged("since-last-success")}, tmp_path, last=last)
        .sources["merged"]
        .window
    )
    assert window is not None
    assert (window.since, window.until, window.fallback) == (
        "2026-04-28T06:00:00Z",
        "2026-05-01T09:30:15Z",
        False,
    )


def test_since_last_success_without_a_run_falls_back_to_seven_days(tmp_path: Path) -> None:
    window = fetch({"merged": merged("since-last-success")}, tmp_path).sources["merged"].window
    assert window is not None
    assert window.to_json_data() == {
        "spec": "since-last-success",
        "since": "2026-04-24T09:30:15Z",
        "until": "2026-05-01T09:30:15Z",
        "fallback": True,
    }


def test_a_last_window_after_the_time_given_is_an_empty_window_said(tmp_path: Path) -> None:
    later = datetime(2026, 5, 1, 9, 30, 40, tzinfo=UTC)  # after --at, before now
    found = fetch({"m": merged("since-last-success")}, tmp_path, last=later)
    window = found.sources["m"].window
    assert window is not None
    assert (window.since, window.until) == ("2026-05-01T09:30:15Z", "2026-05-01T09:30:15Z")
    assert found.warnings == (
        Problem(
            "HZ728",
            "input 'm': the window is empty: the job's last completed run ('000001') fetched "
            "up to 2026-05-01T09:30:40Z, after 2026-05-01T09:30:15Z",
            "digest.yaml",
            severity="warning",
            hint="render at a later time (--at), or give the input's value by hand (--input)",
        ),
    )


def test_an_input_given_by_hand_is_not_fetched(tmp_path: Path) -> None:
    found = fetch({"merged": merged(), "other": merged()}, tmp_path, given=("merged",))
    assert (sorted(found.values), sorted(found.sources)) == (["other"], ["other"])


def problem(message: str, code: str, hint: str | None = None) -> Problem:
    return Problem(code, message, "digest.yaml", hint=hint)


def test_an_answer_off_the_result_schema_is_hz724(tmp_path: Path) -> None:
    found = fetch({"merged": merged()}, tmp_path, settings={"mode": "off-schema"})
    assert found == Fetched(
        {},
        {},
        (
            problem(
                f"input 'merged': {OP} ({NAME}): the answer does not match the operation's "
                "result schema: at /0/number: 'one' is not of type 'integer'",
                "HZ724",
            ),
        ),
    )


def test_an_answer_off_the_inputs_own_schema_is_hz724(tmp_path: Path) -> None:
    found = fetch({"merged": merged(schema={"type": "array", "maxItems": 0})}, tmp_path)
    assert [p.message for p in found.problems] == [
        f"input 'merged': {OP} ({NAME}): the value does not match the input's schema: at /: "
        "[{'number': 1, 'title': 'merged 2026-04-24T09:30:15Z to 2026-05-01T09:30:15Z', "
        "'url': 'https://example.test/acme/app/pu…"
    ]


def test_an_answer_over_the_cap_is_hz725(tmp_path: Path) -> None:
    found = fetch({"merged": merged()}, tmp_path, settings={"mode": "huge", "max_bytes": 1000})
    assert [(p.code, p.message) for p in found.problems] == [
        (
            "HZ725",
            f"input 'merged': {OP} ({NAME}): the answer is 2,000,133 bytes as JSON, more than "
            "the cap of 1,000",
        )
    ]


@pytest.mark.serial
def test_a_provider_that_hangs_is_stopped_at_its_timeout(tmp_path: Path) -> None:
    import time

    started = time.monotonic()
    found = fetch({"merged": merged()}, tmp_path, settings={"mode": "hang", "timeout_seconds": 0.2})
    took = time.monotonic() - started
    assert found.problems == (
        problem(
            f"input 'merged': {OP} ({NAME}): no answer within 0.2 s; the fetch was stopped",
            "HZ726",
            f"the service may be slow or down; raise [providers.{NAME}] timeout_seconds to wait "
            "longer",
        ),
    )
    assert took < 5  # the timeout and its grace, not the 30 s the provider would hang


def test_a_provider_error_names_the_input_operation_and_provider(tmp_path: Path) -> None:
    found = fetch({"merged": merged()}, tmp_path, settings={"mode": "error"})
    assert found.problems == (
        problem(
            f"input 'merged': {OP} ({NAME}): HTTP 404: Not Found (repository acme/app)", "HZ722"
        ),
    )


def test_a_provider_that_crashes_is_a_diagnostic_not_a_traceback(tmp_path: Path) -> None:
    found = fetch({"merged": merged()}, tmp_path, settings={"mode": "crash"})
    assert found.problems == (
        problem(
            f"input 'merged': {OP} ({NAME}): the provider failed: RuntimeError: boom",
            "HZ722",
            f"a bug in the provider '{NAME}': report it to its authors",
        ),
    )


def test_a_missing_credential_is_hz721_and_every_input_is_tried(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("FAKEHOST_TOKEN")
    tracker = {"read": {"operation": "tracker.issues_updated", "args": {"repository": "a/b"}}}
    found = fetch({"merged": merged(), "issues": tracker}, tmp_path)
    assert found.problems == (
        problem(
            "input 'issues': tracker.issues_updated (no provider): capability 'tracker' is not "
            "bound",
            "HZ720",
            'bind it in the operator\'s configuration: [capabilities] tracker = "github" '
            "(hz providers lists the providers)",
        ),
        problem(
            f"input 'merged': {OP} ({NAME}): the environment variable FAKEHOST_TOKEN is not set",
            "HZ721",
            "export FAKEHOST_TOKEN=…",
        ),
    )


def test_settings_a_provider_does_not_take_are_hz721(tmp_path: Path) -> None:
    found = fetch({"merged": merged()}, tmp_path, settings={"timeout_seconds": "soon"})
    assert [(p.code, p.message) for p in found.problems] == [
        (
            "HZ721",
            f"input 'merged': {OP} ({NAME}): [providers.{NAME}] timeout_seconds: Input should "
            "be a valid number, unable to parse string as a number",
        )
    ]


@pytest.mark.serial
def test_fetches_left_running_past_their_deadline_are_bounded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A provider that ignores its deadline leaves a thread behind per fetch: in a worker that
    # fetches for run after run, they would pile up. Past MAX_ABANDONED, no more is started.
    from hz.runtime.providers import fetch as fetching

    monkeypatch.setattr(fetching, "MAX_ABANDONED", 2)
    monkeypatch.setattr(fetching, "_abandoned", {})
    hang = {"mode": "hang", "timeout_seconds": 0.05}
    stopped = problem(
        f"input 'merged': {OP} ({NAME}): no answer within 0.05 s; the fetch was stopped",
        "HZ726",
        f"the service may be slow or down; raise [providers.{NAME}] timeout_seconds to wait longer",
    )
    for _ in range(2):
        assert fetch({"merged": merged()}, tmp_path, settings=hang).problems == (stopped,)
    assert len(fetching.abandoned(NAME)) == 2
    refused = fetch({"merged": merged()}, tmp_path, settings=hang)
    assert refused.problems == (
        problem(
            f"input 'merged': {OP} ({NAME}): 2 earlier fetches of provider '{NAME}' still run "
            "past the deadline; no more is started until one ends",
            "HZ726",
            "the provider ignores its deadline: report it to its authors, or restart this "
            "process (hz worker) to end them",
        ),
    )
    assert len(fetching.abandoned(NAME)) == 2  # the refused one started no thread
    # Once they end, fetching starts again (the hanging provider answers when released).
    providers.RELEASE.set()
    for thread in fetching.abandoned(NAME):
        thread.join(timeout=10)
    assert fetching.abandoned(NAME) == []
    again = fetch({"merged": merged()}, tmp_path, settings=hang)
    assert (again.problems, again.values) == ((), {"merged": []})
