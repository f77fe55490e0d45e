"""Waking idle slots when the SQLite ledger changes, instead of only polling it.

On SQLite nobody hands a queued run to a worker (PostgreSQL has procrastinate's NOTIFY): an
idle slot looks at the table again every ``IDLE_POLL``, so a submitted run waited up to that
long. Every commit to the ledger writes its write-ahead log (``ledger.sqlite3-wal``), so on
Linux a worker asks inotify to tell it when the ledger's files in the state directory change,
and rings a ``Bell`` that wakes its idle slots at once; each then tries one claim. Nothing new
is created in the state directory, and nothing a submitter does changes: whoever commits a
queued run (``hz submit``, ``hz runs retry``, a requeue) wakes the worker by committing.

A slot's own empty claim commits nothing, so it does not wake the others; the commits of
running runs (their lease renewals, every few seconds) wake idle slots for one cheap look.
The poll stays as the fallback: without inotify (another system, a limit of watches reached,
a file system that does not report changes) a slot still looks every ``IDLE_POLL``.

The ledger's files moved away, removed or created anew ring too: a slot's look then finds the
ledger replaced under the worker (``SqliteDb.check_file``) at once, and the pool stops.
"""

from __future__ import annotations

import contextlib
import os
import select
import struct
import threading
from pathlib import Path

#: inotify(7): what changes a file in the watched directory.
_IN_MODIFY = 0x00000002
_IN_MOVED_FROM = 0x00000040
_IN_MOVED_TO = 0x00000080
_IN_CREATE = 0x00000100
_IN_DELETE = 0x00000200
#: What is watched: a change of a file's content, and a file moved or removed, or new.
_MASK = _IN_MODIFY | _IN_MOVED_FROM | _IN_MOVED_TO | _IN_CREATE | _IN_DELETE
_IN_Q_OVERFLOW = 0x00004000
_EVENT = struct.Struct("iIII")  # wd, mask, cookie, len; then len bytes of name
#: One read of events, at most (the kernel never splits an event across reads).
_READ = 64 * 1024
#: How often the watcher thread looks whether it is to stop (``close()`` also wakes it).
_STOP_CHECK = 0.5
#: How long ``close()`` waits for the thread to end.
_CLOSE_WAIT = 2.0


class Bell:
    """Rings wake whoever waits; a ring between ``seen()`` and ``wait()`` is not lost."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._rung = 0

    def seen(self) -> int:
        with self._cond:
            return self._rung

    def ring(self) -> None:
        with self._cond:
            self._rung += 1
            self._cond.notify_all()

    def wait(self, seen: int, timeout: float) -> bool:
        """Until a ring after ``seen`` or ``timeout``; whether it was rung."""
        with self._cond:
            return self._cond.wait_for(lambda: self._rung != seen, timeout)


class LedgerWatch:
    """Rings ``bell`` whenever a file of the ledger at ``database`` changes, from a daemon
    thread, until ``close()``. ``start`` returns None where inotify cannot be had."""

    def __init__(self, fd: int, names: frozenset[bytes], bell: Bell) -> None:
        self._fd = fd
        self._names = names
        self._bell = bell
        self._closing = threading.Event()
        #: Written by ``close()``, which owns the write end: the thread's select returns at
        #: once, not at its next look; the thread closes the read end and ``fd`` as it ends.
        self._stop_r, self._stop_w = os.pipe()
        self._thread = threading.Thread(target=self._loop, name="hz-ledger-watch", daemon=True)

    @classmethod
    def start(cls, database: Path, bell: Bell) -> LedgerWatch | None:
        fd = _watch(database.parent)
        if fd is None:
            return None
        base = os.fsencode(database.name)
        watch = cls(fd, frozenset({base, base + b"-wal"}), bell)
        try:
            watch._thread.start()
        except RuntimeError:  # no thread to be had: the poll it is
            for each in (fd, watch._stop_r, watch._stop_w):
                os.close(each)
            return None
        return watch

    def close(self) -> None:
        self._closing.set()
        with contextlib.suppress(OSError):
            os.write(self._stop_w, b"x")
        os.close(self._stop_w)
        self._thread.join(timeout=_CLOSE_WAIT)

    def _loop(self) -> None:
        try:
            while not self._closing.is_set():
                ready, _, _ = select.select([self._fd, self._stop_r], [], [], _STOP_CHECK)
                if self._fd not in ready:
                    continue
                try:
                    data = os.read(self._fd, _READ)
                except BlockingIOError:
                    continue
                if self._relevant(data):
                    self._bell.ring()
        except OSError:
            pass  # the watch is gone: the slots poll
        finally:
            os.close(self._fd)
            os.close(self._stop_r)

    def _relevant(self, data: bytes) -> bool:
        at = 0
        while at + _EVENT.size <= len(data):
            _, mask, _, length = _EVENT.unpack_from(data, at)
            name = data[at + _EVENT.size : at + _EVENT.size + length].rstrip(b"\0")
            at += _EVENT.size + length
            if mask & _IN_Q_OVERFLOW or name in self._names:
                return True
        return False


def _watch(directory: Path) -> int | None:
    """An inotify descriptor watching ``directory`` for changed files, or None."""
    import ctypes  # only a worker pays its import

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        init, add = libc.inotify_init1, libc.inotify_add_watch
    except (OSError, AttributeError):
        return None  # not Linux (or no inotify in its C library)
    fd = int(init(os.O_NONBLOCK | os.O_CLOEXEC))
    if fd < 0:
        return None  # the per-user limit of instances
    if add(fd, os.fsencode(directory), _MASK) < 0:
        with contextlib.suppress(OSError):
            os.close(fd)
        return None  # the limit of watches, or a directory it cannot watch
    return fd
