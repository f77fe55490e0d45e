"""The signals that stop hz, and routing them while it runs: one definition for ``hz run``
(one run, or a batch), ``hz worker`` on either backend.

SIGINT, SIGTERM, SIGHUP and SIGQUIT all take the cancel path (Ctrl-C is the same path as a
supervisor's SIGTERM). A signal hz was started with ignored stays ignored (SIGINT in a
background job of a shell without job control). The first signal calls the handler; the second
the ``again`` handler, if any (a stopping worker or batch: kill the runs' groups now rather than
after the grace); later ones are ignored, so they cannot cut short the killing of the runs'
processes, the removal of their private files or the writing of their receipts. Once one came,
they stay ignored to the end of hz. A handler does no more than set values (a ``CancelToken``,
a flag): the loops that wait poll them.

A command with no loop to poll (``hz compile``: CPU-bound work, in forked processes too) uses
``raising`` instead: SIGTERM and SIGHUP unwind it as Ctrl-C does (SIGINT stays Python's
KeyboardInterrupt), through every cleanup on the way, and then it exits 128 + the signal's
number, as a process the signal had killed would.
"""

from __future__ import annotations

import atexit
import signal
from collections.abc import Callable, Iterator
from contextlib import contextmanager

#: The signals that cancel a run or stop a worker.
CANCEL_SIGNALS: tuple[signal.Signals, ...] = (
    signal.SIGINT,
    signal.SIGTERM,
    signal.SIGHUP,
    signal.SIGQUIT,
)


def handled() -> tuple[signal.Signals, ...]:
    """``CANCEL_SIGNALS`` but those this process was started with ignored."""
    return tuple(s for s in CANCEL_SIGNALS if signal.getsignal(s) is not signal.SIG_IGN)


class Escalation:
    """Counts the signals: the first calls ``first(name)``, the second ``again(name)``, the
    rest nothing."""

    def __init__(
        self, first: Callable[[str], object], again: Callable[[str], object] | None = None
    ) -> None:
        self.first = first
        self.again = again
        self.count = 0
        self.closed = False

    def __call__(self, name: str) -> None:
        self.count += 1
        if self.closed:
            return
        if self.count == 1:
            self.first(name)
        elif self.count == 2 and self.again is not None:
            self.again(name)


@contextmanager
def routed(
    first: Callable[[str], object], again: Callable[[str], object] | None = None
) -> Iterator[Escalation]:
    """Route the cancel signals to ``first`` and ``again`` (see the module docstring) while
    the block runs. When one came, the handler stays and ignores the rest; at exit they become
    ``SIG_IGN`` (the interpreter restores a Python handler's default action while it shuts
    down, and would die of one more)."""
    escalation = Escalation(first, again)

    def on_signal(signum: int, frame: object) -> None:
        escalation(signal.Signals(signum).name)

    signals = handled()
    previous = {s: signal.signal(s, on_signal) for s in signals}
    try:
        yield escalation
    finally:
        escalation.closed = True
        if escalation.count:
            atexit.register(_ignore, signals)
        else:
            for signum, old in previous.items():
                signal.signal(signum, old)


#: The signals ``raising`` turns into ``Terminated`` (SIGINT is KeyboardInterrupt already;
#: SIGQUIT keeps its core dump).
RAISED_SIGNALS: tuple[signal.Signals, ...] = (signal.SIGTERM, signal.SIGHUP)


class Terminated(BaseException):
    """SIGTERM or SIGHUP, raised where the program was (a ``BaseException``, as
    KeyboardInterrupt: no ``except Exception`` takes it)."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum

    @property
    def exit_status(self) -> int:
        """What a shell shows for a process the signal killed."""
        return 128 + self.signum


@contextmanager
def raising() -> Iterator[None]:
    """While the block runs, the first of ``RAISED_SIGNALS`` raises ``Terminated``; later ones
    are ignored to the end of hz, so that they cannot cut the cleanup short. A signal hz was
    started with ignored stays ignored."""
    signals = tuple(s for s in RAISED_SIGNALS if signal.getsignal(s) is not signal.SIG_IGN)
    came: list[int] = []

    def on_signal(signum: int, frame: object) -> None:
        if not came:
            came.append(signum)
            raise Terminated(signum)

    previous = {s: signal.signal(s, on_signal) for s in signals}
    try:
        yield
    finally:
        if came:
            atexit.register(_ignore, signals)
        else:
            for signum, old in previous.items():
                signal.signal(signum, old)


def _ignore(signals: tuple[signal.Signals, ...]) -> None:
    for signum in signals:
        signal.signal(signum, signal.SIG_IGN)
