"""A run's records from ``prepared`` to its end: the owner's fenced writes, the cancel intent,
and the settling of a run by another process (a canceller, a reconciler)."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hz.runtime.ledger import host
from hz.runtime.ledger.backend import Connection
from hz.runtime.ledger.paths import path_text
from hz.runtime.ledger.rows import RunRow
from hz.runtime.ledger.states import TERMINAL, RunState
from hz.runtime.ledger.store.ceilings import Ceilings
from hz.runtime.ledger.store.errors import StaleOwner
from hz.runtime.ledger.store.holds import Holds


@dataclass(frozen=True, slots=True)
class Ending:
    """A run's terminal record."""

    state: str
    failure_kind: str | None = None
    result: dict[str, Any] | None = None
    cost_usd: float | None = None
    #: Absolute in the ledger: hz runs show may run from anywhere.
    receipt: Path | None = None
    detail: str | None = None

    @classmethod
    def not_started(cls, why: str, *, cost_usd: float | None = None) -> Ending:
        """``failed`` (``not_started``): nothing of the run was spawned."""
        return cls(RunState.FAILED, "not_started", cost_usd=cost_usd, detail=f"not started: {why}")


class NotTerminal(ValueError):
    """``finish`` was asked to end a run in a live state: a bug in hz, never a user's."""


class Transitions(Holds):
    # -- while the agent runs --------------------------------------------------------------

    def renew(self, run_id: str, generation: int) -> bool:
        """Extend the lease; True when a cancel was requested."""
        with self.fenced(run_id, generation) as c:
            row = c.execute(
                f"UPDATE runs SET lease_until = {self.db.clock} + ? WHERE id = ? "  # noqa: S608
                "RETURNING cancel_requested_at",
                (self.lease_seconds, run_id),
            ).fetchone()
            return row["cancel_requested_at"] is not None

    def cancel_requested(self, run_id: str) -> bool:
        row = self.connection.execute(
            "SELECT cancel_requested_at FROM runs WHERE id = ?", (run_id,)
        ).fetchone()
        return row is not None and row["cancel_requested_at"] is not None

    def set_observed(self, run_id: str, generation: int, observed: dict[str, Any]) -> None:
        with self.fenced(run_id, generation) as c:
            c.execute(
                "UPDATE runs SET observed_json = ? WHERE id = ?", (json.dumps(observed), run_id)
            )

    def cancel_intent(self, run_id: str, generation: int, detail: str) -> None:
        """The owner's own cancel intent, fenced (a signal to it, a stopping worker)."""
        with self.fenced(run_id, generation) as c:
            self.request_cancel(c, run_id, detail)

    # -- the owner's transitions -----------------------------------------------------------

    def prepare(
        self,
        run_id: str,
        generation: int,
        runner: str,
        settings_digest: str,
        table: str | None = None,
    ) -> None:
        """Commit ``prepared`` with the runner and its settings' digest; the timeline names
        the runner and the jobs table that bound it, if one did (``[jobs."review-*"]``)."""
        by = "" if table is None else f", bound by {table}"
        with self.fenced(run_id, generation) as c:
            c.execute(
                "UPDATE runs SET state = ?, runner = ?, settings_digest = ? WHERE id = ?",
                (RunState.PREPARED, runner, settings_digest, run_id),
            )
            self.event(c, run_id, RunState.PREPARED, f"runner {runner}{by}")

    def dispatch(self, run_id: str, generation: int, ceilings: Ceilings) -> str | None:
        """Commit ``dispatching`` and reserve the run's budget, before anything is spawned;
        the reason instead when the reservation would cross a spend ceiling."""
        with self.fenced(run_id, generation, sync=True) as c:
            row = self.held(c, run_id)
            if row.cancel_requested_at is not None:
                raise StaleOwner(run_id)  # cancelled before dispatch: never spawn
            if ceilings.active:
                self.db.lock(c, "ceilings")  # one reservation at a time across all workers
            now = self.now(c)
            over = ceilings.refusal(c, row.runner, row.max_usd, now=now)
            if over is not None:
                return over
            c.execute(
                "UPDATE runs SET state = ?, reserved_usd = max_usd, held_reason = NULL, "
                "held_since = NULL, dispatched_at = ?, host = ?, host_id = ?, boot_id = ?, "
                "pidns = ? WHERE id = ?",
                (
                    RunState.DISPATCHING,
                    now,
                    host.host_name(),
                    host.host_id(),
                    host.boot_id(),
                    host.pid_namespace(),
                    run_id,
                ),
            )
            self.event(c, run_id, RunState.DISPATCHING, f"reserved ${row.max_usd:.2f}")
            return None

    def spawned(self, run_id: str, generation: int, pid: int, pgid: int) -> bool:
        """Commit ``running``; True when a cancel was requested meanwhile."""
        with self.fenced(run_id, generation) as c:
            row = c.execute(
                "UPDATE runs SET state = ?, pid = ?, pgid = ?, proc_start = ? WHERE id = ? "
                "RETURNING cancel_requested_at",
                (RunState.RUNNING, pid, pgid, host.start_time(pid), run_id),
            ).fetchone()
            self.event(c, run_id, RunState.RUNNING, f"pid {pid}")
            return row["cancel_requested_at"] is not None

    def private_dir(self, run_id: str, generation: int, path: Path) -> None:
        with self.fenced(run_id, generation) as c:
            c.execute("UPDATE runs SET private_dir = ? WHERE id = ?", (path_text(path), run_id))

    def finish(self, run_id: str, generation: int | None, ending: Ending) -> None:
        """The terminal record. The reservation becomes the actual cost when one is known;
        ``uncertain`` runs and runs without a cost keep the whole reservation.
        ``generation=None`` is for writers that already hold the run (see ``fenced``)."""
        state, failure_kind, result = ending.state, ending.failure_kind, ending.result
        cost_usd, receipt, detail = ending.cost_usd, ending.receipt, ending.detail
        if state not in TERMINAL:
            raise NotTerminal(f"{state!r} is not a state a run ends in")

        def write(c: Connection) -> None:
            keep = state == RunState.UNCERTAIN or cost_usd is None
            before = self.locked(c, run_id)
            c.execute(
                "UPDATE runs SET state = ?, failure_kind = ?, result_json = ?, cost_usd = ?, "
                "receipt_path = ?, ended_at = ?, lease_until = NULL, "
                "reserved_usd = CASE WHEN dispatched_at IS NULL THEN 0 WHEN ? THEN reserved_usd "
                "ELSE ? END WHERE id = ?",
                (
                    str(state),
                    failure_kind,
                    None if result is None else json.dumps(result, ensure_ascii=False),
                    cost_usd,
                    None if receipt is None else path_text(receipt),
                    time.time(),
                    keep,
                    cost_usd,
                    run_id,
                ),
            )
            label = state if failure_kind is None else f"{state} ({failure_kind})"
            self.event(c, run_id, state, detail or label)
            released = before is not None and before.dispatched_at is not None and not keep
            if released and before is not None and before.reserved_usd > (cost_usd or 0) + 1e-9:
                self.wake_held(c)

        if generation is None:
            with self.tx() as c:
                write(c)
        else:
            with self.fenced(run_id, generation) as c:
                write(c)

    # -- settled by another process --------------------------------------------------------

    def take_over(self, c: Connection, run_id: str) -> None:
        """Inside a transaction: fence out whoever owned the run (a canceller or reconciler
        is about to settle it)."""
        c.execute("UPDATE runs SET generation = generation + 1 WHERE id = ?", (run_id,))

    def cancel_unstarted(self, c: Connection, row: RunRow, detail: str) -> RunRow:
        """Inside a transaction holding ``row`` (queued or prepared): ``cancelled`` at once,
        its owner fenced out (nothing ran); the row as it now is."""
        now = time.time()
        settled = c.execute(
            "UPDATE runs SET generation = generation + 1, state = ?, failure_kind = 'aborted', "
            "cancel_requested_at = ?, ended_at = ?, lease_until = NULL WHERE id = ? RETURNING *",
            (RunState.CANCELLED, now, now, row.id),
        ).fetchone()
        self.event(c, row.id, RunState.CANCELLED, detail)
        return RunRow.read(settled)

    def fail_unstarted(self, c: Connection, run_id: str, detail: str) -> None:
        """Inside a fenced transaction: ``failed`` (``not_started``), its reservation freed;
        the owner vanished before ``dispatching``."""
        c.execute(
            "UPDATE runs SET state = ?, failure_kind = 'not_started', ended_at = ?, "
            "lease_until = NULL, reserved_usd = 0 WHERE id = ?",
            (RunState.FAILED, time.time(), run_id),
        )
        self.event(c, run_id, RunState.FAILED, f"not started: {detail}")

    def orphans_here(self, host_id: str, boot_id: str) -> list[RunRow]:
        """Runs another host settled ``uncertain`` whose process group was on this host and
        boot and that no sweep has looked at yet."""
        return self.select(
            "state = ? AND host_id = ? AND boot_id = ? AND pgid IS NOT NULL AND swept_at IS NULL",
            (RunState.UNCERTAIN, host_id, boot_id),
        )

    def mark_swept(self, c: Connection, run_id: str, *, only_once: bool) -> bool:
        """Inside a transaction: the run's orphans were looked at (killed); False when
        ``only_once`` and another sweep marked it first."""
        once = " AND swept_at IS NULL" if only_once else ""
        marked = c.execute(
            f"UPDATE runs SET swept_at = ? WHERE id = ?{once} RETURNING id",  # noqa: S608
            (time.time(), run_id),
        ).fetchone()
        return marked is not None

    def cancel_dispatch(self, row: RunRow) -> None:
        """After a cancel intent is committed: the dispatcher's side of it (its job out of
        the queue, or the worker running it asked to abort)."""
        if self.dispatcher is not None and row.job_id is not None:
            self.dispatcher.cancel(self.db, row.job_id)

    def abandon(self, c: Connection, row: RunRow) -> None:
        """Inside the transaction that settled the run here (not by its worker): its job,
        when it has one, ends without a retry."""
        if self.dispatcher is not None and row.job_id is not None:
            self.dispatcher.abandon(c, row.job_id)
