"""Cancellation as a value a running loop polls, not an exception thrown into it.

A ``CancelToken`` is set once, from anywhere (a signal's handler, another thread), with the
reason. Code that waits polls it where it waits: the process chokepoint's supervision loop
(``run_bounded`` kills the group at once and returns ``cancelled``), ``Interactive``'s reads
(``Cancelled`` is raised there, at the read, for the session driving it), a wait for a retry's
time (``CancelToken.wait``). The token a run is under is the current context's
(``cancelling``), as the process observer is (``hz.runtime.process.observe``).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar


class Cancelled(Exception):
    """Raised by a wait that polls a cancelled token and has no value to return instead
    (``Interactive.read_line``); ``signal_name`` names why (``SIGINT``, ...)."""

    def __init__(self, signal_name: str) -> None:
        super().__init__(signal_name)
        self.signal_name = signal_name


class CancelToken:
    """Set once, polled by whoever waits. Thread-safe; setting it touches nothing else, so a
    signal handler may."""

    def __init__(self) -> None:
        self._event = threading.Event()
        self.reason: str | None = None

    def cancel(self, reason: str) -> bool:
        """Cancel with ``reason`` (the first one stays); True when this was the first."""
        if self._event.is_set():
            return False
        self.reason = reason
        self._event.set()
        return True

    @property
    def cancelled(self) -> bool:
        return self._event.is_set()

    def wait(self, timeout: float) -> bool:
        """Sleep up to ``timeout`` seconds, less when cancelled meanwhile; ``cancelled``."""
        return self._event.wait(timeout)

    def check(self) -> None:
        """``Cancelled`` when cancelled."""
        if self.cancelled:
            raise Cancelled(self.reason or "cancelled")


_current: ContextVar[CancelToken | None] = ContextVar("hz_cancel_token", default=None)


@contextmanager
def cancelling(token: CancelToken) -> Iterator[CancelToken]:
    """``token`` is the current context's while the block runs."""
    reset = _current.set(token)
    try:
        yield token
    finally:
        _current.reset(reset)


def current() -> CancelToken | None:
    return _current.get()
