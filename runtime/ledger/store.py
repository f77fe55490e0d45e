"""The ledger's records and every write to them.

Each write is one short transaction of the backend (``hz.runtime.ledger.backend``: SQLite or
PostgreSQL; the logic here is the same for both). A run's owner holds ``generation``: every
write it makes says which generation it holds (``WHERE generation = ?``, the row locked) and
fails with ``StaleOwner`` when someone else (a canceller, a reconciler, a newer owner) has moved
the run on since, so a stale owner can never write a terminal result over a newer one.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hz.runtime.artifacts.errors import HzError
from hz.runtime.artifacts.models import Packet
from hz.runtime.ledger import host
from hz.runtime.ledger.backend import Connection, Db, Dispatcher
from hz.runtime.ledger.db import SqliteDb
from hz.runtime.ledger.paths import path_text
from hz.runtime.ledger.rows import COPIED, EventRow, RunRow

LIVE = ("queued", "prepared", "dispatching", "running")
TERMINAL = ("completed", "failed", "timeout", "budget", "cancelled", "uncertain")
STATES = LIVE + TERMINAL
#: How long an owner's lease lasts without renewal (seconds); it renews every third of that.
#: ``[system.queue] lease_seconds`` sets another.
LEASE_SECONDS = 15.0
DEFAULT_QUEUE = "default"
#: A run held for a spend ceiling is looked at again after a wait that grows with how long it
#: has been held (half of it), from ``HOLD_FIRST`` up to ``HOLD_MAX`` seconds (``[system.budget]
#: hold_wait_min_seconds`` and ``hold_wait_max_seconds`` set others), and no later than the next
#: UTC day; a run that ends below its reservation wakes the held runs at once.
HOLD_FIRST, HOLD_MAX = 1.0, 30.0
#: What a run id looks like (``new_run_id``); ids read from outside are checked against it.
RUN_ID = re.compile(r"^run_[0-9]{8}_[0-9a-f]{12}$")


@dataclass(frozen=True, slots=True)
class Clock:
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


class StaleOwner(Exception):
    """This process no longer owns the run: another moved it on (cancel, reconcile)."""


class KeyHeld(HzError):
    """A run with this request key exists; nothing was started."""


class KeyReused(KeyHeld):
    """The request key's run is of another request (``Ledger.create``); nothing was started."""


class UnknownRun(HzError):
    pass


class UnknownState(HzError):
    """A run's row says a state this hz does not know (edited by hand, or a newer hz)."""


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

    @classmethod
    def this_process(cls) -> Owner:
        pid = os.getpid()
        return cls(
            f"{host.host_name()}:{pid}", pid, host.start_time(pid), host.boot_id(), host.host_id()
        )

    def is_gone(self) -> bool:
        return host.is_this_host(self.host, self.boot) and not host.is_same_process(
            self.pid, self.start, self.boot
        )


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


def new_run_id() -> str:
    return f"run_{time.strftime('%Y%m%d', time.gmtime())}_{secrets.token_hex(6)}"


class Ledger:
    """The run ledger on one database (a SQLite file, or a PostgreSQL database with a
    ``dispatcher`` that hands queued runs to workers)."""

    def __init__(
        self,
        db: Db | Path,
        *,
        dispatcher: Dispatcher | None = None,
        lease_seconds: float = LEASE_SECONDS,
    ) -> None:
        self.db: Db = SqliteDb(db) if isinstance(db, Path) else db
        self.dispatcher = dispatcher
        self.lease_seconds = lease_seconds

    @property
    def connection(self) -> Connection:
        return self.db.connection

    def tx(self) -> Any:
        return self.db.tx()

    def thread_done(self) -> None:
        """The calling thread is done with the ledger (see ``Db.thread_done``)."""
        self.db.thread_done()

    def close(self) -> None:
        self.db.close()

    # -- reading ---------------------------------------------------------------------------

    def get(self, run_id: str) -> RunRow:
        found = self.connection.execute("SELECT * FROM runs WHERE id = ?", (run_id,)).fetchone()
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
            f"SELECT * FROM runs WHERE id = ?{self.db.for_update}",  # noqa: S608
            (run_id,),
        ).fetchone()
        return None if found is None else RunRow.read(found)

    def events(self, run_id: str) -> list[EventRow]:
        return [
            EventRow.read(found)
            for found in self.connection.execute(
                "SELECT at, state, detail FROM events WHERE run_id = ? ORDER BY seq", (run_id,)
            ).fetchall()
        ]

    def select(self, where: str = "TRUE", params: tuple[Any, ...] = ()) -> list[RunRow]:
        """The runs ``where`` holds, oldest first. ``created_at`` orders them as the database
        compares its values (a malformed one sorts where SQL puts it); each row is checked
        (``RunRow.read``), none left out."""
        query = f"SELECT * FROM runs WHERE {where} ORDER BY created_at, id"  # noqa: S608
        return [RunRow.read(found) for found in self.connection.execute(query, params).fetchall()]

    # -- writing ---------------------------------------------------------------------------

    @staticmethod
    def event(c: Connection, run_id: str, state: str, detail: str | None = None) -> None:
        c.execute(
            "INSERT INTO events (run_id, at, state, detail) VALUES (?, ?, ?, ?)",
            (run_id, time.time(), state, detail),
        )

    def create(
        self,
        packet: Packet,
        *,
        key: str,
        workdir: Path,
        receipt_dir: Path | None,
        force_new: bool = False,
        adopt: Owner | None = None,
        retry_of: str | None = None,
        attempt: int = 1,
        not_before: float = 0.0,
        batch: str | None = None,
        queue: str = DEFAULT_QUEUE,
        priority: int = 0,
    ) -> tuple[str, int]:
        """A new queued run, or with ``adopt`` an unowned queued run of the same key taken over
        (a retry waiting for its turn): ``(run id, generation)``; ``adopt`` owns the result.
        A run nobody adopts and outside a batch goes to the dispatcher (when there is one) in
        the same transaction.

        ``KeyHeld`` when the key already has a run and ``force_new`` is false; ``KeyReused``
        when that run is of another request (another job, input values, prompt, working
        directory or receipt directory), ``force_new`` or not: one key names one request."""
        # Compared as the paths' own text (as ``RunRow`` reads them), stored as ``path_text``.
        workdir_text = str(workdir.resolve())
        receipt_text = None if receipt_dir is None else str(receipt_dir.resolve())
        with self.tx() as c:
            self.db.lock(c, f"request_key:{key}")
            found = c.execute(
                "SELECT * FROM runs WHERE request_key = ? "  # noqa: S608
                f"ORDER BY created_at DESC, {self.db.insert_order} DESC LIMIT 1"
                f"{self.db.for_update}",
                (key,),
            ).fetchone()
            if found is not None:
                held = RunRow.read(found)
                state = held.state + (f" ({held.failure_kind})" if held.failure_kind else "")
                differs = _differences(held, packet, workdir_text, receipt_text)
                if differs:
                    listed = ", ".join(differs[:-1]) + (" and " if len(differs) > 1 else "")
                    raise KeyReused(
                        f"run {held.id} ({state}) holds this request key for another "
                        f"request; what differs: {listed}{differs[-1]}; nothing was started",
                        hint="a request key names one request: give this one a key of its own, "
                        f"or leave --request-key out to start a new run (hz runs show "
                        f"{held.id} shows the other)",
                    )
                if not force_new:
                    adoptable = held.state == "queued" and held.owner is None and held.addressable
                    if adopt is not None and adoptable:
                        return held.id, self._claim(c, held.id, adopt, "adopted")
                    raise KeyHeld(
                        f"run {held.id} ({state}) already holds this request key; "
                        "nothing was started",
                        hint=f"see hz runs show {held.id}; --force-new runs the request "
                        "again under this key, another key (or none) starts a new run",
                    )
            template = {
                "request_key": key,
                "batch": batch,
                "job_name": packet.job.name,
                "job_digest": packet.job_digest,
                "inputs_sha256": packet.inputs_sha256,
                "workdir": path_text(workdir_text),
                "receipt_dir": None if receipt_text is None else path_text(receipt_text),
                "packet_json": packet.model_dump_json(),
                "max_usd": packet.job.budget.max_usd,
                "queue": queue,
                "priority": priority,
            }
            run_id = self.insert_run(
                c,
                template,
                attempt=attempt,
                retry_of=retry_of,
                not_before=not_before,
                dispatch=adopt is None,
            )
            generation = 0 if adopt is None else self._claim(c, run_id, adopt, None)
            return run_id, generation

    def insert_run(
        self,
        c: Connection,
        template: Any,
        *,
        attempt: int = 1,
        retry_of: str | None = None,
        not_before: float = 0.0,
        dispatch: bool = True,
    ) -> str:
        """Inside a transaction: a new queued run with ``template``'s request (a row or a
        dict), handed to the dispatcher unless it belongs to a batch (the batch's own process
        runs it) or ``dispatch`` is false (its creator owns it at once)."""
        if isinstance(template, RunRow):
            template = template.request()
        run_id = new_run_id()
        values = [template[name] for name in COPIED]
        c.execute(
            f"INSERT INTO runs ({', '.join(COPIED)}, id, state, attempt, retry_of, "  # noqa: S608
            f"not_before, created_at) VALUES ({', '.join('?' * len(COPIED))}, ?, 'queued', "
            "?, ?, ?, ?)",
            (*values, run_id, attempt, retry_of, not_before, time.time()),
        )
        detail = f"retry of {retry_of} (attempt {attempt})" if retry_of else None
        self.event(c, run_id, "queued", detail)
        if dispatch and template["batch"] is None:
            self._enqueue(c, run_id, template["queue"], template["priority"], not_before)
        return run_id

    def _enqueue(
        self, c: Connection, run_id: str, queue: str, priority: int, not_before: float
    ) -> None:
        if self.dispatcher is None:
            return
        job_id = self.dispatcher.enqueue(
            c, run_id, queue=queue, priority=priority, not_before=not_before
        )
        c.execute("UPDATE runs SET job_id = ? WHERE id = ?", (job_id, run_id))

    def _claim(self, c: Connection, run_id: str, owner: Owner, why: str | None) -> int:
        row = c.execute(
            "UPDATE runs SET generation = generation + 1, owner = ?, owner_pid = ?, "  # noqa: S608
            "owner_start = ?, owner_boot = ?, owner_host = ?, "
            f"lease_until = {self.db.clock} + ? WHERE id = ? RETURNING generation",
            (
                owner.name,
                owner.pid,
                owner.start,
                owner.boot,
                owner.host,
                self.lease_seconds,
                run_id,
            ),
        ).fetchone()
        if why:
            self.event(c, run_id, "queued", f"{why} by {owner.name}")
        return int(row["generation"])

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
        where = f"state = 'queued' AND owner IS NULL AND not_before <= {self.db.clock}"
        params: tuple[Any, ...] = ()
        if batch is not None:
            where += " AND batch = ?"
            params += (batch,)
        if queues:
            where += f" AND queue IN ({', '.join('?' * len(queues))})"
            params += queues
        with self.tx() as c:
            rows = c.execute(
                f"SELECT * FROM runs WHERE {where} "  # noqa: S608
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
                    return row.id, self._claim(c, row.id, owner, "claimed")
            return None

    def claim(self, run_id: str, owner: Owner, *, worker: str | None = None) -> int | None:
        """Take ``run_id`` when it is queued and nobody owns it (a dispatcher's worker was
        handed it); its new generation, or None when it is not to be run (cancelled, adopted,
        already taken: the ledger decides, not the queue)."""
        with self.tx() as c:
            row = c.execute(
                "UPDATE runs SET worker = ? WHERE id = ? AND state = 'queued' AND owner IS NULL "
                "RETURNING id",
                (worker, run_id),
            ).fetchone()
            if row is None:
                return None
            return self._claim(c, run_id, owner, "claimed")

    def batch_done(self, batch: str) -> bool:
        row = self.connection.execute(
            "SELECT 1 FROM runs WHERE batch = ? AND state IN "
            "('queued', 'prepared', 'dispatching', 'running') LIMIT 1",
            (batch,),
        ).fetchone()
        return row is None

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
            if row is None or row.state != "queued" or row.owner is not None or row.malformed:
                return None
            until = self.hold_here(c, row, hold)
            if until is not None and job_id is not None and row.job_id == job_id:
                self._enqueue(c, run_id, row.queue, row.priority, until)
            return until

    def hold_here(self, c: Connection, row: RunRow, hold: Hold) -> float | None:
        """Inside a transaction holding ``row`` (queued, unowned): the time it is held until
        when its reservation would cross a ceiling, else None. Nothing is claimed, prepared
        or handed to a queue; the timeline says once which ceiling holds the run."""
        if not hold.ceilings.active or hold.ceilings.alone(hold.runner, row.max_usd):
            return None  # a run over a ceiling on its own is claimed, and failed
        now = self.now(c)
        crossed = hold.ceilings.crossed(c, hold.runner, row.max_usd, now=now)
        if crossed is None:
            return None
        return self._held(c, row, *crossed, now=now, wait=hold.ceilings.hold_wait)

    def _held(
        self,
        c: Connection,
        row: RunRow,
        label: str,
        why: str,
        *,
        now: float,
        wait: tuple[float, float],
    ) -> float:
        same = row.held_reason == label and row.held_since is not None
        since = row.held_since if same and row.held_since is not None else now
        until = now + hold_delay(now - since, now, wait)
        c.execute(
            "UPDATE runs SET not_before = ?, held_reason = ?, held_since = ? WHERE id = ?",
            (until, label, since, row.id),
        )
        if not same:
            self.event(c, row.id, "queued", f"waiting: {why}")
        return until

    def release(self, run_id: str, generation: int, hold: Hold) -> float:
        """Hand an owned run back to the queue: a ceiling was in the way when it was to be
        dispatched. Held as ``hold_here`` holds (until the time returned), or at once ready
        again when the room came back meanwhile. On a dispatcher, the run gets a new job due
        then, in the same transaction (the job that took it ends: ``hold``)."""
        with self.fenced(run_id, generation) as c:
            c.execute(
                "UPDATE runs SET state = 'queued', owner = NULL, owner_pid = NULL, "
                "owner_start = NULL, owner_boot = NULL, owner_host = NULL, lease_until = NULL "
                "WHERE id = ?",
                (run_id,),
            )
            row = self.locked(c, run_id)
            assert row is not None  # fenced: it is there
            until = self.hold_here(c, row, hold)
            if until is None:
                until = self.now(c)
                c.execute("UPDATE runs SET not_before = ? WHERE id = ?", (until, run_id))
            if row.batch is None:  # a batch's own process looks again, not a worker
                self._enqueue(c, run_id, row.queue, row.priority, until)
            return until

    def _wake_held(self, c: Connection) -> None:
        """A reservation was released: every held run is looked at again now."""
        now = self.now(c)
        c.execute(
            "UPDATE runs SET not_before = ? WHERE state = 'queued' AND owner IS NULL "
            "AND held_reason IS NOT NULL AND not_before > ?",
            (now, now),
        )
        if self.dispatcher is not None:
            self.dispatcher.wake(c)

    def renew(self, run_id: str, generation: int) -> bool:
        """Extend the lease; True when a cancel was requested."""
        with self.fenced(run_id, generation) as c:
            row = c.execute(
                f"UPDATE runs SET lease_until = {self.db.clock} + ? WHERE id = ? "  # noqa: S608
                "RETURNING cancel_requested_at",
                (self.lease_seconds, run_id),
            ).fetchone()
            return row["cancel_requested_at"] is not None

    def now(self, c: Connection) -> float:
        """Inside a transaction: the database's time. A spend ceiling's day, a held run's
        next look and a run's ``dispatched_at`` are in it, as leases are: hosts whose clocks
        disagree count one day and wake held runs at one time."""
        return float(c.execute(f"SELECT {self.db.clock} AS now").fetchone()["now"])

    def clock(self) -> Clock:
        """The database's clock: every host writes and judges leases by it, so a host whose
        own clock is ahead cannot see live owners' leases expired."""
        row = self.connection.execute(
            f"SELECT {self.db.clock} AS now, {self.db.started} AS started"
        ).fetchone()
        return Clock(float(row["now"]), float(row["started"]), self.lease_seconds)

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

    # -- the owner's transitions -----------------------------------------------------------

    def prepare(self, run_id: str, generation: int, runner: str, settings_digest: str) -> None:
        with self.fenced(run_id, generation) as c:
            c.execute(
                "UPDATE runs SET state = 'prepared', runner = ?, settings_digest = ? WHERE id = ?",
                (runner, settings_digest, run_id),
            )
            self.event(c, run_id, "prepared", f"runner {runner}")

    def dispatch(self, run_id: str, generation: int, ceilings: Ceilings) -> str | None:
        """Commit ``dispatching`` and reserve the run's budget, before anything is spawned;
        the reason instead when the reservation would cross a spend ceiling."""
        with self.fenced(run_id, generation, sync=True) as c:
            row = self.locked(c, run_id)
            assert row is not None  # fenced: it is there
            if row.cancel_requested_at is not None:
                raise StaleOwner(run_id)  # cancelled before dispatch: never spawn
            if ceilings.active:
                self.db.lock(c, "ceilings")  # one reservation at a time across all workers
            now = self.now(c)
            over = ceilings.refusal(c, row.runner, row.max_usd, now=now)
            if over is not None:
                return over
            c.execute(
                "UPDATE runs SET state = 'dispatching', reserved_usd = max_usd, "
                "held_reason = NULL, held_since = NULL, dispatched_at = ?, host = ?, "
                "host_id = ?, boot_id = ? WHERE id = ?",
                (now, host.host_name(), host.host_id(), host.boot_id(), run_id),
            )
            self.event(c, run_id, "dispatching", f"reserved ${row.max_usd:.2f}")
            return None

    def spawned(self, run_id: str, generation: int, pid: int, pgid: int) -> bool:
        """Commit ``running``; True when a cancel was requested meanwhile."""
        with self.fenced(run_id, generation) as c:
            c.execute(
                "UPDATE runs SET state = 'running', pid = ?, pgid = ?, proc_start = ? WHERE id = ?",
                (pid, pgid, host.start_time(pid), run_id),
            )
            self.event(c, run_id, "running", f"pid {pid}")
            row = c.execute(
                "SELECT cancel_requested_at FROM runs WHERE id = ?", (run_id,)
            ).fetchone()
            return row["cancel_requested_at"] is not None

    def private_dir(self, run_id: str, generation: int, path: Path) -> None:
        with self.fenced(run_id, generation) as c:
            c.execute("UPDATE runs SET private_dir = ? WHERE id = ?", (path_text(path), run_id))

    def finish(
        self,
        run_id: str,
        generation: int | None,
        state: str,
        *,
        failure_kind: str | None,
        result: dict[str, Any] | None,
        cost_usd: float | None,
        receipt: Path | None,
        detail: str | None = None,
    ) -> None:
        """The terminal record. The reservation becomes the actual cost when one is known;
        ``uncertain`` runs and runs without a cost keep the whole reservation.
        ``generation=None`` is for writers that already hold the run (see ``fenced``)."""
        assert state in TERMINAL

        def write(c: Connection) -> None:
            keep = state == "uncertain" or cost_usd is None
            before = self.locked(c, run_id)
            c.execute(
                "UPDATE runs SET state = ?, failure_kind = ?, result_json = ?, cost_usd = ?, "
                "receipt_path = ?, ended_at = ?, lease_until = NULL, "
                "reserved_usd = CASE WHEN dispatched_at IS NULL THEN 0 WHEN ? THEN reserved_usd "
                "ELSE ? END WHERE id = ?",
                (
                    state,
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
                self._wake_held(c)

        if generation is None:
            with self.tx() as c:
                write(c)
        else:
            with self.fenced(run_id, generation) as c:
                write(c)

    def take_over(self, c: Connection, run_id: str) -> None:
        """Inside a transaction: fence out whoever owned the run (a canceller or reconciler
        is about to settle it)."""
        c.execute("UPDATE runs SET generation = generation + 1 WHERE id = ?", (run_id,))

    def redispatch_stranded(self) -> list[str]:
        """Queued runs nobody owns whose job ended without running them, handed to the
        dispatcher again (never a dispatched run: those are reconciled, never relaunched)."""
        if self.dispatcher is None:
            return []
        handed = []
        with self.tx() as c:
            for run_id in self.dispatcher.stranded(c):
                row = self.locked(c, run_id)
                if row is None or row.state != "queued" or row.owner is not None or row.malformed:
                    continue
                self._enqueue(c, run_id, row.queue, row.priority, row.not_before)
                self.event(c, run_id, "queued", "its job ended without running it: queued again")
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


def _differences(held: RunRow, packet: Packet, workdir: str, receipt_dir: str | None) -> list[str]:
    """What differs between the request of the run ``held`` and this one."""
    found = []
    if held.job_digest != packet.job_digest:
        name = packet.job.name
        found.append(
            f"the job (there {held.job_name}, here {name})"
            if held.job_name != name
            else f"the job ({name} there and here, but another version of it)"
        )
    if held.inputs_sha256 != packet.inputs_sha256:
        found.append("the input values")
    elif not found:
        # The same job and inputs render the same prompt; a packet made by hand may not. (Its
        # own column is read, whatever another column of the row holds.)
        from pydantic import ValidationError

        try:
            before = Packet.model_validate_json(held.packet_json).prompt_sha256
        except ValidationError:
            before = None
        if before != packet.prompt_sha256:
            found.append("the prompt")
    paths: tuple[tuple[str, str | None, str | None], ...] = (
        ("the working directory", held.workdir, workdir),
        ("the receipt directory", held.receipt_dir, receipt_dir),
    )
    for label, there, here in paths:
        if there != here:
            found.append(f"{label} (there {_shown(there)}, here {_shown(here)})")
    return found


def _shown(path: str | None) -> str:
    return "none" if path is None else path


@dataclass(frozen=True, slots=True)
class Ceilings:
    """``[system.budget]``: the spend a day's runs may reserve, in total and per runner, and
    the shortest and longest wait between two looks at a run they hold (``hold_delay``)."""

    per_day: float | None = None
    per_runner: tuple[tuple[str, float], ...] = ()
    hold_wait: tuple[float, float] = (HOLD_FIRST, HOLD_MAX)

    @property
    def active(self) -> bool:
        return self.per_day is not None or bool(self.per_runner)

    def refusal(
        self, c: Connection, runner: str | None, amount: float, *, now: float
    ) -> str | None:
        crossed = self.crossed(c, runner, amount, now=now)
        return None if crossed is None else crossed[1]

    def alone(self, runner: str | None, amount: float) -> str | None:
        """Why ``amount`` is over a ceiling on its own, so that no day can take it."""
        limits = [("max_usd_per_day", self.per_day)]
        limits += [(f"per_runner.{name}", v) for name, v in self.per_runner if name == runner]
        for label, limit in limits:
            if limit is not None and amount > limit + 1e-9:
                return (
                    f"its budget of ${amount:.2f} is over [system.budget] {label} of "
                    f"${limit:.2f} on its own"
                )
        return None

    def crossed(
        self, c: Connection, runner: str | None, amount: float, *, now: float
    ) -> tuple[str, str] | None:
        """The ceiling reserving ``amount`` at ``now`` (the database's time:
        ``Ledger.now``) would cross (its key) and why, or None."""
        if not self.active:
            return None
        day_start = now - now % 86400  # the current UTC day, by the database's clock
        limits: list[tuple[str, str | None, float | None]] = [
            ("max_usd_per_day", None, self.per_day)
        ]
        limits += [
            (f"per_runner.{name}", name, value) for name, value in self.per_runner if name == runner
        ]
        for label, only, limit in limits:
            if limit is None:
                continue
            query = (
                "SELECT COALESCE(SUM(reserved_usd), 0) AS total FROM runs WHERE dispatched_at >= ?"
            )
            params: tuple[Any, ...] = (day_start,)
            if only is not None:
                query += " AND runner = ?"
                params += (only,)
            spent = float(c.execute(query, params).fetchone()["total"])
            if spent + amount > limit + 1e-9:
                return label, (
                    f"reserving ${amount:.2f} would cross [system.budget] {label} of "
                    f"${limit:.2f} (${spent:.2f} reserved or spent today)"
                )
        return None


@dataclass(frozen=True, slots=True)
class Hold:
    """A worker's ceilings and the runner its runs would reserve under: a run they leave no
    room for waits in the queue (``Ledger.hold``)."""

    ceilings: Ceilings
    runner: str


def hold_delay(
    held_for: float, now: float, wait: tuple[float, float] = (HOLD_FIRST, HOLD_MAX)
) -> float:
    """How long a run held for ``held_for`` seconds waits before it is looked at again: half
    that, within ``wait`` (the shortest and the longest wait)."""
    shortest, longest = wait
    delay = min(longest, max(shortest, held_for / 2))
    next_day = now - now % 86400 + 86400  # a per-day ceiling's window opens again
    return min(delay, next_day - now + 0.1)
