"""The SQLite backend: WAL, short ``BEGIN IMMEDIATE`` transactions, a versioned schema.

Each migration runs inside one immediate transaction that first re-reads the version, so two
processes opening a fresh ledger at once apply it exactly once. A ledger written by a newer hz
(a version above ``len(MIGRATIONS)``) is refused rather than misread.
"""

from __future__ import annotations

import functools
import re
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

from hz.runtime.artifacts.errors import HzError
from hz.runtime.ledger.private import private_ledger

#: How text is read: as UTF-8, and bytes that are not UTF-8 (a damaged page, another tool's
#: Latin-1, a ``CAST(x AS TEXT)``) as ``os.fsdecode`` names them (``\\udcXX``) instead of
#: failing the whole statement ("Could not decode to UTF-8"): ``RunRow.read`` names the column.
TEXT = functools.partial(str, encoding="utf-8", errors="surrogateescape")

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
    # 4: the packet, job or contract the run was made from (a batch's and a worker's lines
    # name it), absolute, as a path is stored (``paths.path_text``).
    """
    ALTER TABLE runs ADD COLUMN target TEXT;
    """,
    # 5: the pid namespaces of the owner and of the run's processes: a pid is judged only in
    # its own (``hz.runtime.ledger.sight``).
    """
    ALTER TABLE runs ADD COLUMN owner_pidns TEXT;
    ALTER TABLE runs ADD COLUMN pidns TEXT;
    """,
    # 6: each scheduled job a worker fires: whether it is paused, and the instant its slots
    # are counted from (first seen, or resumed); the slots it fired are runs of their key.
    """
    CREATE TABLE schedules (
        job TEXT PRIMARY KEY,
        paused INTEGER NOT NULL DEFAULT 0,
        since REAL NOT NULL,
        changed_at REAL NOT NULL
    );
    """,
    # 7: each publish of a run's draft, a step of its own (``store.publishes``).
    """
    CREATE TABLE publish_steps (
        run_id TEXT NOT NULL REFERENCES runs (id),
        step INTEGER NOT NULL,
        target TEXT NOT NULL,
        args_json TEXT NOT NULL,
        state TEXT NOT NULL,
        generation INTEGER NOT NULL DEFAULT 0,
        attempts INTEGER NOT NULL DEFAULT 0,
        marker TEXT NOT NULL,
        sha256 TEXT,
        location TEXT,
        detail TEXT,
        lease_until REAL,
        owner_json TEXT,
        created_at REAL NOT NULL,
        updated_at REAL NOT NULL,
        PRIMARY KEY (run_id, step)
    );
    """,
)

SCHEMA_VERSION = len(MIGRATIONS)


class LedgerError(HzError):
    """The ledger cannot be opened or used (a newer schema, a file that is not a ledger, a
    database that cannot be reached)."""


class LedgerUnavailable(LedgerError):
    """The ledger cannot be read or written *now*: its disk is full, an I/O error, a lock held
    past the busy timeout, a database that cannot be reached. Worth trying again: an owner
    whose session ended retries its record (``owner._patiently``), its watcher keeps trying to
    renew, a worker's slot looks again later."""


class LedgerDamaged(LedgerError):
    """The ledger's file is damaged (a malformed page, a table missing): nothing is retried;
    the message names the file and how to set it aside."""


class LedgerReplaced(LedgerError):
    """The ledger's file was moved, removed or replaced at its path while this process used
    it: this process stops rather than go on with the file it opened (which no new run
    reaches) or switch files under the runs it owns (their records split between two)."""


#: SQLite's primary result codes that say "not now" rather than "never" (sqlite.org/rescode):
#: BUSY, LOCKED, NOMEM, IOERR, FULL, CANTOPEN (no file descriptor left), PROTOCOL, SCHEMA.
_TRANSIENT = {5, 6, 7, 10, 13, 14, 15, 17}
#: PERM, READONLY, AUTH: this process may not write it (a read-only mount, its mode).
_REFUSED = {3, 8, 23}
#: CORRUPT, NOTADB: the file is no (longer a whole) database.
_DAMAGED = {11, 26}
#: CONSTRAINT: hz's statements keep its schema's constraints, so one that fails is a trigger or
#: a constraint someone added.
_CONSTRAINT = 19
#: A table or column the schema version promises is missing: edited or damaged.
_MISSING = re.compile(r"^no such (table|column)\b")
#: A migration meeting what it makes already there: the version was set back.
_AHEAD = re.compile(r"^(table \S+ already exists|index \S+ already exists|duplicate column name)")


def translate(e: sqlite3.Error, path: Path) -> LedgerError | None:
    """``e`` as hz's error (``LedgerUnavailable``, ``LedgerDamaged``), or None when it is no
    fault of the database (a misuse: a bug, left to surface as one)."""
    code = (getattr(e, "sqlite_errorcode", None) or 0) & 0xFF
    text = " ".join(str(e).split())[:300] or type(e).__name__
    if code == _CONSTRAINT:
        return damaged(path, f"a constraint or trigger hz's schema does not have failed: {text}")
    if code in _DAMAGED or (isinstance(e, sqlite3.OperationalError) and _MISSING.match(text)):
        return damaged(path, text)
    if code in _TRANSIENT:
        return LedgerUnavailable(
            f"{path}: the run ledger cannot be used now: {text}",
            hint="free space on its file system (or end what holds it locked); hz retries "
            "where a run is at stake",
        )
    if code in _REFUSED:
        return LedgerError(f"{path}: the run ledger cannot be written: {text}")
    return None


def damaged(path: Path, what: str) -> LedgerDamaged:
    # Its WAL and shared-memory files go with it: a new ledger beside an old WAL would be
    # damaged too. Workers go first: one that runs on keeps the file it opened until its next
    # look sees it moved, and then stops its runs (``LedgerReplaced``).
    return LedgerDamaged(
        f"{path}: the run ledger is damaged ({what})",
        hint=f"stop the hz workers that use it, keep a copy (cp -p {path}* /somewhere/safe/), "
        f"then move {path} and its -wal and -shm files aside: the next hz command starts a new, "
        "empty ledger there (the runs of the old one are no longer listed; sqlite3 "
        f"{path} .recover salvages what it can)",
    )


class Rows:
    """A statement's rows, read at once: every failure of SQLite surfaces in ``execute``,
    where it is translated, never later in a fetch."""

    __slots__ = ("_rows",)

    def __init__(self, rows: list[Any]) -> None:
        self._rows = rows

    def fetchone(self) -> Any:
        return self._rows[0] if self._rows else None

    def fetchall(self) -> list[Any]:
        return self._rows


class SqliteConnection:
    """One thread's connection: ``execute`` returns its rows read at once, and SQLite's
    failures become hz's errors here, at the boundary (``translate``)."""

    def __init__(self, raw: sqlite3.Connection, path: Path) -> None:
        self.raw = raw
        self.path = path

    def execute(self, sql: str, params: Any = (), /) -> Rows:
        try:
            return Rows(self.raw.execute(sql, params).fetchall())
        except sqlite3.Error as e:
            translated = translate(e, self.path)
            if translated is None:
                raise
            raise translated from e

    def close(self) -> None:
        self.raw.close()


class SqliteDb:
    """One ledger file; a connection per thread (sqlite3 connections are not shared).

    The file is the one at ``path`` when it was opened (its device and inode): a thread's
    new connection, and a worker's every claim (``check_file``), first make sure the file at
    the path is still that one. A connection opened earlier keeps the file it opened, moved
    or not, as SQLite does; none is opened on another file, nor a new empty ledger created
    where the old one was removed."""

    for_update = ""
    skip_locked = ""
    insert_order = "rowid"
    clock = "((julianday('now') - 2440587.5) * 86400.0)"
    started = "0"
    role = "NULL"

    def __init__(self, path: Path) -> None:
        self.path = path
        self.where = str(path)
        self._local = threading.local()
        #: The file opened (device, inode), once opened; None: not known, nothing compared.
        self.opened: tuple[int, int] | None = None
        self.connection  # noqa: B018 -- open (and migrate) now, so errors surface here
        with suppress(OSError):
            self.opened = _file_at(path)

    @property
    def connection(self) -> SqliteConnection:
        found: SqliteConnection | None = getattr(self._local, "connection", None)
        if found is None:
            self.check_file()  # before connect(), which would create a ledger where none is
            found = connect(self.path)
            self._local.connection = found
        return found

    def tx(self) -> Any:
        return self._guarded(immediate)

    def durable(self) -> Any:
        return self._guarded(durable)

    @contextmanager
    def _guarded(self, kind: Any) -> Iterator[SqliteConnection]:
        connection = self.connection
        try:
            with kind(connection) as c:
                yield c
        finally:
            if connection.raw.in_transaction:
                # A ROLLBACK that failed too (the disk went away): this connection is in no
                # state to be used again; the thread's next statement opens a new one.
                self.thread_done()

    def lock(self, c: Any, name: str) -> None:
        """Nothing: ``BEGIN IMMEDIATE`` already holds the database's one write lock."""

    def check_file(self) -> None:
        """``LedgerReplaced`` when the file at the path is not the one opened (moved or
        removed, another perhaps created there: a restore from a backup, ``rm`` and a new
        ledger). A path that cannot be looked at now (a directory made unreadable) passes:
        the statements say what is wrong with it."""
        if self.opened is None:
            return
        try:
            now = _file_at(self.path)
        except OSError:
            return
        if now != self.opened:
            raise LedgerReplaced(
                f"{self.path}: the run ledger was moved, removed or replaced while this hz "
                "process used it",
                hint="hz stopped rather than go on with the file it had opened, which no new "
                "run reaches, or switch files under the runs it owned; start it again "
                "(hz worker) to use the ledger now at that path",
            )

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


def _file_at(path: Path) -> tuple[int, int] | None:
    """The device and inode of the file at ``path`` (its link's target), None when there is
    none; ``OSError`` when it cannot be looked at."""
    try:
        found = path.stat()
    except (FileNotFoundError, NotADirectoryError):
        return None
    return found.st_dev, found.st_ino


def connect(path: Path) -> SqliteConnection:
    """An autocommit connection (transactions are explicit) with the schema migrated and its
    tables there (a cheap look at the schema; a damaged page elsewhere is found when read)."""
    try:
        # The directory and the files are this user's alone (``hz.runtime.ledger.private``).
        private_ledger(path)
        raw = sqlite3.connect(
            path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None, check_same_thread=False
        )
    except sqlite3.Error as e:
        raise _cannot_open(e, path) from e
    except OSError as e:
        raise LedgerError(f"{path}: cannot create the run ledger: {e.strerror or e}") from e
    try:
        raw.row_factory = sqlite3.Row
        raw.text_factory = TEXT
        raw.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        wal(raw)
        # NORMAL: in WAL mode a commit survives a crash of any process, not a power loss;
        # the one commit that must survive that too (``dispatching``) uses ``durable``.
        raw.execute("PRAGMA synchronous = NORMAL")
        raw.execute("PRAGMA foreign_keys = ON")
        connection = SqliteConnection(raw, path)
        _migrate(connection, path)
        _check_tables(connection, path)
    except sqlite3.Error as e:
        raw.close()
        raise _cannot_open(e, path) from e
    except BaseException:
        raw.close()
        raise
    return connection


#: SQLite's primary result code for "another connection holds the lock".
_SQLITE_BUSY = 5


def wal(
    raw: sqlite3.Connection,
    *,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], object] = time.sleep,
) -> None:
    """Put the ledger in WAL mode, waiting out other processes as the busy timeout does.

    Switching a fresh file to WAL reads it (a shared lock) and then needs it alone; when
    another process opening the same fresh ledger holds a lock between the two, SQLite
    answers "database is locked" at once instead of calling the busy handler (waiting there
    could deadlock). Nothing was changed, so the switch is tried again, for as long as any
    other statement would wait."""
    deadline = clock() + BUSY_TIMEOUT_MS / 1000
    pause = 0.001
    while True:
        try:
            raw.execute("PRAGMA journal_mode = WAL")
            return
        except sqlite3.OperationalError as e:
            busy = (getattr(e, "sqlite_errorcode", None) or 0) & 0xFF == _SQLITE_BUSY
            if not busy or clock() >= deadline:
                raise
        sleep(pause)
        pause = min(pause * 2, 0.05)


def _cannot_open(e: sqlite3.Error, path: Path) -> LedgerError:
    translated = translate(e, path)
    if isinstance(translated, LedgerDamaged | LedgerUnavailable):
        return translated
    return LedgerError(f"{path}: cannot open the run ledger: {e}")


#: The tables every schema version has, and the columns of each that hz reads.
_TABLES = {
    "runs": ("id", "state", "generation", "owner", "lease_until"),
    "events": ("run_id", "at"),
}


def _check_tables(connection: SqliteConnection, path: Path) -> None:
    """The tables are there: a ledger whose ``events`` table was dropped says so at open, not
    as "no such table" in the middle of a run. One query over the schema SQLite holds in
    memory: about 0.1 ms per connection. ``PRAGMA quick_check`` would read every page (17 ms
    for a ledger of 2,000 runs, against a budget of a few ms per run); a damaged page is named
    when it is read instead."""
    found: dict[str, set[str]] = {}
    for row in connection.execute(
        "SELECT m.name, p.name FROM sqlite_master AS m JOIN pragma_table_info(m.name) AS p "
        "WHERE m.type = 'table' AND m.name IN ('runs', 'events')"
    ).fetchall():
        found.setdefault(row[0], set()).add(row[1])
    for table, columns in _TABLES.items():
        missing = [c for c in columns if c not in found.get(table, set())]
        if missing:
            what = (
                f"no table {table}"
                if table not in found
                else f"{table} has no {', '.join(missing)}"
            )
            raise damaged(path, what)


def _version(connection: SqliteConnection) -> int:
    return int(connection.execute("PRAGMA user_version").fetchone()[0])


def _migrate(connection: SqliteConnection, path: Path) -> None:
    if _version(connection) == SCHEMA_VERSION:
        return
    with immediate(connection):
        version = _version(connection)  # again, now that no other writer can run
        if version < 0:
            raise damaged(path, f"its schema version is {version}")
        if version > SCHEMA_VERSION:
            raise LedgerError(
                f"{path}: the run ledger has schema version {version}; this hz knows up to "
                f"{SCHEMA_VERSION}",
                hint="use the newer hz that wrote it",
            )
        try:
            for number in range(version, SCHEMA_VERSION):
                for statement in MIGRATIONS[number].split(";"):
                    if statement.strip():
                        connection.execute(statement)
        except sqlite3.OperationalError as e:
            if not _AHEAD.match(str(e)):
                raise
            # Its version was set back by hand (or lost): its tables are of a later one.
            raise damaged(path, f"its schema version says {version}, but {e}") from e
        connection.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")


def _rollback(connection: SqliteConnection) -> None:
    """End a failed transaction. SQLite may have rolled it back itself (a full disk, an I/O
    error); a ROLLBACK that fails leaves ``in_transaction`` set for the caller to see."""
    if connection.raw.in_transaction:
        with suppress(sqlite3.Error):
            connection.raw.execute("ROLLBACK")


@contextmanager
def immediate(connection: SqliteConnection) -> Iterator[SqliteConnection]:
    """One short write transaction: the write lock is taken at BEGIN, so a read-then-write
    inside it can't race another process. A COMMIT that fails (the disk is full) rolls the
    transaction back and raises: the caller may try the whole of it again."""
    connection.execute("BEGIN IMMEDIATE")
    try:
        yield connection
        connection.execute("COMMIT")
    except BaseException:
        _rollback(connection)
        raise


@contextmanager
def durable(connection: SqliteConnection) -> Iterator[SqliteConnection]:
    """A write transaction whose commit is on disk when it returns (it also syncs every
    commit before it): a lost ``dispatching`` would let a restart after a power loss call a
    started run never started, and launch it again."""
    connection.execute("PRAGMA synchronous = FULL")
    try:
        with immediate(connection):
            yield connection
    finally:
        with suppress(LedgerError):
            connection.execute("PRAGMA synchronous = NORMAL")
