"""Signalling a child's process group safely (Linux)."""

from __future__ import annotations

import os
import signal
from pathlib import Path


class UnsafeGroupError(RuntimeError):
    """Refusing to signal a process group that is not the child's own: a bug, never a result."""


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
    members: list[int] = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == exclude:
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        # Fields after the command name, which may itself contain spaces and parentheses.
        fields = stat[stat.rfind(")") + 2 :].split()
        if len(fields) > 2 and fields[2] == str(pgid) and fields[0] not in ("Z", "X"):
            members.append(int(entry.name))
    return members
