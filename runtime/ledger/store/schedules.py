"""Scheduled jobs in the ledger: paused or not, the instant their slots count from, and the
newest slot each fired (a run whose request key is ``schedule:JOB:SLOT``)."""

from __future__ import annotations

from dataclasses import dataclass

from hz.runtime.artifacts.schedule import parse_slot
from hz.runtime.ledger.rows import RunRow
from hz.runtime.ledger.states import RunState
from hz.runtime.ledger.store.base import LedgerBase

#: The request keys of a job's slots start so; a job name is a slug (no LIKE wildcards).
SLOT_PREFIX = "schedule:"


@dataclass(frozen=True, slots=True)
class ScheduleState:
    """One job's row: paused or not, and the instant (epoch seconds) its slots count from."""

    job: str
    paused: bool
    since: float


class Schedules(LedgerBase):
    def schedule_state(self, job: str, now: float) -> ScheduleState:
        """The job's row, made when first asked (its slots count from ``now``)."""
        found = self.connection.execute(
            "SELECT job, paused, since FROM schedules WHERE job = ?", (job,)
        ).fetchone()
        if found is not None:
            return ScheduleState(str(found["job"]), bool(found["paused"]), float(found["since"]))
        with self.tx() as c:
            self.db.lock(c, f"schedule:{job}")
            found = c.execute(
                "SELECT job, paused, since FROM schedules WHERE job = ?", (job,)
            ).fetchone()
            if found is None:
                c.execute(
                    "INSERT INTO schedules (job, paused, since, changed_at) VALUES (?, 0, ?, ?)",
                    (job, now, now),
                )
                return ScheduleState(job, False, now)
        return ScheduleState(str(found["job"]), bool(found["paused"]), float(found["since"]))

    def set_paused(self, job: str, paused: bool, now: float) -> bool:
        """Pause or resume ``job``; a resumed job's slots count from ``now`` (the slots it
        missed while paused are not caught up). False when it already was so."""
        before = self.schedule_state(job, now)
        if before.paused == paused:
            return False
        with self.tx() as c:
            self.db.lock(c, f"schedule:{job}")
            if paused:
                c.execute(
                    "UPDATE schedules SET paused = 1, changed_at = ? WHERE job = ?", (now, job)
                )
            else:
                c.execute(
                    "UPDATE schedules SET paused = 0, since = ?, changed_at = ? WHERE job = ?",
                    (now, now, job),
                )
        return True

    def paused_jobs(self) -> set[str]:
        found = self.connection.execute("SELECT job FROM schedules WHERE paused = 1").fetchall()
        return {str(row["job"]) for row in found}

    def last_slot(self, job: str) -> tuple[float, RunRow] | None:
        """The newest slot of ``job`` that has a run (epoch seconds) and that run (its newest
        attempt); None when none has. Slot names sort as their instants do."""
        found = self.connection.execute(
            "SELECT * FROM runs WHERE request_key LIKE ? "
            "ORDER BY request_key DESC, created_at DESC LIMIT 1",
            (f"{SLOT_PREFIX}{job}:%",),
        ).fetchone()
        if found is None:
            return None
        row = RunRow.read(found)
        prefix = f"{SLOT_PREFIX}{job}:"
        key = row.request_key or ""
        slot = parse_slot(key[len(prefix) :]) if key.startswith(prefix) else None
        return None if slot is None else (slot.timestamp(), row)

    def completed_costs(self, job: str, limit: int = 200) -> list[float]:
        """What ``job``'s newest completed runs cost (US dollars; runs that say nothing are
        left out), at most ``limit`` of them."""
        found = self.connection.execute(
            "SELECT cost_usd FROM runs WHERE job_name = ? AND state = ? "
            "AND cost_usd IS NOT NULL ORDER BY ended_at DESC LIMIT ?",
            (job, str(RunState.COMPLETED), limit),
        ).fetchall()
        return [float(row["cost_usd"]) for row in found]

    def newest_completed(self, job: str, limit: int = 50) -> list[RunRow]:
        """``job``'s newest completed runs, newest first."""
        found = self.connection.execute(
            "SELECT * FROM runs WHERE job_name = ? AND state = ? "
            "ORDER BY ended_at DESC, created_at DESC LIMIT ?",
            (job, str(RunState.COMPLETED), limit),
        ).fetchall()
        return [RunRow.read(row) for row in found]
