"""What the fetch holds against a hostile job, provider or ledger row: the size cap counted as
the packet holds it (UTF-8, not ``\\uXXXX``), text that is not Unicode, a plugin's broken
``operations()``, a job's arguments and window against its operation, the number of read
inputs and the job-wide deadline, and ``since-last-success`` over garbled or future rows."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from hz.runtime.artifacts.operations import CATALOG
from hz.runtime.artifacts.problem import Problem
from hz.runtime.providers.binding import Bindings
from hz.runtime.providers.fetch import FetchContext, Fetched, fetch_inputs
from tests.helpers import providers
from tests.helpers.providers import NAME, job_reading, merged

AT = datetime(2026, 5, 1, 9, 30, 15, tzinfo=UTC)
NOW = datetime(2026, 5, 1, 9, 31, 0, tzinfo=UTC)
OP = "code-host.merged_pull_requests"
BUG = f"a bug in the provider '{NAME}': report it to its authors"


@pytest.fixture(autouse=True)
def fake_host(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    providers.register(monkeypatch)
    monkeypatch.setenv("FAKEHOST_TOKEN", "planted-secret-7f3a")
    providers.RELEASE.clear()
    yield
    providers.RELEASE.set()


def fetch(
    inputs: dict[str, Any],
    workdir: Path,
    *,
    settings: dict[str, Any] | None = None,
    files: dict[str, Any] | None = None,
    runs: Iterable[tuple[str, str]] = (),
    clock: Callable[[], float] | None = None,
) -> Fetched:
    bindings = Bindings(
        {"code-host": NAME, "files": "files"}, {NAME: settings or {}, "files": files or {}}
    )
    extra = {} if clock is None else {"clock": clock}
    context = FetchContext(
        bindings,
        workdir,
        at=AT,
        last_success=lambda job, name: runs,
        where="digest.yaml",
        now=lambda: NOW,
        **extra,
    )
    return fetch_inputs(job_reading(inputs), context)


def problem(message: str, code: str, hint: str | None = None) -> Problem:
    return Problem(code, message, "digest.yaml", hint=hint)


# -- the size cap ----------------------------------------------------------------------------


def test_the_cap_counts_utf8_bytes_not_json_escapes(tmp_path: Path) -> None:
    # 3,000 CJK characters: 9,000 bytes of UTF-8 (what the packet holds), 18,000 as \uXXXX.
    found = fetch({"m": merged()}, tmp_path, settings={"mode": "cjk", "max_bytes": 12_000})
    assert found.problems == ()
    assert found.values["m"][0]["title"] == "日本語" * 1000


def test_a_cap_hint_names_no_setting_the_provider_lacks(tmp_path: Path) -> None:
    # files has no max_bytes: the hint must not send the operator to a key that is refused.
    big = 4 * 1024 * 1024 - 10
    (tmp_path / "big.txt").write_text("x" * big)
    limits = {"max_file_bytes": 8 * 1024 * 1024, "max_total_bytes": 8 * 1024 * 1024}
    reading = {"read": {"operation": "files.read", "args": {"path": "big.txt"}}}
    found = fetch({"big": reading}, tmp_path, files=limits)
    assert found.problems == (
        problem(
            "input 'big': files.read (files): the answer is 4,194,322 bytes as JSON, more than "
            "the cap of 4,194,304",
            "HZ725",
            "narrow the input's arguments or window (the provider has no setting to raise)",
        ),
    )


def test_a_lone_surrogate_in_an_answer_is_hz724(tmp_path: Path) -> None:
    found = fetch({"m": merged()}, tmp_path, settings={"mode": "surrogate"})
    assert found.problems == (
        problem(
            f"input 'm': {OP} ({NAME}): the answer is not JSON data: it holds text that is not "
            "Unicode (surrogates not allowed: '\\udcff' at character 88 of its JSON)",
            "HZ724",
        ),
    )


# -- a plugin's operations() -----------------------------------------------------------------


def test_operations_that_raise_are_hz721_naming_the_plugin(tmp_path: Path) -> None:
    found = fetch({"m": merged()}, tmp_path, settings={"mode": "ops-raise"})
    assert found.problems == (
        problem(
            f"input 'm': {OP} ({NAME}): provider '{NAME}' cannot list its operations: "
            "TypeError: boom in operations",
            "HZ721",
            BUG,
        ),
    )


def test_operations_that_are_not_operations_are_hz721(tmp_path: Path) -> None:
    found = fetch({"m": merged()}, tmp_path, settings={"mode": "ops-junk"})
    assert found.problems == (
        problem(
            f"input 'm': {OP} ({NAME}): provider '{NAME}' declares this operation as dict, not "
            "an hz.runtime.artifacts.operations.Operation",
            "HZ721",
            BUG,
        ),
    )


# -- the job's arguments and window ----------------------------------------------------------


def test_a_jobs_arguments_are_checked_against_the_operation(tmp_path: Path) -> None:
    # A job file is outside input: re-sealed after an edit, the compiler's HZ411 never saw it.
    args = {"repository": "../../etc; $(touch x)", "extra": {"deep": [1]}}
    reading = {"read": {"operation": OP, "args": args, "window": "7d"}}
    found = fetch({"m": reading}, tmp_path)
    pattern = CATALOG[OP].args["properties"]["repository"]["pattern"]
    assert found.problems == (
        problem(
            f"input 'm': {OP} ({NAME}): the job's arguments do not match the operation's "
            "argument schema: at /: Additional properties are not allowed ('extra' was "
            f"unexpected); at /repository: '../../etc; $(touch x)' does not match {pattern!r}",
            "HZ727",
        ),
    )


def test_a_window_on_an_operation_that_takes_none_is_refused(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("a\n")
    reading = {"read": {"operation": "files.read", "args": {"path": "a.md"}, "window": "7d"}}
    found = fetch({"a": reading}, tmp_path)
    assert found.problems == (
        problem(
            "input 'a': files.read (files): the job gives a window, but the operation takes none",
            "HZ727",
        ),
    )


# -- the job as a whole ----------------------------------------------------------------------


def test_a_job_reading_more_than_sixteen_inputs_fetches_nothing(tmp_path: Path) -> None:
    found = fetch({f"m{i:02d}": merged() for i in range(17)}, tmp_path)
    assert found.problems == (
        problem(
            "the job reads 17 inputs through an operation, more than the 16 a job may read; "
            "nothing was fetched",
            "HZ417",
            "read fewer inputs: split the job, or read a whole directory with one files.glob",
        ),
    )


def test_the_jobs_fetches_end_within_the_job_wide_deadline(tmp_path: Path) -> None:
    # Each call of the clock is 200 s later: the second input starts past the 300 s.
    ticks = iter(range(0, 10_000, 200))
    found = fetch({"a": merged(), "b": merged()}, tmp_path, clock=lambda: float(next(ticks)))
    assert found.problems == (
        problem(
            f"input 'b': {OP}: not fetched: the job's inputs took longer than 300 s to fetch "
            "in all",
            "HZ726",
            "read fewer inputs, or narrow their arguments and windows; a slow service is named "
            "above",
        ),
    )


# -- since-last-success over hostile ledger rows ---------------------------------------------


def test_garbled_and_future_window_ends_are_passed_over_and_said(tmp_path: Path) -> None:
    runs = [
        ("000009", "2035-01-01T00:00:00Z"),  # a run of a packet rendered --at 2035
        ("000008", "2026-99-99T99:99:99Z"),  # edited by hand: no time
        ("000007", "0001-01-01T00:00:00Z"),  # before 1970
        ("000006", "2026-04-28T06:00:00Z"),
    ]
    found = fetch({"m": merged("since-last-success")}, tmp_path, runs=runs)
    window = found.sources["m"].window
    assert window is not None
    assert window.to_json_data() == {
        "spec": "since-last-success",
        "since": "2026-04-28T06:00:00Z",
        "until": "2026-05-01T09:30:15Z",
    }
    assert found.warnings == (
        Problem(
            "HZ728",
            "input 'm': since-last-success passed over 3 completed runs of the ledger: run "
            "'000009': its window ends at 2035-01-01T00:00:00Z, later than now; run '000008': "
            "its window's end '2026-99-99T99:99:99Z' is no time hz uses; run '000007': its "
            "window's end '0001-01-01T00:00:00Z' is no time hz uses",
            "digest.yaml",
            severity="warning",
            hint="such a row was edited by hand, or run from a packet rendered --at a future "
            "time; the window starts at the run before it instead (or falls back to 7 days)",
        ),
    )


def test_only_future_ends_fall_back_to_seven_days(tmp_path: Path) -> None:
    runs = [("000002", "9999-12-31T23:59:59Z")]
    found = fetch({"m": merged("since-last-success")}, tmp_path, runs=runs)
    window = found.sources["m"].window
    assert window is not None
    assert (window.since, window.until, window.fallback) == (
        "2026-04-24T09:30:15Z",
        "2026-05-01T09:30:15Z",
        True,
    )
    assert [w.code for w in found.warnings] == ["HZ728"]
