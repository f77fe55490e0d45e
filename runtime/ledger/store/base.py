"""The ledger on one database: reading rows, the timeline, the database's clock, fencing.

Each write is one short transaction of the backend (``hz.runtime.ledger.backend``: SQLite or
PostgreSQL; the logic here is the same for both). A run's owner holds ``generation``: every
write it makes says which generation it holds (``WHERE generation = ?``, the row locked) and
fails with ``StaleOwner`` when someone else (a canceller, a reconciler, a newer owner) has moved
the run on since, so a stale owner can never write a terminal result over a newer one.

The statements that more than one concept needs are written here once: taking a run over
(``take``: a new generation, an owner, a lease) and a cancel intent (``request_cancel``).
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path

from hz.runtime.artifacts.models import Packet
from hz.runtime.ledger import host
from hz.runtime.ledger.backend import Connection, Db, Dispatcher
from hz.runtime.ledger.db import SqliteDb
from hz.runtime.ledger.rows import MAX_RESULT, OVERSIZE, RUN_COLUMNS, EventRow, RunRow
from hz.runtime.ledger.states import CANCEL_EVENT, STATES, RunState
from hz.runtime.ledger.store.errors import RunVanished, StaleOwner, UnknownRun, UnknownState
from hz.runtime.ledger.store.identity import LEASE_SECONDS, LeaseClock, Owner

#: A value for SQL's ``?``.
Param = str | int | float | bytes | None
#: How many of a job's last completed runs ``window_end`` looks at.
LOOK_BACK = 50


def run_select() -> str:
    """``SELECT`` of every column of ``runs`` (``RUN_COLUMNS``), a ``result_json`` longer than
    ``MAX_RESULT`` replaced by ``OVERSIZE`` and its length by the database itself: a planted
    one of gigabytes is measured there, never fetched, decoded or parsed (the same SQL on
    SQLite and PostgreSQL)."""
    bounded = (
        f"CASE WHEN length(result_json) > {int(MAX_RESULT)} "
        f"THEN '{OVERSIZE}' || length(result_json) ELSE result_json END AS result_json"
    )
    columns = (bounded if name == "result_json" else name for name in RUN_COLUMNS)
    return f"SELECT {', '.join(columns)} FROM runs"  # noqa: S608


def read_packet(row: RunRow) -> Packet | None:
    """The run's packet as stored; None when the row holds none or not one, or has a value
    that does not fit its column (edited by hand)."""
    from pydantic import ValidationError

    if row.malformed:
        return None
    try:
        return Packet.model_validate_json(row.packet_json)
    except ValidationError:
        return None


class LedgerBase:
    """The run ledger on one database (a SQLite file, or a PostgreSQL database with a
    ``dispatcher`` that hands queued runs to workers)."""

    def __init__(
        self,
        db: Db | Path,
        *,
        dispatcher: Dispatcher | None = None,
        lease_seconds: float = LEASE_SECONDS,
        poll_seconds: float | None = None,
    ) -> None:
        self.db: Db = SqliteDb(db) if isinstance(db, Path) else db
        self.dispatcher = dispatcher
        self.lease_seconds = lease_seconds
        #: ``[system.queue] poll_seconds``: how often an idle worker looks at the queue when
        #: nothing woke it; None: the backend's own (``IDLE_POLL``, ``FETCH_POLL``).
        self.poll_seconds = poll_seconds

    @property
    def connection(self) -> Connection:
        return self.db.connection

    def tx(self) -> AbstractContextManager[Connection]:
        return self.db.tx()

    def thread_done(self) -> None:
        """The calling thread is done with the ledger (see ``Db.thread_done``)."""
        self.db.thread_done()

    def close(self) -> None:
        self.db.close()

    # -- reading ---------------------------------------------------------------------------

    def get(self, run_id: str) -> RunRow:
        found = self.connection.execute(f"{run_select()} WHERE id = ?", (run_id,)).fetchone()
        if found is None:
            raise UnknownRun(f"no run {run_id} in the ledger at {self.db.where}")
        row = RunRow.read(found)
        if row.state not in STATES:
            raise UnknownState(
                f"run {run_id} is in the state {row.state[:64]!r}, which this hz does "
                "not know; it leaves the run alone",
                hint="the row was edited by hand or written by a newer hz; hz runs list shows "
                "it, fix the row or use that hz",
            )
        return row

    def locked(self, c: Connection, run_id: str) -> RunRow | None:
        """Inside a transaction: the run's row, locked until the transaction ends; None when
        there is no such run."""
        found = c.execute(
            f"{run_select()} WHERE id = ?{self.db.for_update}",
            (run_id,),
        ).fetchone()
        return None if found is None else RunRow.read(found)

    def held(self, c: Connection, run_id: str) -> RunRow:
        """Inside a transaction: the row of a run known to exist (fenced, or read just
        before), locked; ``RunVanished`` when it was deleted by hand meanwhile."""
        row = self.locked(c, run_id)
        if row is None:
            raise RunVanished(run_id)
        return row

    def events(self, run_id: str) -> list[EventRow]:
        return [
            EventRow.read(found)
            for found in self.connection.execute(
                "SELECT at, state, detail FROM events WHERE run_id = ? ORDER BY seq", (run_id,)
            ).fetchall()
        ]

    def window_ends(self, job_name: str, input_name: str) -> Iterator[tuple[str, str]]:
        """Where ``since-last-success`` may start for one input of a job: ``(run id, until)``
        of that input's window in each of the job's last completed runs whose packet records
        one, newest first (a run whose value was given by hand, or whose row is malformed, is
        passed over; at most ``LOOK_BACK`` runs are looked at). ``until`` is the text the row
        holds: the fetch judges it (a row is outside input), and reads no more than it needs."""
        found = self.connection.execute(
            f"{run_select()} WHERE job_name = ? AND state = ? "
            "ORDER BY ended_at DESC, created_at DESC LIMIT ?",
            (job_name, str(RunState.COMPLETED), LOOK_BACK),
        ).fetchall()
        for raw in found:
            row = RunRow.read(raw)
            packet = read_packet(row)
            source = None if packet is None else packet.sources.get(input_name)
            if source is not None and source.window is not None:
                yield row.id, source.window.until

    def select(self, where: str = "TRUE", params: tuple[Param, ...] = ()) -> list[RunRow]:
        """The runs ``where`` holds, oldest first. ``created_at`` orders them as the database
        compares its values (a malformed one sorts where SQL puts it); each row is checked
        (``RunRow.read``), none left out."""
        query = f"{run_select()} WHERE {where} ORDER BY created_at, id"
        return [RunRow.read(found) for found in self.connection.execute(query, params).fetchall()]

    def listed(
        self, states: tuple[str, ...] = (), since: float | None = None, *, limit: int | None = None
    ) -> tuple[list[RunRow], int]:
        """``hz runs list``: the newest ``limit`` runs (all without a limit) in ``states`` (all
        when empty) created since ``since`` (seconds since the epoch), newest first, and how
        many match in all (read just after: a run created between the two reads is counted,
        not listed)."""
        where: list[str] = ["TRUE"]
        params: list[Param] = []
        if states:
            where.append(f"state IN ({', '.join('?' * len(states))})")
            params += list(states)
        if since is not None:
            where.append("created_at >= ?")
            params.append(since)
        matching = " AND ".join(where)
        order = f"ORDER BY created_at DESC, {self.db.insert_order} DESC"
        # A limit past what a database's integer holds is no limit (1 << 62 rows are none).
        bound = "" if limit is None else f" LIMIT {min(max(limit, 0), 1 << 62)}"
        c = self.connection
        query = f"{run_select()} WHERE {matching} {order}{bound}"
        found = c.execute(query, tuple(params)).fetchall()
        counted = f"SELECT COUNT(*) AS n FROM runs WHERE {matching}"  # noqa: S608
        total = c.execute(counted, tuple(params)).fetchone()
        return [RunRow.read(row) for row in found], int(total["n"])

    def dispatched_since(self, since: float | None) -> list[RunRow]:
        """``hz runs cost``: the runs dispatched (that reserved a budget) created since
        ``since``, oldest first."""
        return self.select(
            "dispatched_at IS NOT NULL AND created_at >= ?", (since if since is not None else 0,)
        )

    # -- the database's clock --------------------------------------------------------------

    def now(self, c: Connection) -> float:
        """Inside a transaction: the database's time. A spend ceiling's day, a held run's
        next look and a run's ``dispatched_at`` are in it, as leases are: hosts whose clocks
        disagree count one day and wake held runs at one time."""
        return float(c.execute(f"SELECT {self.db.clock} AS now").fetchone()["now"])

    def clock(self) -> LeaseClock:
        """The database's clock: every host writes and judges leases by it, so a host whose
        own clock is ahead cannot see live owners' leases expired."""
        row = self.connection.execute(
            f"SELECT {self.db.clock} AS now, {self.db.started} AS started"
        ).fetchone()
        return LeaseClock(float(row["now"]), float(row["started"]), self.lease_seconds)

    def who(self) -> str:
        """Who acts on the ledger from this process, for the record of a cancel: the user and
        host of this process, and on PostgreSQL the database role (the server's word)."""
        import pwd

        uid = os.geteuid()
        try:
            user = pwd.getpwuid(uid).pw_name
        except KeyError:
            user = f"uid {uid}"
        role = self.connection.execute(f"SELECT {self.db.role} AS role").fetchone()["role"]
        where = f"user {user} on host {host.host_name()}"
        return where if role is None else f"{where}, database role {role}"

    # -- the statements several concepts share ---------------------------------------------

    @staticmethod
    def event(c: Connection, run_id: str, state: str, detail: str | None = None) -> None:
        c.execute(
            "INSERT INTO events (run_id, at, state, detail) VALUES (?, ?, ?, ?)",
            (run_id, time.time(), str(state), detail),
        )

    def take(self, c: Connection, run_id: str, owner: Owner, *, lease: float) -> RunRow:
        """Inside a transaction: ``owner`` owns the run at a new generation, with a lease of
        ``lease`` seconds by the database's clock (a claim, a reconciler's take-over)."""
        taken = c.execute(
            "UPDATE runs SET generation = generation + 1, owner = ?, owner_pid = ?, "  # noqa: S608
            "owner_start = ?, owner_boot = ?, owner_host = ?, owner_pidns = ?, "
            f"lease_until = {self.db.clock} + ? WHERE id = ? RETURNING *",
            (
                owner.name,
                owner.pid,
                owner.start,
                owner.boot,
                owner.host,
                owner.pidns,
                lease,
                run_id,
            ),
        ).fetchone()
        if taken is None:
            raise RunVanished(run_id)
        return RunRow.read(taken)

    def request_cancel(self, c: Connection, run_id: str, detail: str) -> None:
        """Inside a transaction: the cancel intent on record (its first moment kept), and in
        the run's timeline."""
        c.execute(
            "UPDATE runs SET cancel_requested_at = COALESCE(cancel_requested_at, ?) WHERE id = ?",
            (time.time(), run_id),
        )
        self.event(c, run_id, CANCEL_EVENT, detail)

    def _enqueue(
        self, c: Connection, run_id: str, queue: str, priority: int, not_before: float
    ) -> None:
        if self.dispatcher is None:
            return
        job_id = self.dispatcher.enqueue(
            c, run_id, queue=queue, priority=priority, not_before=not_before
        )
        c.execute("UPDATE runs SET job_id = ? WHERE id = ?", (job_id, run_id))

    @contextmanager
    def fenced(self, run_id: str, generation: int, *, sync: bool = False) -> Iterator[Connection]:
        """A transaction that raises ``StaleOwner`` unless ``generation`` still owns the run
        (its row locked to the end); ``sync``: on disk when committed (see ``db.durable``)."""
        with self.db.durable() if sync else self.tx() as c:
            row = c.execute(
                f"SELECT generation FROM runs WHERE id = ?{self.db.for_update}",  # noqa: S608
                (run_id,),
            ).fetchone()
            if row is None or row["generation"] != generation:
                raise StaleOwner(run_id)
            yield c
