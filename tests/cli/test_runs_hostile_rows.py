"""Ledger rows are outside input: one odd value in one row, or a damaged ledger file, never
ends a command as a bug (exit 3). A malformed row is marked by ``hz runs list``, its bad
columns named by ``hz runs show``, left alone by reconciliation and cancel; the other runs are
served as ever. A damaged file is a clear exit 2 naming it and how to set it aside."""

from __future__ import annotations

import contextlib
import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from hz.runtime.ledger.store import Ledger, Owner
from tests.conftest import Cli
from tests.helpers.faults import zero_pages
from tests.helpers.ledger_cli import worker_started
from tests.helpers.packets import make_packet


def runs(hz: Cli, tmp_path: Path) -> tuple[str, str]:
    """A completed run (through hz run) and a live one owned by this process."""
    done = hz("run", "greet.yaml", "--input", "who=Ann", "--format", "json")
    assert done.returncode == 0, done.stderr
    ledger = Ledger(tmp_path / "s" / "ledger.sqlite3")
    [completed] = [r.id for r in ledger.select()]
    live, _ = ledger.create(
        make_packet(), key="live", workdir=tmp_path, receipt_dir=None, adopt=Owner.this_process()
    )
    ledger.close()
    return completed, live


class AsText(bytes):
    """Bytes stored as TEXT (``CAST(? AS TEXT)``): text that is not UTF-8, as a damaged page
    or another tool writing Latin-1 leaves it (a BLOB is another case)."""


def poke(tmp_path: Path, sql: str, params: tuple[Any, ...]) -> None:
    if any(isinstance(p, AsText) for p in params):
        sql = sql.replace("= ?", "= CAST(? AS TEXT)", 1)
        params = tuple(bytes(p) if isinstance(p, AsText) else p for p in params)
    with contextlib.closing(sqlite3.connect(tmp_path / "s" / "ledger.sqlite3")) as c:
        c.execute(sql, params)
        c.commit()


#: The values of the attack, one column of one row at a time, and how each is named.
ODD = [
    ("lease_until", "soon", "lease_until: 'soon' is not a number"),
    ("created_at", 1e20, "created_at: 1e+20 is out of range"),
    ("cost_usd", "abc", "cost_usd: 'abc' is not a number"),
    ("result_json", "[1]", "result_json: a JSON list, not an object"),
    ("result_json", "[" * 5000, "result_json: not JSON (nested more than 64 levels deep)"),
    ("job_name", b"\xff\x00job", "job_name: b'\\xff\\x00job' is not text"),
    ("job_name", AsText(b"\xffa"), "job_name: '\\udcffa' is not UTF-8 text"),
    ("request_key", AsText(b"k\xe9"), "request_key: 'k\\udce9' is not UTF-8 text"),
    ("workdir", AsText(b"/srv/caf\xe9"), "workdir: '/srv/caf\\udce9' is not UTF-8 text"),
    (
        "result_json",
        AsText(b'{"a": "\xff"}'),
        'result_json: \'{"a": "\\udcff"}\' is not UTF-8 text',
    ),
    ("pgid", 1 << 40, "pgid: 1099511627776 is out of range"),
    ("attempt", "one", "attempt: 'one' is not a whole number"),
    ("reserved_usd", float("inf"), "reserved_usd: inf is out of range"),
    # A path stored as its file:// URI (bytes that are not UTF-8) is read back to its bytes.
    (
        "workdir",
        "file:///srv/a%00b",
        "workdir: 'file:///srv/a%00b' holds a NUL, which no path does",
    ),
]


@pytest.mark.parametrize(
    ("column", "value", "named"), ODD, ids=[f"{c}-{i}" for i, (c, _, _) in enumerate(ODD)]
)
@pytest.mark.parametrize("which", ["completed", "live"])
def test_one_odd_value_is_named_and_every_command_goes_on(
    hz: Cli, tmp_path: Path, column: str, value: Any, named: str, which: str
) -> None:
    completed, live = runs(hz, tmp_path)
    odd, other = (completed, live) if which == "completed" else (live, completed)
    poke(tmp_path, f"UPDATE runs SET {column} = ? WHERE id = ?", (value, odd))
    listed = hz("runs", "list")
    assert listed.returncode == 0, listed.stderr
    [odd_line] = [line for line in listed.stdout.splitlines() if line.startswith(odd)]
    assert "! " in odd_line
    assert odd_line.endswith(f"  bad values: {column} (hz runs show)")
    assert any(line.startswith(other) and "!" not in line for line in listed.stdout.splitlines())
    as_json = hz("runs", "list", "--format", "json")
    assert as_json.returncode == 0, as_json.stderr
    by_id = {r["id"]: r for r in json.loads(as_json.stdout)["runs"]}
    assert by_id[odd]["bad"] == [named]
    assert "bad" not in by_id[other]
    shown = hz("runs", "show", odd)
    assert shown.returncode == 0, shown.stderr
    assert f"bad values:  {named}" in shown.stdout.splitlines()
    for by in ("job", "runner", "model", "day"):
        cost = hz("runs", "cost", "--by", by)
        assert cost.returncode == 0, cost.stderr
    assert hz("runs", "reconcile").stdout == "nothing to reconcile\n"
    # hz run reconciles first, then runs: unhindered by the odd row.
    again = hz("run", "greet.yaml", "--input", "who=Bo")
    assert again.returncode == 0, again.stderr
    if which == "live":
        refused = hz("runs", "cancel", odd)
        assert (refused.returncode, refused.stderr.splitlines()[0]) == (
            2,
            f"hz: error: run {odd} has values hz cannot read: "
            f"{named.split(': ', 1)[0]} ({named.split(': ', 1)[1]}); it is left alone",
        )


def test_a_long_job_name_written_into_the_ledger_is_cut_in_the_listing(
    hz: Cli, tmp_path: Path
) -> None:
    """A packet's job name is at most 64 characters; 5,000 written by hand were listed whole,
    one very long line (attack on issue 21, H12). A cell of the listing is 40 columns."""
    completed, _ = runs(hz, tmp_path)
    poke(tmp_path, "UPDATE runs SET job_name = ? WHERE id = ?", ("n" * 5000, completed))
    [line] = [x for x in hz("runs", "list").stdout.splitlines() if x.startswith(completed)]
    assert f"  {'n' * 39}…  " in line
    assert len(line) < 200


def test_an_event_whose_text_is_not_utf8_is_named_in_the_timeline(hz: Cli, tmp_path: Path) -> None:
    completed, _ = runs(hz, tmp_path)
    poke(tmp_path, "UPDATE events SET detail = ? WHERE run_id = ?", (AsText(b"\xff"), completed))
    poke(tmp_path, "UPDATE events SET state = ? WHERE run_id = ?", (AsText(b"q\xff"), completed))
    shown = hz("runs", "show", completed)
    assert shown.returncode == 0, shown.stderr
    as_json = json.loads(hz("runs", "show", completed, "--format", "json").stdout)
    assert as_json["timeline"][0]["bad"] == [
        "state: 'q\\udcff' is not UTF-8 text",
        "detail: '\\udcff' is not UTF-8 text",
    ]


def test_an_odd_event_time_is_named_in_the_timeline(hz: Cli, tmp_path: Path) -> None:
    completed, _ = runs(hz, tmp_path)
    poke(tmp_path, "UPDATE events SET at = ? WHERE run_id = ?", (1e300, completed))
    shown = hz("runs", "show", completed)
    assert shown.returncode == 0, shown.stderr
    assert "  ?                         queued" in shown.stdout.splitlines()
    as_json = json.loads(hz("runs", "show", completed, "--format", "json").stdout)
    assert as_json["timeline"][0]["bad"] == ["at: 1e+300 is out of range"]


@pytest.mark.parametrize(
    ("column", "value", "named"),
    [
        ("max_usd", "lots", "max_usd ('lots' is not a number)"),
        (
            "workdir",
            "file:///srv/a%00b",
            "workdir ('file:///srv/a%00b' holds a NUL, which no path does)",
        ),
        ("workdir", AsText(b"/srv/caf\xe9"), "workdir ('/srv/caf\\udce9' is not UTF-8 text)"),
    ],
)
def test_a_queued_run_with_an_odd_value_fails_not_started_when_claimed(
    hz: Cli, tmp_path: Path, column: str, value: Any, named: str
) -> None:
    queued = hz("submit", "greet.yaml", "--input", "who=Cy")
    run_id = queued.stdout.strip()
    poke(tmp_path, f"UPDATE runs SET {column} = ? WHERE id = ?", (value, run_id))
    worked = hz("worker", "--drain")
    assert worked.returncode == 0, worked.stderr
    assert worked.stderr == worker_started(tmp_path / "s") + (
        f"hz: error: {run_id}: its row in the ledger has values hz cannot read: {named} (the "
        "row was edited by hand?)\n"
    )
    with contextlib.closing(sqlite3.connect(tmp_path / "s" / "ledger.sqlite3")) as c:
        state = c.execute("SELECT state, failure_kind FROM runs WHERE id = ?", (run_id,)).fetchone()
    assert state == ("failed", "not_started")


def damaged(path: Path, what: str) -> str:
    return (
        f"hz: error: {path}: the run ledger is damaged ({what})\n"
        f"  hint: stop the hz workers that use it, keep a copy (cp -p {path}* "
        f"/somewhere/safe/), then move {path} and its -wal and -shm files aside: the next hz "
        "command starts a new, empty ledger there (the runs of the old one are no longer "
        f"listed; sqlite3 {path} .recover salvages what it can)\n"
    )


def test_a_ledger_without_its_events_table_is_a_clear_exit_2(hz: Cli, tmp_path: Path) -> None:
    runs(hz, tmp_path)
    poke(tmp_path, "DROP TABLE events", ())
    path = tmp_path / "s" / "ledger.sqlite3"
    for args in (("runs", "list"), ("run", "greet.yaml", "--input", "who=Bo"), ("worker",)):
        done = hz(*args)
        assert (done.returncode, done.stderr) == (2, damaged(path, "no table events"))


def test_a_worker_meeting_damage_as_it_starts_a_run_exits_2_with_one_line(
    hz: Cli, tmp_path: Path
) -> None:
    """A column missing (a damaged page read later does the same): the worker used to say it
    as the run's error and carry on, ``--drain`` for ever. Every read names the columns it
    reads (``run_select``), so the first one, before the worker starts, says it."""
    hz("submit", "greet.yaml", "--input", "who=Cy")
    poke(tmp_path, "ALTER TABLE runs DROP COLUMN held_since", ())
    path = tmp_path / "s" / "ledger.sqlite3"
    done = hz("worker", "--drain")
    assert (done.returncode, done.stdout, done.stderr) == (
        2,
        "",
        damaged(path, "no such column: held_since"),
    )


def test_a_trigger_someone_added_is_a_damaged_ledger(hz: Cli, tmp_path: Path) -> None:
    hz("submit", "greet.yaml", "--input", "who=Cy")
    poke(
        tmp_path,
        "CREATE TRIGGER t BEFORE UPDATE ON runs BEGIN SELECT RAISE(ABORT, 'nope'); END",
        (),
    )
    path = tmp_path / "s" / "ledger.sqlite3"
    for args, first in (
        (("worker", "--drain"), worker_started(path.parent)),
        (("run", "greet.yaml", "--input", "who=Bo"), ""),
    ):
        done = hz(*args)
        assert (done.returncode, done.stderr) == (
            2,
            first + damaged(path, "a constraint or trigger hz's schema does not have failed: nope"),
        )


@pytest.mark.parametrize(
    ("version", "what"),
    [
        (3, "3, but duplicate column name: target"),
        (0, "0, but table runs already exists"),
        (-1, None),
    ],
)
def test_a_schema_version_set_back_is_a_damaged_ledger(
    hz: Cli, tmp_path: Path, version: int, what: str | None
) -> None:
    runs(hz, tmp_path)
    poke(tmp_path, f"PRAGMA user_version = {version}", ())
    path = tmp_path / "s" / "ledger.sqlite3"
    done = hz("runs", "list")
    said = f"its schema version says {what}" if what else f"its schema version is {version}"
    assert (done.returncode, done.stderr) == (2, damaged(path, said))


def test_a_ledger_with_zeroed_pages_is_a_clear_exit_2(hz: Cli, tmp_path: Path) -> None:
    runs(hz, tmp_path)
    for n in range(40):  # enough runs that the table spans many pages
        hz("submit", "greet.yaml", "--input", f"who={'x' * 2000}{n}")
    path = tmp_path / "s" / "ledger.sqlite3"
    with contextlib.closing(sqlite3.connect(path)) as c:
        c.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        pages = c.execute("PRAGMA page_count").fetchone()[0]
    zero_pages(path, 2, pages - 3)
    for args in (("runs", "list"), ("run", "greet.yaml", "--input", "who=Bo")):
        done = hz(*args)
        assert (done.returncode, done.stderr) == (
            2,
            damaged(path, "database disk image is malformed"),
        )
