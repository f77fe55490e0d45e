"""Either run ledger, SQLite or PostgreSQL, with rows edited by hand: observations, results and
packets hz cannot read are read as what hz knows, a state hz does not know is listed (escaped,
in its column) and left alone by every command that would act on it. Both backends answer the
same attack with the same words."""

from __future__ import annotations

import contextlib
import sqlite3
from pathlib import Path

import psycopg
import pytest

from tests.helpers.ledger_env import Space, space


@pytest.fixture(params=["sqlite", "postgres"])
def s(request: pytest.FixtureRequest, tmp_path: Path) -> Space:
    dsn = None if request.param == "sqlite" else str(request.getfixturevalue("pg_dsn"))
    return space(tmp_path, "echo", "--prompt-file={prompt_file}", dsn=dsn)


def submit(s: Space, who: str) -> str:
    done = s.cli("submit", "greet.yaml", "--input", f"who={who}")
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def edit(s: Space, sql: str, *params: object) -> None:
    """``sql`` with ``?`` placeholders, on the space's ledger."""
    if s.dsn is None:
        with contextlib.closing(sqlite3.connect(s.state / "ledger.sqlite3")) as c, c:
            c.execute(sql, params)
        return
    with psycopg.connect(s.dsn, autocommit=True) as c:
        c.execute("SET search_path TO hz, public")
        if sql.startswith("UPDATE runs SET state"):
            c.execute("ALTER TABLE runs DROP CONSTRAINT IF EXISTS runs_state_check")
        c.execute(sql.replace("?", "%s"), params)  # type: ignore[arg-type]


def test_rows_edited_by_hand_are_read_back_as_what_hz_knows(s: Space) -> None:
    run_id = submit(s, "Ann")
    assert s.cli("worker", "--drain").returncode == 0
    # 50 MB of observations, not hz's: left out, the rest of the run shown.
    edit(
        s,
        "UPDATE runs SET observed_json = ? WHERE id = ?",
        '{"turns": "' + "a" * 50_000_000 + '"}',
        run_id,
    )
    shown = s.cli("runs", "show", run_id)
    assert (shown.returncode, shown.stderr) == (0, "")
    assert "seen so far" not in shown.stdout
    assert shown.stdout.startswith(f"run:         {run_id}\n")
    listed = s.cli("runs", "list")
    assert (listed.returncode, listed.stderr, len(listed.stdout.splitlines())) == (0, "", 2)
    # Not JSON, or JSON of the wrong shape: observations, and the result.
    for observed, seen in (
        ("{not json", None),
        ('{"turns": "many", "tool_calls": 3}', "? turns, 3 tool calls"),
    ):
        edit(
            s,
            "UPDATE runs SET observed_json = ?, result_json = ? WHERE id = ?",
            observed,
            observed,
            run_id,
        )
        shown = s.cli("runs", "show", run_id)
        assert (shown.returncode, shown.stderr) == (0, "")
        lines = [x for x in shown.stdout.splitlines() if x.startswith("seen so far:")]
        assert lines == ([] if seen is None else [f"seen so far: {seen}"])
        as_json = s.cli("runs", "show", run_id, "--format", "json")
        assert (as_json.returncode, as_json.stderr) == (0, "")
    # A state hz does not know: left alone by every command that would act on it.
    edit(s, "UPDATE runs SET state = ? WHERE id = ?", "weird\x1b[31m", run_id)
    unknown = (
        f"hz: error: run {run_id} is in the state 'weird\\x1b[31m', which this hz does not "
        "know; it leaves the run alone\n"
        "  hint: the row was edited by hand or written by a newer hz; hz runs list shows it, "
        "fix the row or use that hz\n"
    )
    for args in (
        ("show", run_id),
        ("wait", run_id, "--timeout", "1"),
        ("cancel", run_id),
        ("retry", run_id),
    ):
        done = s.cli("runs", *args)
        assert (done.returncode, done.stdout, done.stderr) == (2, "", unknown), args
    # No packet hz can read: the worker fails the run as not started, in one line; nothing
    # is spawned.
    other = submit(s, "Bo")
    edit(s, "UPDATE runs SET packet_json = ? WHERE id = ?", "{not a packet", other)
    done = s.cli("worker", "--drain")
    assert (done.returncode, done.stdout) == (0, "")
    assert done.stderr == s.worker_started() + (
        f"hz: error: {other}: its packet in the ledger is missing or unreadable (the row was "
        "edited by hand?)\n"
    )
    [row] = s.rows("id = ?" if s.dsn is None else "id = %s", (other,))
    assert (row["state"], row["failure_kind"], row["dispatched_at"]) == (
        "failed",
        "not_started",
        None,
    )
    assert len(s.starts()) == 1
    # Listed: the unknown state escaped, marked, and in its column like any other.
    listed = s.cli("runs", "list")
    assert (listed.returncode, listed.stderr) == (0, "")
    header, failed, weird = listed.stdout.splitlines()  # newest first
    state, job = header.index("STATE"), header.index("JOB")
    assert [line[state:job] for line in (header, failed, weird)] == [
        "STATE                 ",
        "failed (not_started)  ",
        "? weird\\x1b[31m       ",
    ]
    assert [line[job:].split("  ")[0] for line in (weird, failed)] == ["greet", "greet"]


def test_a_long_unknown_state_is_cut_to_its_column(s: Space) -> None:
    run_id = submit(s, "Ann")
    edit(s, "UPDATE runs SET state = ? WHERE id = ?", "x" * 10_000, run_id)
    listed = s.cli("runs", "list")
    assert (listed.returncode, listed.stderr) == (0, "")
    header, line = listed.stdout.splitlines()
    assert line.endswith(f"  ? {'x' * 37}…  greet     ?  -")
    assert header.endswith(f"  {'STATE':<40}  JOB    COST  WHERE")
    shown = s.cli("runs", "show", run_id)
    assert (shown.returncode, shown.stdout) == (2, "")
    assert shown.stderr.startswith(f"hz: error: run {run_id} is in the state '{'x' * 64}', ")


@pytest.mark.parametrize(
    ("column", "value"),
    [
        ("owner", b"\xff"),
        ("not_before", float("inf")),
        ("not_before", 2**63 - 1),
        ("not_before", "abc"),
        ("not_before", ""),
        ("generation", float("inf")),
        ("not_before", 253402300000.0),  # the year 9999: a time, but no drain's to wait for
    ],
    ids=[
        "owner-blob",
        "not-before-inf",
        "not-before-2^63",
        "not-before-text",
        "not-before-empty",
        "generation-inf",
        "not-before-9999",
    ],
)
def test_a_drain_ends_though_one_queued_row_can_never_be_taken(
    tmp_path: Path, column: str, value: object
) -> None:
    """A queued row no worker will ever claim (an owner that is no text, a not_before that is
    no time or years away, a generation no fence can hold) kept ``hz worker --drain`` waiting
    for ever (attack on issue 21, H12). The drain runs what it can and names what it leaves."""
    s = space(tmp_path, "echo", "--prompt-file={prompt_file}")
    odd = submit(s, "Ann")
    edit(s, f"UPDATE runs SET {column} = ? WHERE id = ?", value, odd)
    fine = submit(s, "Bo")
    done = s.hz("worker", "--drain", timeout=60)
    assert (done.returncode, done.stdout, done.stderr) == (
        0,
        f"{fine}  completed  greet  greet.yaml\n",
        s.worker_started()
        + "hz: worker: drained; 1 run no worker takes now stays in the ledger (values hz cannot "
        "read, or due more than an hour from now: hz runs list)\n",
    )
    assert [(r["id"], r["state"]) for r in s.rows()] == [(odd, "queued"), (fine, "completed")]
