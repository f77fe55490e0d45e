"""Identifying processes across restarts of hz: a pid alone can be recycled, a pid with its
start time (clock ticks since boot, ``/proc/PID/stat`` field 22) on the same boot cannot.
/proc is read by ``hz.runtime.process.proc`` (``start_time``, ``group_members``)."""

from __future__ import annotations

import os
import re
import socket
from functools import cache

from hz.runtime.process.proc import group_members, start_time

#: What ``HZ_HOST_ID`` may hold: it names this machine in the ledger (tests run several
#: "machines" as processes on one).
_HOST_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")


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


def host_id() -> str:
    """This machine's identity in the ledger: ``HZ_HOST_ID`` when set, else the machine id
    (``/etc/machine-id``), else the host name. A run is this host's only when its host id
    *and* boot id are this machine's: only then may hz signal its processes."""
    explicit = os.environ.get("HZ_HOST_ID", "")
    if explicit:
        if not _HOST_ID.match(explicit):
            from hz.runtime.artifacts.errors import HzError

            raise HzError(
                "HZ_HOST_ID must be 1 to 64 letters, digits, '.', '_' or '-', starting with a "
                "letter or digit"
            )
        return explicit
    return _machine_id()


@cache
def _machine_id() -> str:
    try:
        with open("/etc/machine-id", encoding="ascii") as f:
            found = f.read(64).strip()
    except (OSError, UnicodeDecodeError):
        found = ""
    return found if _HOST_ID.match(found) else host_name()[:64]


@cache
def pid_namespace() -> str | None:
    """This process's pid namespace (``pid:[4026531836]``): pids name processes only within
    one. Two containers, or an ``unshare --pid`` sandbox, share the machine and boot ids but
    not their pids. None when it cannot be read."""
    try:
        return os.readlink("/proc/self/ns/pid")
    except OSError:
        return None


#: ``hidepid`` values of a /proc mount under which other users' processes may be invisible.
_HIDING = {"1", "2", "noaccess", "invisible", "ptraceable"}


@cache
def hides_pids() -> bool:
    """Whether this process's /proc may hide other users' processes (mounted ``hidepid``): a
    pid not found there may still run. Read from ``/proc/self/mountinfo``."""
    try:
        with open("/proc/self/mountinfo", encoding="utf-8", errors="replace") as f:
            return mounted_hiding(f.read(1 << 20))
    except OSError:
        return True  # nothing says it does not


def mounted_hiding(mountinfo: str) -> bool:
    """Whether the /proc of ``mountinfo`` (``/proc/self/mountinfo``'s text) hides pids."""
    hiding = True  # no /proc found: nothing says it does not
    for line in mountinfo.splitlines():  # the last mount on /proc is the one seen
        fields = line.split()
        if len(fields) < 10 or fields[4] != "/proc" or "-" not in fields:
            continue
        after = fields[fields.index("-") + 1 :]
        if len(after) >= 3 and after[0] == "proc":
            options = dict(o.partition("=")[::2] for o in after[2].split(","))
            hiding = options.get("hidepid", "0") in _HIDING
    return hiding


def is_this_host(host: str | None, boot: str | None) -> bool:
    """Whether a run recorded with ``host`` and ``boot`` ran on this machine since its last
    boot (a row from before host ids were recorded, ``host`` None, counts by boot alone)."""
    return boot == boot_id() and (host is None or host == host_id())


def is_same_process(pid: int | None, started: int | None, boot: str | None) -> bool:
    """Whether ``pid`` on this machine is still the process recorded with ``started`` on
    ``boot``: never true for a recycled pid or after a reboot."""
    if pid is None or started is None or boot != boot_id():
        return False
    return start_time(pid) == started


__all__ = [
    "boot_id",
    "group_members",
    "host_id",
    "host_name",
    "is_same_process",
    "is_this_host",
    "start_time",
]
