"""Scheduled jobs in the ledger: paused or not, the instant their slots count from, and the
newest slot each fired (a run whose request key is ``schedule:JOB:SLOT``)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import UTC, datetime

from hz.runtime.artifacts.schedule import parse_slot, slot_name
from hz.runtime.ledger.rows import RunRow
from hz.runtime.ledger.states import LIVE, RunState, sql_list
from hz.runtime.ledger.store.base import LedgerBase, run_select

#: The request keys of a job's slots start so; a job name is a slug (no LIKE wildcards).
SLOT_PREFIX = "schedule:"
#: The request keys of followers' runs start so (``after:RUN:JOB``).
FOLLOWER_PREFIX = "after:"
#: How far (seconds) another worker's clock may be ahead of this one's: a fired slot, a
#: job's ``since`` or a run's end later than now by more is not trusted (a clock ahead, or a
#: planted row, would otherwise silence a schedule or pin a draft until that date).
CLOCK_ALLOWANCE = 300.0
#: The most rows looked at for a job's newest readable slot.
_SLOT_ROWS = 20
_AT_OR_BEFORE = (
    f"{run_select()} WHERE request_key LIKE ? AND request_key <= ? "
    "ORDER BY request_key DESC, created_at DESC LIMIT ?"
)
_AFTER = (
    f"{run_select()} WHERE request_key LIKE ? AND request_key > ? "
    "ORDER BY request_key DESC, created_at DESC LIMIT ?"
)


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

    def pull_since_back(self, job: str, now: float) -> bool:
        """Move ``job``'s ``since`` back to ``now`` when it is later than ``now`` by more
        than ``CLOCK_ALLOWANCE`` (first seen by a worker whose clock was ahead); True when
        it was moved."""
        with self.tx() as c:
            self.db.lock(c, f"schedule:{job}")
            found = c.execute("SELECT since FROM schedules WHERE job = ?", (job,)).fetchone()
            if found is None or float(found["since"]) <= now + CLOCK_ALLOWANCE:
                return False
            c.execute(
                "UPDATE schedules SET since = ?, changed_at = ? WHERE job = ?", (now, now, job)
            )
        return True

    def paused_jobs(self) -> set[str]:
        found = self.connection.execute("SELECT job FROM schedules WHERE paused = 1").fetchall()
        return {str(row["job"]) for row in found}

    def last_slot(self, job: str, not_after: float) -> tuple[float, RunRow] | None:
        """The newest slot of ``job`` at or before ``not_after`` (epoch seconds) that has a
        run, and that run (its newest attempt); None when none has. Slot names sort as their
        instants do; a key that names no slot is passed over."""
        bound = f"{SLOT_PREFIX}{job}:{_name(not_after)}"
        return self._slot(_AT_OR_BEFORE, bound, job)

    def slot_ahead(self, job: str, after: float) -> tuple[float, RunRow] | None:
        """The newest slot of ``job`` later than ``after`` that has a run: one fired by a
        worker whose clock is ahead (or planted), which ``last_slot`` does not count."""
        bound = f"{SLOT_PREFIX}{job}:{_name(after)}"
        return self._slot(_AFTER, bound, job)

    def _slot(self, query: str, bound: str, job: str) -> tuple[float, RunRow] | None:
        prefix = f"{SLOT_PREFIX}{job}:"
        found = self.connection.execute(query, (f"{prefix}%", bound, _SLOT_ROWS)).fetchall()
        for each in found:
            row = RunRow.read(each)
            key = row.request_key or ""
            slot = parse_slot(key[len(prefix) :]) if key.startswith(prefix) else None
            if slot is not None:
                return slot.timestamp(), row
        return None

    def live_followers(self) -> int:
        """How many followers' runs (request key ``after:…``) are queued or running: not yet
        ended, whichever job and worker queued them."""
        found = self.connection.execute(
            f"SELECT COUNT(*) AS n FROM runs WHERE state IN {sql_list(LIVE)} "  # noqa: S608
            "AND request_key LIKE ?",
            (f"{FOLLOWER_PREFIX}%",),
        ).fetchone()
        return int(found["n"])

    def completed_costs(self, job: str, limit: int = 200) -> tuple[list[float], int]:
        """What ``job``'s newest completed runs cost (US dollars; runs that say nothing are
        left out), at most ``limit`` of them, and how many recorded costs were passed over:
        a cost is a row's value, outside input, taken only as a finite number from 0 to
        ``MAX_COST`` (text, bytes, NaN, infinities and negatives are not)."""
        found = self.connection.execute(
            "SELECT cost_usd FROM runs WHERE job_name = ? AND state = ? "
            "AND cost_usd IS NOT NULL ORDER BY ended_at DESC LIMIT ?",
            (job, str(RunState.COMPLETED), limit),
        ).fetchall()
        costs = [_cost(row["cost_usd"]) for row in found]
        taken = [cost for cost in costs if cost is not None]
        return taken, len(costs) - len(taken)

    def newest_completed(
        self,
        job: str,
        limit: int = 50,
        *,
        ended_after: float | None = None,
        not_after: float | None = None,
    ) -> list[RunRow]:
        """``job``'s newest completed runs, newest first: with ``ended_after``, only runs that
        ended after it; with ``not_after``, none that ended after it (a row from a clock
        ahead, or planted, would otherwise be the newest until its date)."""
        found = self.connection.execute(
            f"{run_select()} WHERE job_name = ? AND state = ? "
            "AND COALESCE(ended_at, created_at) > ? AND COALESCE(ended_at, created_at) <= ? "
            "ORDER BY ended_at DESC, created_at DESC LIMIT ?",
            (
                job,
                str(RunState.COMPLETED),
                -1.0 if ended_after is None else ended_after,
                _LAST_SECOND if not_after is None else not_after,
                limit,
            ),
        ).fetchall()
        return [RunRow.read(row) for row in found]


#: The most one run's recorded cost is believed to be, in US dollars: a larger one is a
#: damaged or planted row (and would make a forecast infinite).
MAX_COST = 1e9


def _cost(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    cost = float(value)
    return cost if math.isfinite(cost) and 0 <= cost <= MAX_COST else None


#: The last second a slot name can hold (9999-12-31T23:59:59Z).
_LAST_SECOND = datetime.max.replace(microsecond=0, tzinfo=UTC).timestamp()


def _name(seconds: float) -> str:
    """The slot name of an instant, the end of the calendar for one past it."""
    return slot_name(datetime.fromtimestamp(max(0.0, min(seconds, _LAST_SECOND)), UTC))
