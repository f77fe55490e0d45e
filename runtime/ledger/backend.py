"""What the ledger needs from a database, so its logic is written once for SQLite and
PostgreSQL.

The ledger's SQL is portable: ``?`` placeholders (the PostgreSQL adapter rewrites them), rows
read by column name (``sqlite3.Row``; psycopg's ``dict_row``), no engine-specific functions.
What differs is how a read-then-write is made safe, and that is the adapter's:

- ``tx()``: SQLite takes the database's write lock at ``BEGIN IMMEDIATE``, so a read inside
  the transaction cannot race another writer. PostgreSQL reads committed data and locks rows:
  the ledger appends ``for_update`` to a read it will write after, ``skip_locked`` to a claim,
  and takes ``lock(c, name)`` (a row of ``hz.locks`` locked for the transaction; nothing on
  SQLite) where no row exists yet to lock — a request key being created, the day's spend
  being reserved.
- ``durable()``: a transaction whose commit is on disk when it returns.

A ``Dispatcher`` is the queue a backend hands runs to (procrastinate on PostgreSQL; none on
SQLite, where workers poll the table).
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import Any, Protocol


class Connection(Protocol):
    def execute(self, sql: str, params: Any = (), /) -> Any:
        """A cursor with ``fetchone()`` and ``fetchall()`` over rows readable by name."""


class Db(Protocol):
    #: Names the database in messages (a file path; a PostgreSQL database and host).
    where: str
    #: Appended to a SELECT whose rows the transaction will update.
    for_update: str
    #: Appended to a SELECT that claims one of many rows (other claimers skip it).
    skip_locked: str
    #: The column that orders rows by insertion.
    insert_order: str
    #: SQL for the database's clock, in seconds since the epoch: leases are written and
    #: judged by this one clock, never by the clocks of the hosts that share the database.
    clock: str
    #: SQL for when the database last started (seconds since the epoch; 0 when it does not
    #: matter): no owner could renew a lease while it was down.
    started: str
    #: SQL for the database role the connection acts as (NULL where there is none): the
    #: database, not the client, says who wrote a cancel.
    role: str

    @property
    def connection(self) -> Connection: ...

    def tx(self) -> AbstractContextManager[Connection]: ...

    def durable(self) -> AbstractContextManager[Connection]: ...

    def lock(self, c: Connection, name: str) -> None: ...

    def thread_done(self) -> None:
        """The calling thread is done with the database (a run's watcher thread as it ends):
        what it holds of its own is let go now, not whenever the garbage collector finds it."""

    def close(self) -> None: ...


class Dispatcher(Protocol):
    """Where a queued run goes so that a worker picks it up."""

    def enqueue(
        self, c: Connection, run_id: str, *, queue: str, priority: int, not_before: float
    ) -> int:
        """Inside the transaction that inserted the run: hand it to the queue; its job id."""

    def cancel(self, db: Db, job_id: int) -> None:
        """After a cancel intent is committed: take the job out of the queue, or ask the
        worker running it to abort."""

    def wake(self, c: Connection) -> None:
        """Inside the transaction that released a reservation: the jobs of runs held for a
        spend ceiling are due now."""

    def stranded(self, c: Connection) -> list[str]:
        """Queued runs nobody owns whose job ended (or vanished) without running them."""

    def leftover(self, c: Connection, *, stalled_after: float) -> int:
        """Jobs still taken (``doing``) whose run is terminal and whose worker has been
        silent ``stalled_after`` seconds (or is gone): a worker that could not finish them
        (the database was away). End them as their run ended; how many. A live run's job is
        never touched."""

    def abandon(self, c: Connection, job_id: int) -> None:
        """Inside the transaction that settled the run elsewhere (reconcile, cancel): end its
        job without a retry."""
