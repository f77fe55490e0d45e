"""An idle worker slot on SQLite is woken by a change of the ledger (inotify on the state
directory, ``hz.runtime.ledger.wakeup``), not only by its poll. IDLE_POLL is made an hour
here: only the wake-up can end a wait, so no test measures time."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

from hz.runtime.ledger import worker as worker_module
from hz.runtime.ledger.owner import Binding, Policy, Slots, Told
from hz.runtime.ledger.store import Ledger, Owner
from hz.runtime.ledger.wakeup import _EVENT, Bell, LedgerWatch
from hz.runtime.ledger.worker import Pool
from tests.helpers.packets import make_packet

CEILING = 30.0  # seconds: what a test waits at most for what it asserts


def _pool(ledger: Ledger, claim: Any) -> tuple[Pool, threading.Thread]:
    binding: Any = Binding(runner=None, name="unused", settings_digest="")  # type: ignore[arg-type]
    pool = Pool(ledger, Slots(1, binding, Policy()), claim, Told())
    thread = threading.Thread(target=pool.run, daemon=True)
    return pool, thread


@pytest.fixture
def hour_poll(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(worker_module, "IDLE_POLL", 3600.0)


@pytest.mark.usefixtures("hour_poll")
def test_a_commit_by_another_connection_wakes_an_idle_slot(tmp_path: Path) -> None:
    ledger = Ledger(tmp_path / "ledger.sqlite3")
    looks: list[int] = []
    idle = threading.Event()

    def claim(_: Ledger, __: Owner) -> bool | None:
        looks.append(len(looks))
        if len(looks) == 1:
            idle.set()
            return False  # nothing queued: the slot waits
        return None  # the second look: the pool ends

    _, thread = _pool(ledger, claim)
    thread.start()
    assert idle.wait(CEILING)
    # As hz submit does from its own process: a queued run committed on its own connection.
    submitter = Ledger(tmp_path / "ledger.sqlite3")
    submitter.create(make_packet(), key="k", workdir=tmp_path, receipt_dir=None)
    submitter.close()
    thread.join(CEILING)
    assert not thread.is_alive()
    assert looks == [0, 1]


@pytest.mark.usefixtures("hour_poll")
def test_stop_wakes_an_idle_slot(tmp_path: Path) -> None:
    idle = threading.Event()

    def claim(_: Ledger, __: Owner) -> bool:
        idle.set()
        return False

    pool, thread = _pool(Ledger(tmp_path / "ledger.sqlite3"), claim)
    thread.start()
    assert idle.wait(CEILING)
    pool.stop("the test is over")
    thread.join(CEILING)
    assert not thread.is_alive()


def test_a_ring_between_looking_and_waiting_is_not_lost() -> None:
    bell = Bell()
    seen = bell.seen()
    bell.ring()
    assert bell.wait(seen, 0.0) is True
    assert bell.wait(bell.seen(), 0.0) is False


def test_only_the_ledgers_files_ring() -> None:
    watch = LedgerWatch(-1, frozenset({b"ledger.sqlite3", b"ledger.sqlite3-wal"}), Bell())

    def event(name: bytes, mask: int = 0x2) -> bytes:
        padded = name + b"\0" * (16 - len(name) % 16)
        return _EVENT.pack(1, mask, 0, len(padded)) + padded

    assert watch._relevant(event(b"receipts") + event(b"ledger.sqlite3-wal")) is True
    assert watch._relevant(event(b"receipts") + event(b"ledger.sqlite3-shm")) is False
    assert watch._relevant(event(b"", mask=0x4000)) is True  # the queue overflowed: look


def test_no_watch_where_the_directory_cannot_be_watched(tmp_path: Path) -> None:
    # The slots poll then (IDLE_POLL), as before.
    assert LedgerWatch.start(tmp_path / "missing" / "ledger.sqlite3", Bell()) is None


def test_closing_the_watch_ends_its_thread_at_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A pool's end (a batch, a worker) waits for the watch's thread: close() wakes it rather
    # than leaving it to notice at its next look, made an hour here.
    import hz.runtime.ledger.wakeup as wakeup

    monkeypatch.setattr(wakeup, "_STOP_CHECK", 3600.0)
    Ledger(tmp_path / "ledger.sqlite3").close()
    watch = LedgerWatch.start(tmp_path / "ledger.sqlite3", Bell())
    assert watch is not None
    watch.close()  # waits _CLOSE_WAIT at most
    assert not watch._thread.is_alive()


@pytest.mark.usefixtures("hour_poll")
def test_poll_seconds_ends_an_idle_wait_nothing_rang(tmp_path: Path) -> None:
    """``[system.queue] poll_seconds`` replaces IDLE_POLL (an hour here): with no change of
    the ledger, only the configured poll can end the waits."""
    ledger = Ledger(tmp_path / "ledger.sqlite3", poll_seconds=0.01)
    looks: list[int] = []

    def claim(_: Ledger, __: Owner) -> bool | None:
        looks.append(len(looks))
        return False if len(looks) < 3 else None  # idle twice, then the pool ends

    _, thread = _pool(ledger, claim)
    thread.start()
    thread.join(CEILING)
    assert not thread.is_alive()
    assert looks == [0, 1, 2]
