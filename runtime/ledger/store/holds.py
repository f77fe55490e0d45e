"""Holding a queued run that a spend ceiling leaves no room for, and waking held runs."""

from __future__ import annotations

from hz.runtime.ledger.backend import Connection
from hz.runtime.ledger.rows import RunRow
from hz.runtime.ledger.states import RunState
from hz.runtime.ledger.store.base import LedgerBase
from hz.runtime.ledger.store.ceilings import Hold, hold_delay

#: A queued run nobody owns and a ceiling holds (SQL).
HELD = f"state = '{RunState.QUEUED}' AND owner IS NULL AND held_reason IS NOT NULL"


class Holds(LedgerBase):
    def hold(self, run_id: str, hold: Hold, *, job_id: int | None = None) -> float | None:
        """Before a queued run is claimed: when a spend ceiling leaves it no room today, hold
        it (``hold_here``) and say until when; None when it may be claimed (or is not for
        this process to hold: not queued, owned, over a ceiling on its own).

        On a dispatcher, the job ``job_id`` that looked is the run's job: in the same
        transaction the run gets a new job due at the next look, whose id the row records
        (so a cancel reaches it, and one job per queued run is waiting); the looking job
        then ends as any job that ran nothing."""
        if not hold.ceilings.active:
            return None
        with self.tx() as c:
            row = self.locked(c, run_id)
            if row is None or row.state != RunState.QUEUED or row.owner is not None:
                return None
            if row.malformed:
                return None
            until = self.hold_here(c, row, hold)
            if until is not None and job_id is not None and row.job_id == job_id:
                self._enqueue(c, run_id, row.queue, row.priority, until)
            return until

    def hold_here(self, c: Connection, row: RunRow, hold: Hold) -> float | None:
        """Inside a transaction holding ``row`` (queued, unowned): the time it is held until
        when its reservation would cross a ceiling, else None. Nothing is claimed, prepared
        or handed to a queue; the timeline says once which ceiling holds the run."""
        runner = hold.runner_of(row.job_name)
        if not hold.ceilings.active or hold.ceilings.alone(runner, row.max_usd):
            return None  # a run over a ceiling on its own is claimed, and failed
        now = self.now(c)
        crossed = hold.ceilings.crossed(c, runner, row.max_usd, now=now)
        if crossed is None:
            return None
        label, why = crossed
        same = row.held_reason == label and row.held_since is not None
        since = row.held_since if same and row.held_since is not None else now
        until = now + hold_delay(now - since, now, hold.ceilings.hold_wait)
        c.execute(
            "UPDATE runs SET not_before = ?, held_reason = ?, held_since = ? WHERE id = ?",
            (until, label, since, row.id),
        )
        if not same:
            self.event(c, row.id, RunState.QUEUED, f"waiting: {why}")
        return until

    def release(self, run_id: str, generation: int, hold: Hold) -> float:
        """Hand an owned run back to the queue: a ceiling was in the way when it was to be
        dispatched. Held as ``hold_here`` holds (until the time returned), or at once ready
        again when the room came back meanwhile. On a dispatcher, the run gets a new job due
        then, in the same transaction (the job that took it ends: ``hold``)."""
        with self.fenced(run_id, generation) as c:
            c.execute(
                "UPDATE runs SET state = ?, owner = NULL, owner_pid = NULL, owner_start = NULL, "
                "owner_boot = NULL, owner_host = NULL, owner_pidns = NULL, lease_until = NULL "
                "WHERE id = ?",
                (RunState.QUEUED, run_id),
            )
            row = self.held(c, run_id)
            until = self.hold_here(c, row, hold)
            if until is None:
                until = self.now(c)
                c.execute("UPDATE runs SET not_before = ? WHERE id = ?", (until, run_id))
            if row.batch is None:  # a batch's own process looks again, not a worker
                self._enqueue(c, run_id, row.queue, row.priority, until)
            return until

    def wake_held(self, c: Connection) -> None:
        """A reservation was released: every held run is looked at again now."""
        now = self.now(c)
        c.execute(
            f"UPDATE runs SET not_before = ? WHERE {HELD} AND not_before > ?",  # noqa: S608
            (now, now),
        )
        if self.dispatcher is not None:
            self.dispatcher.wake(c)

    def held_runs(self) -> list[RunRow]:
        """The runs a spend ceiling holds in the queue."""
        return self.select(HELD)
