"""Signalling a child's process group safely (Linux), and ending it: SIGTERM, then SIGKILL
after one grace (``KILL_GRACE``), written once for every place that stops a group."""

from __future__ import annotations

import os
import signal
from dataclasses import dataclass
from typing import TypeVar

from hz.runtime.process.clock import SYSTEM, Clock
from hz.runtime.process.proc import group_members

#: Between SIGTERM and SIGKILL to a group, unless told otherwise (``Limits.kill_grace``, a
#: cancel's, a reconciler's).
KILL_GRACE = 2.0
#: How often a blocking termination looks whether the group is gone.
_POLL = 0.05

T = TypeVar("T")


class UnsafeGroupError(RuntimeError):
    """Refusing to signal a process group that is not the child's own: a bug, never a result."""


class PipeMissing(RuntimeError):
    """A child started with a pipe has none: a bug in how it was started, never a result."""


def pipe(stream: T | None, name: str) -> T:
    """``stream``, a pipe the child was started with; ``PipeMissing`` when it has none."""
    if stream is None:
        raise PipeMissing(f"the child has no {name} pipe")
    return stream


def check_own_group(pid: int) -> int:
    """The child's process group id, proven to be its own session's and not ours."""
    pgid = os.getpgid(pid)
    if pgid != pid:
        raise UnsafeGroupError(f"child {pid} is in process group {pgid}, not its own")
    _refuse_unsafe(pgid)
    return pgid


def _refuse_unsafe(pgid: int) -> None:
    # killpg(0) is our own group, 1 is init's, negative values mean "every process".
    if pgid <= 1 or pgid == os.getpgrp():
        raise UnsafeGroupError(f"refusing to signal process group {pgid}")


def signal_group(pgid: int, sig: signal.Signals) -> bool:
    """Send ``sig`` to the group; False when the group no longer exists."""
    _refuse_unsafe(pgid)
    try:
        os.killpg(pgid, sig)
    except ProcessLookupError:
        return False
    except PermissionError:
        # A member changed its credentials (setuid); the others still got the signal.
        return True
    return True


def living_members(pgid: int, *, exclude: int) -> list[int]:
    """Pids in group ``pgid`` other than ``exclude`` that are not zombies (from /proc)."""
    return group_members(pgid, exclude=exclude)


@dataclass(slots=True)
class Termination:
    """Ending one group, stepped by its caller's own loop: the first ``step`` sends SIGTERM,
    the first after ``grace`` seconds (or an ``urgent`` one) SIGKILL."""

    pgid: int
    grace: float = KILL_GRACE
    termed_at: float | None = None
    killed: bool = False

    def step(self, now: float, *, urgent: bool = False) -> None:
        if self.killed:
            return
        if self.termed_at is None:
            self.termed_at = now
            signal_group(self.pgid, signal.SIGTERM)
        if urgent or now - self.termed_at >= self.grace:
            self.killed = True
            signal_group(self.pgid, signal.SIGKILL)


def terminate_group(pgid: int, *, grace: float = KILL_GRACE, clock: Clock = SYSTEM) -> None:
    """End group ``pgid`` (not a child of this process: nothing to reap) and return once it
    is gone: SIGTERM, then SIGKILL to what is left after ``grace`` seconds."""
    ending = Termination(pgid, grace)
    ending.step(clock.monotonic())
    while group_members(pgid) and not ending.killed:
        clock.sleep(_POLL)
        ending.step(clock.monotonic())
