"""The PostgreSQL adapter of the ledger (``hz.runtime.ledger.backend.Db``).

Connections are borrowed per statement (a read) or per transaction and given back; a broken
one (the server restarted) is dropped and the next borrow connects anew, so every caller that
retries — the owner's watcher at its next tick, a worker's next claim — reconnects by itself.
Driver failures to reach the server (or to be served by it: its disk full, a restart, a
deadlock) become ``LedgerUnavailable`` here, at the boundary: worth trying again.

Row locks make a read-then-write safe (``for_update``); ``lock`` locks the row of
``hz.locks`` a name picks (a request key being created, the day's spend being reserved): only
a role with hz's grants can take it. (PostgreSQL's advisory locks need no grant: any role that
may connect could hold one for ever, and every submit with a key, every dispatch under a
spend ceiling, would wait with it.) A lock is waited for ``LOCK_TIMEOUT`` seconds at most.
Migrations lock ``hz.meta``, or, on a database without hz's tables yet, take an advisory lock
(waited for as long), so two processes opening a fresh database apply them once.
"""

from __future__ import annotations

import hashlib
import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from enum import Enum
from functools import cache
from typing import Any

import psycopg
from psycopg.rows import dict_row

from hz.runtime.ledger.db import LedgerError, LedgerUnavailable
from hz.runtime.ledger.pg.schema import LOCK_SLOTS, MIGRATIONS, SCHEMA, SCHEMA_VERSION

#: The advisory lock namespace of hz's locks (the first key of the two-key form).
LOCK_NAMESPACE = 0x687A  # "hz"
#: The session lock key that serialises migrations.
MIGRATION_LOCK = 1
#: Idle connections kept for reuse.
MAX_IDLE = 16
#: The longest wait for a lock (seconds): SQLite's busy timeout. Past it, the transaction
#: fails as ``LedgerUnavailable`` (something holds hz's lock that long: worth trying again).
LOCK_TIMEOUT = 30


def _version(raw: psycopg.Connection[dict[str, Any]]) -> int:
    found = raw.execute("SELECT to_regclass('hz.meta') IS NOT NULL AS present").fetchone()
    if not found or not found["present"]:
        return 0
    row = raw.execute("SELECT version FROM hz.meta").fetchone()
    return int(row["version"]) if row else 0


def _first_line(e: BaseException) -> str:
    """The first line of a driver's message (the server's may span several), for ours."""
    text = str(e).strip()
    return text.splitlines()[0][:300] if text else type(e).__name__


class UnportableSql(ValueError):
    """A statement the ``?`` rewrite cannot translate safely: a bug in hz's SQL, never a
    user's problem."""


#: Where a ``?`` is not a placeholder: a quoted literal or name, a comment, a dollar quote.
_QUOTED = re.compile(r"'(?:[^']|'')*'|\"(?:[^\"]|\"\")*\"|--[^\n]*|/\*.*?\*/|\$", re.S)


def lock_slot(name: str) -> int:
    """The row of ``hz.locks`` that ``name`` locks: the same in every process (a digest, not
    Python's salted ``hash``)."""
    return int.from_bytes(hashlib.sha256(name.encode("utf-8", "surrogatepass")).digest()[:8]) % (
        LOCK_SLOTS
    )


@cache
def _portable(sql: str) -> str:
    """The ledger's ``?`` placeholders as psycopg's ``%s`` (a literal ``%`` doubled).

    A ``?`` inside a quoted literal or name, or in a comment, is refused (``UnportableSql``):
    rewritten, it would silently become a placeholder. A dollar quote is refused outright
    (hz's SQL has none; the rewrite cannot see where one ends). PostgreSQL's jsonb ``?``
    operator is spelled ``jsonb_exists(...)`` in the ledger's SQL, which has no ``?``."""
    out: list[str] = []
    at = 0
    for found in _QUOTED.finditer(sql):
        text = found.group()
        if text == "$" or "?" in text:
            what = "a dollar quote" if text == "$" else f"a ? inside {text[:40]!r}"
            raise UnportableSql(f"{what} in: {sql[:200]}")
        out.append(sql[at : found.start()].replace("%", "%%").replace("?", "%s"))
        out.append(text.replace("%", "%%"))
        at = found.end()
    out.append(sql[at:].replace("%", "%%").replace("?", "%s"))
    return "".join(out)


def _values(params: Any) -> Any:
    """Parameters as psycopg dumps them: a ``RunState`` (a ``StrEnum``) as its text."""
    if isinstance(params, tuple | list):
        return tuple(p.value if isinstance(p, Enum) else p for p in params)
    return params


class PgConnection:
    """One borrowed connection inside a transaction: ``execute`` returns psycopg's cursor,
    whose rows are dicts. ``raw`` is the psycopg connection (procrastinate defers on it)."""

    def __init__(self, raw: psycopg.Connection[dict[str, Any]]) -> None:
        self.raw = raw

    def execute(self, sql: str, params: Any = (), /) -> Any:
        return self.raw.execute(_portable(sql), _values(params))


class _Rows:
    def __init__(self, rows: list[dict[str, Any]]) -> None:
        self._rows = rows

    def fetchone(self) -> dict[str, Any] | None:
        return self._rows[0] if self._rows else None

    def fetchall(self) -> list[dict[str, Any]]:
        return self._rows


class _Statements:
    """``connection`` outside a transaction: each statement on a borrowed connection, its
    rows read at once."""

    def __init__(self, db: PgDb) -> None:
        self._db = db

    def execute(self, sql: str, params: Any = (), /) -> _Rows:
        for attempt in (1, 2):
            try:
                with self._db.borrow() as raw:
                    cursor = raw.execute(_portable(sql), _values(params))
                    return _Rows(cursor.fetchall() if cursor.description else [])
            except LedgerError:
                if attempt == 2:
                    raise  # a stale connection is retried once, on a fresh one
        raise AssertionError("unreachable")


class PgDb:
    for_update = " FOR UPDATE"
    skip_locked = " FOR UPDATE SKIP LOCKED"
    insert_order = "seq"
    clock = "extract(epoch from clock_timestamp())::double precision"
    started = "extract(epoch from pg_postmaster_start_time())::double precision"
    role = "current_user"

    def __init__(self, conninfo: str, *, where: str) -> None:
        self.conninfo = conninfo
        self.where = where
        self._idle: list[psycopg.Connection[dict[str, Any]]] = []
        self._lock = threading.Lock()
        self._closed = False

    # -- connections -------------------------------------------------------------------------

    def _connect(self) -> psycopg.Connection[dict[str, Any]]:
        try:
            raw = psycopg.connect(self.conninfo, autocommit=True, row_factory=dict_row)
        except psycopg.Error as e:
            raise self._unreachable(e) from e
        try:
            # hz's tables first; procrastinate's where its own connections find them.
            raw.execute(
                "SELECT set_config('search_path', %s || current_setting('search_path'), false)",
                (f"{SCHEMA}, ",),
            )
        except psycopg.Error as e:
            raw.close()
            raise self._unreachable(e) from e
        return raw

    def _unreachable(self, e: BaseException) -> LedgerUnavailable:
        return LedgerUnavailable(
            f"{self.where}: the PostgreSQL ledger cannot be used: {_first_line(e)}",
            hint="is the server up, and the DSN ([system.queue] dsn_env or PG* variables) right?",
        )

    def _refused(self, e: BaseException) -> LedgerError:
        return LedgerError(
            f"{self.where}: the PostgreSQL ledger refused this role: {_first_line(e)}",
            hint="grant the role what docs/deploying-workers.md lists, or run hz queue init "
            "as the schema's owner",
        )

    def _locked(self, e: BaseException) -> LedgerUnavailable:
        return LedgerUnavailable(
            f"{self.where}: the PostgreSQL ledger is locked: another transaction held the lock "
            f"hz waited for over {LOCK_TIMEOUT} s",
            hint="hz retries where a run is at stake; pg_stat_activity shows the session that "
            "holds it",
        )

    @contextmanager
    def _translated(self) -> Iterator[None]:
        """Driver failures as the ledger's errors: a lock waited for too long and a server
        that cannot be reached (or serve) are ``LedgerUnavailable``, a role without hz's
        grants a ``LedgerError``."""
        try:
            yield
        except psycopg.errors.LockNotAvailable as e:
            raise self._locked(e) from e
        except (psycopg.OperationalError, psycopg.InterfaceError) as e:
            raise self._unreachable(e) from e
        except psycopg.errors.InsufficientPrivilege as e:
            raise self._refused(e) from e

    @contextmanager
    def borrow(self) -> Iterator[psycopg.Connection[dict[str, Any]]]:
        """A connection for one statement or transaction; driver failures to reach the server
        become ``LedgerError`` and the connection is dropped."""
        with self._lock:
            raw = self._idle.pop() if self._idle else None
        if raw is None:
            raw = self._connect()
        healthy = False
        try:
            with self._translated():
                yield raw
            healthy = True
        finally:
            usable = (
                healthy or not raw.broken
            ) and raw.info.transaction_status == psycopg.pq.TransactionStatus.IDLE
            with self._lock:
                if usable and not raw.closed and not self._closed and len(self._idle) < MAX_IDLE:
                    self._idle.append(raw)
                    raw = None
            if raw is not None:
                raw.close()

    @property
    def connection(self) -> _Statements:
        return _Statements(self)

    @contextmanager
    def tx(self) -> Iterator[PgConnection]:
        with self.borrow() as raw, raw.transaction():
            yield PgConnection(raw)

    @contextmanager
    def durable(self) -> Iterator[PgConnection]:
        """A transaction flushed to the server's disk at commit, whatever the server's
        ``synchronous_commit`` default."""
        with self.tx() as c:
            c.execute("SET LOCAL synchronous_commit = on")
            yield c

    def lock(self, c: Any, name: str) -> None:
        c.execute(f"SET LOCAL lock_timeout = '{LOCK_TIMEOUT}s'")
        c.execute("SELECT slot FROM hz.locks WHERE slot = ? FOR UPDATE", (lock_slot(name),))

    def thread_done(self) -> None:
        """Nothing: a thread holds no connection of its own outside a statement (each is
        borrowed from the pool and handed back)."""

    def close(self) -> None:
        with self._lock:
            self._closed = True
            idle, self._idle = self._idle, []
        for raw in idle:
            raw.close()

    def __del__(self) -> None:
        # A command that never closed its ledger: its idle connections end with it.
        for raw in getattr(self, "_idle", ()):
            raw.close()

    # -- schema ------------------------------------------------------------------------------

    def version(self) -> int:
        with self.borrow() as raw:
            return _version(raw)

    def migrate(self) -> bool:
        """Bring procrastinate's schema and hz's tables to this hz's version; True when
        something was applied. A database written by a newer hz is refused."""
        if self.version() == SCHEMA_VERSION:
            return False
        # A plain connection (the server's own search_path): procrastinate's objects go where
        # its own connections look for them.
        try:
            raw = psycopg.connect(self.conninfo, autocommit=True, row_factory=dict_row)
        except psycopg.Error as e:
            raise self._unreachable(e) from e
        with self._translated(), raw:
            raw.execute(f"SET lock_timeout = '{LOCK_TIMEOUT}s'")
            fresh = _version(raw) == 0
            if fresh:  # no tables of hz's to lock yet: nobody but its first hz around
                # Taken before the transaction, which then sees what another committed.
                raw.execute("SELECT pg_advisory_lock(%s, %s)", (LOCK_NAMESPACE, MIGRATION_LOCK))
            with raw.transaction():
                if not fresh:  # only a role with rights on hz.meta may lock it
                    raw.execute("LOCK TABLE hz.meta IN EXCLUSIVE MODE")
                return self._apply(raw)

    def _apply(self, raw: psycopg.Connection[dict[str, Any]]) -> bool:
        version = _version(raw)
        if version > SCHEMA_VERSION:
            raise LedgerError(
                f"{self.where}: the run ledger has schema version {version}; this hz knows up "
                f"to {SCHEMA_VERSION}",
                hint="use the newer hz that wrote it",
            )
        if version == SCHEMA_VERSION:
            return False
        present = raw.execute("SELECT to_regclass('procrastinate_jobs') AS t").fetchone()
        if present is None or present["t"] is None:
            from procrastinate.schema import SchemaManager

            raw.execute(SchemaManager.get_schema())
        raw.execute(f"CREATE SCHEMA IF NOT EXISTS {SCHEMA}")
        if version == 0:
            raw.execute(
                "CREATE TABLE IF NOT EXISTS hz.meta (one integer PRIMARY KEY CHECK (one = 1), "
                "version integer NOT NULL)"
            )
        for number in range(version, SCHEMA_VERSION):
            raw.execute(MIGRATIONS[number])
        raw.execute(
            "INSERT INTO hz.meta (one, version) VALUES (1, %s) "
            "ON CONFLICT (one) DO UPDATE SET version = EXCLUDED.version",
            (SCHEMA_VERSION,),
        )
        return True
