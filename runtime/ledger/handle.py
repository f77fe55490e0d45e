"""The fenced run handle: one run this process owns at one generation.

Every record the owner writes goes through it, fenced by the generation (``StaleOwner`` when
another process moved the run on) and, where a run is at stake, tried again while the database
cannot take it now (``LedgerUnavailable``: a restart, a cut link, a full disk, a lock held too
long) for up to ``COMMIT_PATIENCE`` seconds: a session that ended is worth its result, and
fencing makes a late write safe. Any other ``LedgerError`` (a damaged ledger) is raised at
once. The records the watcher writes while the agent runs (``spawned``, ``private_dir``,
``renew``) are tried once: the watcher tries again at its next tick.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from hz.runtime.ledger.db import LedgerUnavailable
from hz.runtime.ledger.rows import RunRow
from hz.runtime.ledger.store import Ceilings, Ending, Hold, Ledger
from hz.runtime.process.clock import SYSTEM, Clock

#: How long a finished session's owner keeps trying to commit its result to an unreachable
#: database before giving up (the run is then judged by its lease: uncertain).
COMMIT_PATIENCE = 60.0
#: The longest wait between two tries.
_MAX_DELAY = 2.0

T = TypeVar("T")


def patiently(call: Callable[[], T], clock: Clock = SYSTEM, patience: float | None = None) -> T:
    """``call`` tried again while the database cannot take it now (``LedgerUnavailable``), for
    up to ``patience`` seconds (None: ``COMMIT_PATIENCE``), waiting on ``clock``."""
    patience = COMMIT_PATIENCE if patience is None else patience
    delay, deadline = 0.1, clock.monotonic() + patience
    while True:
        try:
            return call()
        except LedgerUnavailable:
            if clock.monotonic() > deadline:
                raise
            clock.sleep(delay)
            delay = min(delay * 2, _MAX_DELAY)


@dataclass(slots=True)
class OwnedRun:
    """One run this process owns at ``generation``, its waits on ``clock``; ``patience`` None:
    ``COMMIT_PATIENCE`` as it is when a write is tried."""

    ledger: Ledger
    run_id: str
    generation: int
    clock: Clock = SYSTEM
    patience: float | None = None

    def patiently(self, write: Callable[[], T]) -> T:
        """``write`` tried again while the database cannot take it now, for up to the
        patience (see the module docstring)."""
        return patiently(write, self.clock, self.patience)

    # -- before the agent starts (retried) -------------------------------------------------

    def row(self) -> RunRow:
        return self.patiently(lambda: self.ledger.get(self.run_id))

    def prepare(self, runner: str, settings_digest: str, table: str | None = None) -> None:
        self.patiently(
            lambda: self.ledger.prepare(
                self.run_id, self.generation, runner, settings_digest, table
            )
        )

    def dispatch(self, ceilings: Ceilings) -> str | None:
        """``dispatching`` and the reservation; why not instead (a spend ceiling)."""
        return self.patiently(lambda: self.ledger.dispatch(self.run_id, self.generation, ceilings))

    def release(self, hold: Hold) -> float:
        """Back to the queue (a ceiling in the way); until when it is held."""
        return self.patiently(lambda: self.ledger.release(self.run_id, self.generation, hold))

    def cancel_requested(self) -> bool:
        return self.patiently(lambda: self.ledger.cancel_requested(self.run_id))

    # -- while the agent runs (tried once: the watcher tries again) ------------------------

    def spawned(self, pid: int, pgid: int) -> bool:
        """``running``; True when a cancel was requested meanwhile."""
        return self.ledger.spawned(self.run_id, self.generation, pid, pgid)

    def private_dir(self, path: Path) -> None:
        self.ledger.private_dir(self.run_id, self.generation, path)

    def renew(self) -> bool:
        """The lease extended; True when a cancel was requested."""
        return self.ledger.renew(self.run_id, self.generation)

    def observed(self, observed: dict[str, Any]) -> None:
        self.ledger.set_observed(self.run_id, self.generation, observed)

    def cancel_intent(self, detail: str) -> None:
        self.ledger.cancel_intent(self.run_id, self.generation, detail)

    # -- the end (retried) -----------------------------------------------------------------

    def finish(self, ending: Ending) -> None:
        self.patiently(lambda: self.ledger.finish(self.run_id, self.generation, ending))
