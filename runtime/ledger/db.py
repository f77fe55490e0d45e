"""The SQLite backend: WAL, short ``BEGIN IMMEDIATE`` transactions, a versioned schema.

Each migration runs inside one immediate transaction that first re-reads the version, so two
processes opening a fresh ledger at once apply it exactly once. A ledger written by a newer hz
(a version above ``len(MIGRATIONS)``) is refused rather than misread.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from hz.runtime.errors import HzError

#: How long a writer waits for another's transaction before giving up (milliseconds).
BUSY_TIMEOUT_MS = 30_000

MIGRATIONS: tuple[str, ...] = (
    # 1: runs, their timeline, and the schema version.
    """
    CREATE TABLE runs (
        id TEXT PRIMARY KEY,
        request_key TEXT NOT NULL,
        state TEXT NOT NULL,
        failure_kind TEXT,
        attempt INTEGER NOT NULL DEFAULT 1,
        retry_of TEXT,
        batch TEXT,
        job_name TEXT NOT NULL,
        job_digest TEXT NOT NULL,
        inputs_sha256 TEXT NOT NULL,
        workdir TEXT NOT NULL,
        receipt_dir TEXT,
        packet_json TEXT NOT NULL,
        max_usd REAL NOT NULL,
        runner TEXT,
        settings_digest TEXT,
        reserved_usd REAL NOT NULL DEFAULT 0,
        cost_usd REAL,
        generation INTEGER NOT NULL DEFAULT 0,
        owner TEXT,
        owner_pid INTEGER,
        owner_start INTEGER,
        owner_boot TEXT,
        lease_until REAL,
        host TEXT,
        boot_id TEXT,
        pid INTEGER,
        pgid INTEGER,
        proc_start INTEGER,
        private_dir TEXT,
        cancel_requested_at REAL,
        observed_json TEXT,
        result_json TEXT,
        receipt_path TEXT,
        not_before REAL NOT NULL DEFAULT 0,
        created_at REAL NOT NULL,
        dispatched_at REAL,
        ended_at REAL
    );
    CREATE INDEX runs_request_key ON runs (request_key, created_at);
    CREATE INDEX runs_state ON runs (state, not_before);
    CREATE INDEX runs_dispatched ON runs (dispatched_at);
    CREATE INDEX runs_batch ON runs (batch, state);
    CREATE TABLE events (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        run_id TEXT NOT NULL REFERENCES runs (id),
        at REAL NOT NULL,
        state TEXT NOT NULL,
        detail TEXT
    );
    CREATE INDEX events_run ON events (run_id, seq);
    """,
    # 2: host identity (host id beside the boot id), queues and priorities, the dispatcher's
    # job id (PostgreSQL), the worker, and when this host last killed a run's orphans.
    """
    ALTER TABLE runs ADD COLUMN host_id TEXT;
    ALTER TABLE runs ADD COLUMN owner_host TEXT;
    ALTER TABLE runs ADD COLUMN queue TEXT NOT NULL DEFAULT 'default';
    ALTER TABLE runs ADD COLUMN priority INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE runs ADD COLUMN job_id INTEGER;
    ALTER TABLE runs ADD COLUMN worker TEXT;
    ALTER TABLE runs ADD COLUMN swept_at REAL;
    CREATE INDEX runs_claim ON runs (state, queue, priority, not_before);
    """,
    # 3: a run a worker holds for a spend ceiling: which ceiling (its timeline says so once)
    # and since when (the wait between looks grows with it).
    """
    ALTER TABLE runs ADD COLUMN held_reason TEXT;
    ALTER TABLE runs ADD COLUMN held_since REAL;
    """,
)

SCHEMA_VERSION = len(MIGRATIONS)


class LedgerError(HzError):
    """The ledger cannot be opened or used (a newer schema, a file that is not a ledger, a
    database that cannot be reached)."""


class SqliteDb:
    """One ledger file; a connection per thread (sqlite3 connections are not shared)."""

    for_update = ""
    skip_locked = ""
    insert_order = "rowid"
    clock = "((julianday('now') - 2440587.5) * 86400.0)"
    started = "0"

    def __init__(self, path: Path) -> None:
        self.path = path
        self.where = str(path)
        self._local = threading.local()
        self.connection  # noqa: B018 -- open (and migrate) now, so errors surface here

    @property
    def connection(self) -> sqlite3.Connection:
        found: sqlite3.Connection | None = getattr(self._local, "connection", None)
        if found is None:
            found = connect(self.path)
            self._local.connection = found
        return found

    def tx(self) -> Any:
        return immediate(self.connection)

    def durable(self) -> Any:
        return durable(self.connection)

    def lock(self, c: Any, name: str) -> None:
        """Nothing: ``BEGIN IMMEDIATE`` already holds the database's one write lock."""

    def thread_done(self) -> None:
        """Close the calling thread's connection. A thread that ends without it leaves its
        connection (three open files, SQLite's caches) to the garbage collector: one per run's
        watcher thread, a batch's or a worker's memory would grow with the runs."""
        found = getattr(self._local, "connection", None)
        if found is not None:
            found.close()
            self._local.connection = None

    def close(self) -> None:
        self.thread_done()


def connect(path: Path) -> sqlite3.Connection:
    """An autocommit connection (transactions are explicit) with the schema migrated."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        connection = sqlite3.connect(
            path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None, check_same_thread=False
        )
        connection.row_factory = sqlite3.Row
        connection.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        connection.execute("PRAGMA journal_mode = WAL")
        # NORMAL: in WAL mode a commit survives a crash of any process, not a power loss;
        # the one commit that must survive that too (``dispatching``) uses ``durable``.
        connection.execute("PRAGMA synchronous = NORMAL")
        connection.execute("PRAGMA foreign_keys = ON")
        _migrate(connection, path)
    except sqlite3.DatabaseError as e:
        raise LedgerError(f"{path}: cannot open the run ledger: {e}") from e
    except OSError as e:
        raise LedgerError(f"{path}: cannot create the run ledger: {e.strerror or e}") from e
    return connection


def _version(connection: sqlite3.Connection) -> int:
    return int(connection.execute("PRAGMA user_version").fetchone()[0])


def _migrate(connection: sqlite3.Connection, path: Path) -> None:
    if _version(connection) == SCHEMA_VERSION:
        return
    with immediate(connection):
        version = _version(connection)  # again, now that no other writer can run
        if version > SCHEMA_VERSION:
            raise LedgerError(
                f"{path}: the run ledger has schema version {version}; this hz knows up to "
                f"{SCHEMA_VERSION}",
                hint="use the newer hz that wrote it",
            )
        for number in range(version, SCHEMA_VERSION):
            for statement in MIGRATIONS[number].split(";"):
                if statement.strip():
                    connection.execute(statement)
        connection.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")


@contextmanager
def immediate(connection: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """One short write transaction: the write lock is taken at BEGIN, so a read-then-write
    inside it can't race another process."""
    connection.execute("BEGIN IMMEDIATE")
    try:
        yield connection
    except BaseException:
        connection.execute("ROLLBACK")
        raise
    connection.execute("COMMIT")


@contextmanager
def durable(connection: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """A write transaction whose commit is on disk when it returns (it also syncs every
    commit before it): a lost ``dispatching`` would let a restart after a power loss call a
    started run never started, and launch it again."""
    connection.execute("PRAGMA synchronous = FULL")
    try:
        with immediate(connection):
            yield connection
    finally:
        connection.execute("PRAGMA synchronous = NORMAL")
