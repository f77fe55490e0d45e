"""What Linux's ``/proc`` says about processes: read in one place, bounded, tolerant of
processes that end while they are read."""

from __future__ import annotations

import os


def stat_fields(pid: int | str) -> list[str] | None:
    """The fields of ``/proc/PID/stat`` after the command name (which may itself hold spaces
    and parentheses): ``[state, ppid, pgrp, ...]``; None when the process is gone."""
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8", errors="replace") as f:
            fields = f.read(4096).rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return fields if len(fields) > 19 else None


def _living(fields: list[str] | None) -> bool:
    return fields is not None and fields[0] not in ("Z", "X")  # a zombie runs nothing


def start_time(pid: int) -> int | None:
    """The process's start time in clock ticks since boot; None when it does not exist or is
    a zombie."""
    fields = stat_fields(pid)
    if fields is None or not _living(fields):
        return None
    return int(fields[19])


def group_members(pgid: int, *, exclude: int | None = None) -> list[int]:
    """The living processes of group ``pgid`` (not zombies), but ``exclude``."""
    members = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == exclude:
            continue
        fields = stat_fields(entry)
        if fields is not None and _living(fields) and fields[2] == str(pgid):
            members.append(int(entry))
    return members
