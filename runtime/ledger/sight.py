"""Whether this process can tell that another process of hz is gone, or must ask its lease.

A pid names a process only on one host, one boot and one pid namespace: two containers of one
image, or an ``unshare --pid`` sandbox, share the machine id and the kernel's boot id but not
their pids (pid 1 in one is not pid 1 in another). And /proc mounted ``hidepid`` hides other
users' processes: a pid not found there may still run. So an owner is judged by its process
only when its pid is this process's to look up — same host, boot and pid namespace — and only a
process that is provably not there (its pid free, or taken by a process started at another
time) is gone. When hz cannot see for certain, the owner's lease decides, as for an owner on
another machine.

``HostView`` is what this process sees, injectable: a test fakes another namespace or a /proc
that hides pids without needing either.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from hz.runtime.ledger import host


@dataclass(frozen=True, slots=True)
class HostView:
    host_id: str
    boot_id: str
    #: This process's pid namespace (``host.pid_namespace``); None when unknown.
    pidns: str | None
    #: /proc may hide other users' processes (``hidepid``).
    hides_pids: bool
    #: A process's start time (clock ticks since boot), None when no such process is seen.
    start_time: Callable[[int], int | None]

    @classmethod
    def here(cls) -> HostView:
        return cls(
            host.host_id(), host.boot_id(), host.pid_namespace(), host.hides_pids(), host.start_time
        )

    def sees(self, host_id: str | None, boot: str | None, pidns: str | None) -> bool:
        """Whether a process recorded with ``host_id``, ``boot`` and ``pidns`` can be looked up
        here by its pid (a row from before host ids were recorded counts by boot alone; one
        without a pid namespace cannot be)."""
        return (
            boot == self.boot_id
            and (host_id is None or host_id == self.host_id)
            and pidns is not None
            and pidns == self.pidns
        )

    def gone(self, pid: int | None, started: int | None) -> bool | None:
        """Whether the process ``pid`` recorded with start time ``started`` (seen by ``sees``)
        is gone: False while it runs, True when provably not, None when hz cannot tell (no
        start time recorded; its pid not found under a /proc that hides pids)."""
        if pid is None or started is None:
            return None
        found = self.start_time(pid)
        if found == started:
            return False
        if found is None and self.hides_pids:
            return None
        return True


def owner_verdict(
    host_id: str | None,
    boot: str | None,
    pidns: str | None,
    pid: int | None,
    started: int | None,
    view: HostView,
) -> bool | None:
    """Whether an owner recorded so is gone (True), lives (False), or only its lease can say
    (None): on this host, boot and pid namespace, by its process; of this host on an earlier
    boot, gone (no process outlives a reboot); else — another machine, another namespace,
    a process hidden from this one — by its lease."""
    if view.sees(host_id, boot, pidns):
        return view.gone(pid, started)
    if host_id is not None and host_id == view.host_id and boot is not None:
        return True if boot != view.boot_id else None
    return None
