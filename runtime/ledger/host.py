"""Identifying processes across restarts of hz: a pid alone can be recycled, a pid with its
start time (clock ticks since boot, ``/proc/PID/stat`` field 22) on the same boot cannot."""

from __future__ import annotations

import os
import socket
from functools import cache


@cache
def boot_id() -> str:
    try:
        with open("/proc/sys/kernel/random/boot_id", encoding="ascii") as f:
            return f.read().strip()
    except OSError:
        return "unknown"


@cache
def host_name() -> str:
    return socket.gethostname()


def start_time(pid: int) -> int | None:
    """The process's start time in clock ticks since boot; None when it does not exist or is
    a zombie (a zombie runs nothing)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8", errors="replace") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    if fields[0] in ("Z", "X"):
        return None
    return int(fields[19])


def is_same_process(pid: int | None, started: int | None, boot: str | None) -> bool:
    """Whether ``pid`` on this machine is still the process recorded with ``started`` on
    ``boot``: never true for a recycled pid or after a reboot."""
    if pid is None or started is None or boot != boot_id():
        return False
    return start_time(pid) == started


def group_members(pgid: int) -> list[int]:
    """The living processes of group ``pgid`` (from /proc)."""
    members = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="utf-8", errors="replace") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if int(fields[2]) == pgid and fields[0] not in ("Z", "X"):
            members.append(int(entry))
    return members
