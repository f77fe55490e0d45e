"""A SQLite ledger moved aside and made anew at its path under a running ``hz worker`` (a
restore from a backup, ``rm`` and a new ledger): the worker stops and names the file; it claims
nothing from either file, and what it ran is recorded in the file it belongs to.

The worker is a real process on a real file. Its polls (a slot's ``IDLE_POLL``, the main
thread's ``WAIT_SLICE``) are made an hour by a ``sitecustomize`` on its PYTHONPATH, so only the
inotify watch can make it look: no test waits for a poll."""

from __future__ import annotations

import contextlib
import os
import sqlite3
import threading
from pathlib import Path
from typing import Any

import pytest

from hz.runtime.ledger import worker as worker_module
from hz.runtime.ledger.db import LedgerReplaced
from hz.runtime.ledger.owner import Binding, Policy, Slots, Told
from hz.runtime.ledger.store import Ledger, Owner
from hz.runtime.ledger.worker import Pool
from tests.fakes.agent import is_gone, recorded_pids
from tests.helpers.ledger_env import Space, space, until
from tests.helpers.workers import running_worker

# Its children run code no in-process test runs: coverage measures them.
pytestmark = pytest.mark.child_coverage

HOUR_POLLS = """\
import hz.runtime.ledger.worker as worker

worker.IDLE_POLL = 3600.0
worker.WAIT_SLICE = 3600.0
"""

#: What a test waits at most for what it asserts (seconds).
CEILING = 30.0
REPLACED = (
    "hz: error: {path}: the run ledger was moved, removed or replaced while this hz process "
    "used it\n"
)


def _hour_polls(s: Space, tmp_path: Path) -> dict[str, str]:
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(HOUR_POLLS, encoding="utf-8")
    return {"PYTHONPATH": f"{site}{os.pathsep}{s.env()['PYTHONPATH']}"}


def _move_aside(ledger: Path) -> Path:
    """The ledger's files renamed as one ledger (``old.sqlite3`` and its ``-wal``, ``-shm``),
    as an operator sets it aside: SQLite still reads it whole there."""
    aside = ledger.with_name("old.sqlite3")
    for suffix in ("", "-wal", "-shm"):
        part = Path(f"{ledger}{suffix}")
        if part.exists():
            part.rename(f"{aside}{suffix}")
    return aside


def _states(path: Path) -> list[tuple[str, str]]:
    with contextlib.closing(sqlite3.connect(path)) as c:
        return c.execute("SELECT id, state FROM runs ORDER BY created_at").fetchall()


@pytest.mark.parametrize("anew", [True, False])
def test_an_idle_worker_whose_ledger_is_replaced_stops_and_names_it(
    tmp_path: Path, anew: bool
) -> None:
    s = space(tmp_path, "echo", "--prompt-file={prompt_file}")
    ledger = s.state / "ledger.sqlite3"
    with running_worker(s, **_hour_polls(s, tmp_path)) as worker:
        until(lambda: worker.stderr, what="the worker's start")
        _move_aside(ledger)  # moved away: that alone wakes it
        if anew:
            run_id = s.submit("Ann")  # a new ledger at the path, and a run queued in it
        assert worker.wait() == 2
    assert worker.stdout == ""
    assert worker.notes == REPLACED.format(path=ledger) + (
        "  hint: hz stopped rather than go on with the file it had opened, which no new run "
        "reaches, or switch files under the runs it owned; start it again (hz worker) to use "
        "the ledger now at that path\n"
    )
    if anew:
        assert _states(ledger) == [(run_id, "queued")]  # for the next worker, not taken here
    assert s.starts() == []


def test_a_busy_worker_whose_ledger_is_replaced_stops_its_run_in_the_old_file(
    tmp_path: Path, cleanup: list[Space]
) -> None:
    # Its one slot is busy with a long run, so no claim looks: the worker stops at once all the
    # same (its main thread looks as the ledger's files change; a run's watcher whose first
    # statement comes after the move is refused too, and stops its run).
    s = space(tmp_path, "sleep")
    cleanup.append(s)
    ledger = s.state / "ledger.sqlite3"
    first = s.submit("Ann")
    with running_worker(s, **_hour_polls(s, tmp_path)) as worker:
        until(s.starts, what="the agent's start")
        aside = _move_aside(ledger)
        second = s.submit("Bo")
        assert worker.wait() == 2
    assert worker.stdout == f"{first}  cancelled (aborted)  greet  greet.yaml\n"
    assert worker.notes.startswith(REPLACED.format(path=ledger))
    assert _states(aside) == [(first, "cancelled")]  # recorded where the run is
    assert _states(ledger) == [(second, "queued")]
    assert len(s.starts()) == 1
    assert all(is_gone(int(str(p["pid"]))) for p in recorded_pids(s.pids))


@pytest.mark.parametrize("anew", [True, False])
def test_no_connection_is_opened_on_a_file_other_than_the_one_opened(
    tmp_path: Path, anew: bool
) -> None:
    # A thread's first statement after the file was moved away (and another made, or not):
    # refused, and no empty ledger is created where the old one was.
    path = tmp_path / "ledger.sqlite3"
    ledger = Ledger(path)
    ledger.db.check_file()  # the same file: nothing to say
    _move_aside(path)
    if anew:
        Ledger(path).close()
    refused: list[BaseException] = []

    def first_statement() -> None:
        try:
            ledger.select("state = ?", ("queued",))
        except LedgerReplaced as e:
            refused.append(e)

    thread = threading.Thread(target=first_statement)
    thread.start()
    thread.join()
    [error] = refused
    assert str(error) == REPLACED.format(path=path)[len("hz: error: ") : -1]
    assert path.exists() is anew
    with pytest.raises(LedgerReplaced):
        ledger.db.check_file()
    assert ledger.select("state = ?", ("queued",)) == []  # this thread's own, opened before
    ledger.close()


def test_a_pool_whose_every_slot_is_busy_stops_as_the_ledger_is_moved(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The main thread's look, alone: the one slot is held inside its claim (as a long run holds
    # it) until the pool has stopped.
    monkeypatch.setattr(worker_module, "IDLE_POLL", 3600.0)
    monkeypatch.setattr(worker_module, "WAIT_SLICE", 3600.0)
    path = tmp_path / "ledger.sqlite3"
    busy, release = threading.Event(), threading.Event()

    def claim(_: Ledger, __: Owner) -> bool:
        busy.set()
        release.wait(3600.0)  # set by the test, once the pool has stopped (or failed to)
        return False

    binding: Any = Binding(runner=None, name="unused", settings_digest="")  # type: ignore[arg-type]
    pool = Pool(Ledger(path), Slots(1, binding, Policy()), claim, Told())
    raised: list[BaseException] = []

    def run() -> None:
        try:
            pool.run()
        except LedgerReplaced as e:
            raised.append(e)

    thread = threading.Thread(target=run)
    thread.start()
    try:
        assert busy.wait(CEILING)
        _move_aside(path)
        assert pool.stopping.wait(CEILING)  # while the slot is still busy
        assert not release.is_set()
    finally:
        release.set()
        thread.join(CEILING)
    assert not thread.is_alive()
    assert [str(e) for e in raised] == [REPLACED.format(path=path)[len("hz: error: ") : -1]]
    pool.ledger.close()
