"""Who owns a run, and the database clock its lease is judged by."""

from __future__ import annotations

import os
import re
import secrets
import time
from dataclasses import dataclass

from hz.runtime.ledger import host

#: How long an owner's lease lasts without renewal (seconds); it renews every third of that.
#: ``[system.queue] lease_seconds`` sets another.
LEASE_SECONDS = 15.0
#: What a run id looks like (``new_run_id``); ids read from outside are checked against it.
RUN_ID = re.compile(r"^run_[0-9]{8}_[0-9a-f]{12}$")


def new_run_id() -> str:
    return f"run_{time.strftime('%Y%m%d', time.gmtime())}_{secrets.token_hex(6)}"


@dataclass(frozen=True, slots=True)
class LeaseClock:
    """The database's time, for judging leases (``Ledger.clock``)."""

    now: float
    #: When the database last started: leases that lapsed while it was down say nothing.
    started: float = 0.0
    #: A lease lapsed only once the database has been up this long (one lease).
    lease_seconds: float = 0.0

    def expired(self, lease_until: float | None) -> bool:
        return (
            lease_until is not None
            and lease_until < self.now
            and self.now - self.started >= self.lease_seconds
        )


@dataclass(frozen=True, slots=True)
class Owner:
    """The process that runs a job: recognisable after a crash by host, pid, start time and
    boot. Only on its own host (host id and boot id) can it be seen to be gone; elsewhere its
    lease says so."""

    name: str
    pid: int
    start: int | None
    boot: str
    host: str | None = None
    #: Its pid namespace (``host.pid_namespace``): its pid means something only there.
    pidns: str | None = None

    @classmethod
    def this_process(cls) -> Owner:
        pid = os.getpid()
        return cls(
            f"{host.host_name()}:{pid}",
            pid,
            host.start_time(pid),
            host.boot_id(),
            host.host_id(),
            host.pid_namespace(),
        )

    def is_gone(self) -> bool:
        return host.is_this_host(self.host, self.boot) and not host.is_same_process(
            self.pid, self.start, self.boot
        )
