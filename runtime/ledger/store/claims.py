"""Claiming queued runs: a batch's, a worker's, a dispatcher's job's; and a dispatcher's
stranded and leftover jobs."""

from __future__ import annotations

from dataclasses import dataclass

from hz.runtime.ledger.backend import Connection
from hz.runtime.ledger.rows import RunRow
from hz.runtime.ledger.states import LIVE, RunState, sql_list
from hz.runtime.ledger.store.base import Param, run_select
from hz.runtime.ledger.store.ceilings import Hold
from hz.runtime.ledger.store.holds import Holds
from hz.runtime.ledger.store.identity import Owner


@dataclass(frozen=True, slots=True)
class BatchProgress:
    """A batch's runs by phase, and what they reserved or spent."""

    done: int = 0
    running: int = 0
    queued: int = 0
    spent: float = 0.0


#: A queued run nobody owns yet (SQL).
UNOWNED = f"state = '{RunState.QUEUED}' AND owner IS NULL"
#: A queued run due later than this (seconds) is not waited for by a drain: a retry's backoff
#: is at most a minute, a held run's next look at most half a minute.
DUE_WITHIN = 3600.0
#: The columns a claim reads in SQL: a bad value in one of them keeps the row from ever being
#: claimed (``claim_next``).
_CLAIM_COLUMNS = ("id: ", "generation: ", "state: ", "owner: ", "not_before: ")


def awaited(row: RunRow, now: float) -> bool:
    """Whether ``hz worker --drain`` waits for the live ``row`` at the database's time ``now``.

    Not: a run held for a spend ceiling and not due for another look (the ceiling's next
    window), a queued run due more than ``DUE_WITHIN`` from now, a row no worker will ever
    take or settle — one whose values hz cannot read (an owner that is no text, a
    ``not_before`` that is no time, a generation that is no whole number: never claimed;
    reconciliation leaves such a row alone), except a queued one a claim does take, to fail
    it ``not_started`` with its columns named."""
    if row.malformed:
        claimable = row.state == RunState.QUEUED and not any(
            bad.startswith(_CLAIM_COLUMNS) for bad in row.bad
        )
        return claimable and row.owner is None and row.not_before <= now
    if row.state != RunState.QUEUED or row.owner is not None:
        return True
    if row.held_reason is not None and row.not_before > now:
        return False  # held until a ceiling's next window
    return row.not_before <= now + DUE_WITHIN


class Claims(Holds):
    def claim_owned(self, c: Connection, run_id: str, owner: Owner, why: str | None) -> int:
        """Inside a transaction: ``owner`` owns the run at a new generation and lease; the
        generation. ``why`` (claimed, adopted) goes to the timeline."""
        row = self.take(c, run_id, owner, lease=self.lease_seconds)
        if why:
            self.event(c, run_id, RunState.QUEUED, f"{why} by {owner.name}")
        return row.generation

    def claim_next(
        self,
        owner: Owner,
        *,
        batch: str | None = None,
        queues: tuple[str, ...] = (),
        hold: Hold | None = None,
    ) -> tuple[str, int] | None:
        """The next queued, unowned run whose time has come (of ``batch`` or ``queues`` when
        given; the highest priority first, then the oldest), now owned by ``owner``. With
        ``hold``, a run a spend ceiling leaves no room for is held instead (``hold_here``) and
        the next one is looked at."""
        where = f"{UNOWNED} AND not_before <= {self.db.clock}"
        params: tuple[Param, ...] = ()
        if batch is not None:
            where += " AND batch = ?"
            params += (batch,)
        if queues:
            where += f" AND queue IN ({', '.join('?' * len(queues))})"
            params += queues
        with self.tx() as c:
            rows = c.execute(
                f"{run_select()} WHERE {where} "
                f"ORDER BY priority DESC, not_before, created_at LIMIT ?{self.db.skip_locked}",
                # SQLite locks no rows: a few more, so that one unaddressable row (an id
                # that is no text) does not hide the rest.
                (*params, 1 if hold is None and self.db.skip_locked else 16),
            ).fetchall()
            for found in rows:
                row = RunRow.read(found)
                if not row.addressable:
                    continue  # an id that is no text: nothing can name it, it stays
                # A malformed run is claimed and failed by its owner (``run_owned``), named.
                if row.malformed or hold is None or self.hold_here(c, row, hold) is None:
                    return row.id, self.claim_owned(c, row.id, owner, "claimed")
            return None

    def claim(self, run_id: str, owner: Owner, *, worker: str | None = None) -> int | None:
        """Take ``run_id`` when it is queued and nobody owns it (a dispatcher's worker was
        handed it); its new generation, or None when it is not to be run (cancelled, adopted,
        already taken: the ledger decides, not the queue)."""
        with self.tx() as c:
            row = c.execute(
                f"UPDATE runs SET worker = ? WHERE id = ? AND {UNOWNED} RETURNING id",  # noqa: S608
                (worker, run_id),
            ).fetchone()
            if row is None:
                return None
            return self.claim_owned(c, run_id, owner, "claimed")

    def batch_live(self, batch: str) -> bool:
        """Whether a run of ``batch`` is still live."""
        row = self.connection.execute(
            f"SELECT 1 FROM runs WHERE batch = ? AND state IN {sql_list(LIVE)} LIMIT 1",  # noqa: S608
            (batch,),
        ).fetchone()
        return row is not None

    def batch_done(self, batch: str) -> bool:
        return not self.batch_live(batch)

    def batch_progress(self, batch: str) -> BatchProgress:
        """How far ``batch`` is: its runs done, running (from ``prepared`` on), queued, and
        what they reserved or spent."""
        counts = {"done": 0, "running": 0, "queued": 0}
        spent = 0.0
        for row in self.connection.execute(
            "SELECT state, COUNT(*) AS n, COALESCE(SUM(reserved_usd), 0) AS spent "
            "FROM runs WHERE batch = ? GROUP BY state",
            (batch,),
        ).fetchall():
            state = row["state"]
            phase = "queued" if state == RunState.QUEUED else "running" if state in LIVE else "done"
            counts[phase] += int(row["n"])
            spent += float(row["spent"])
        return BatchProgress(**counts, spent=spent)

    def batch_queued(self, batch: str) -> list[RunRow]:
        """A batch's runs still queued (a retry waiting for its time)."""
        return self.select("batch = ? AND state = ?", (batch, RunState.QUEUED))

    def runnable_now(self) -> bool:
        """Whether a drain still has a run to wait for (``awaited``): one a worker could take
        now or soon, or one that is running and will end."""
        rows, now = self._live()
        return any(awaited(row, now) for row in rows)

    def left_behind(self) -> int:
        """How many live runs a drain leaves in the ledger that no worker takes now, besides
        those held for a spend ceiling (said apart): values hz cannot read, or due more than
        ``DUE_WITHIN`` from now. 0 on PostgreSQL, whose drain is its dispatcher's."""
        if self.dispatcher is not None:
            return 0
        rows, now = self._live()
        return sum(
            1 for r in rows if not awaited(r, now) and (r.malformed or r.held_reason is None)
        )

    def _live(self) -> tuple[list[RunRow], float]:
        return self.select(f"state IN {sql_list(LIVE)}"), self.clock().now

    def activity(self, owner: Owner, queues: tuple[str, ...] = ()) -> tuple[int, int]:
        """How many live runs ``owner`` holds, and how many queued runs (of ``queues`` when
        given) nobody owns are due now: a worker with neither is idle."""
        due = f"{UNOWNED} AND not_before <= {self.db.clock}"
        params: tuple[Param, ...] = (owner.name,)
        if queues:
            due += f" AND queue IN ({', '.join('?' * len(queues))})"
            params += queues
        row = self.connection.execute(
            "SELECT COALESCE(SUM(CASE WHEN owner = ? THEN 1 ELSE 0 END), 0) AS held, "  # noqa: S608
            f"COALESCE(SUM(CASE WHEN {due} THEN 1 ELSE 0 END), 0) AS due FROM runs "
            f"WHERE state IN {sql_list(LIVE)}",
            params,
        ).fetchone()
        return int(row["held"]), int(row["due"])

    def redispatch_stranded(self) -> list[str]:
        """Queued runs nobody owns whose job ended without running them, handed to the
        dispatcher again (never a dispatched run: those are reconciled, never relaunched)."""
        if self.dispatcher is None:
            return []
        handed = []
        with self.tx() as c:
            for run_id in self.dispatcher.stranded(c):
                row = self.locked(c, run_id)
                if row is None or row.state != RunState.QUEUED or row.owner is not None:
                    continue
                if row.malformed:
                    continue
                self._enqueue(c, run_id, row.queue, row.priority, row.not_before)
                self.event(
                    c, run_id, RunState.QUEUED, "its job ended without running it: queued again"
                )
                handed.append(run_id)
        return handed

    def end_leftover_jobs(self) -> int:
        """The dispatcher's jobs left taken by a worker gone silent after their run ended
        (``Dispatcher.leftover``), ended; how many. A worker is silent after four leases
        (procrastinate's stalled-worker timeout of ``hz worker``)."""
        if self.dispatcher is None:
            return 0
        with self.tx() as c:
            return self.dispatcher.leftover(c, stalled_after=max(10.0, 4 * self.lease_seconds))
