"""Telling a supervisor what a run started, while it runs: the agent's process group and its
private directory, as soon as they exist.

The run ledger needs both to recover from a crash of hz itself (kill an orphaned group, remove
its private files), but neither passes through the runner protocol. A supervisor sets an
``Observer`` for the current thread's context; the process chokepoint and ``private_directory``
report to it. An exception from an observer propagates: the chokepoint then kills the group it
just started (a run whose owner lost its fence must not go on).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import Protocol


class Observer(Protocol):
    def spawned(self, pid: int, pgid: int) -> None: ...

    def private_dir(self, path: Path) -> None: ...


_current: ContextVar[Observer | None] = ContextVar("hz_process_observer", default=None)


@contextmanager
def observing(observer: Observer) -> Iterator[None]:
    token = _current.set(observer)
    try:
        yield
    finally:
        _current.reset(token)


def spawned(pid: int, pgid: int) -> None:
    observer = _current.get()
    if observer is not None:
        observer.spawned(pid, pgid)


def private_dir(path: Path) -> None:
    observer = _current.get()
    if observer is not None:
        observer.private_dir(path)
