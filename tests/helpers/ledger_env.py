"""Shared set-up for the run ledger's end-to-end tests: an operator configuration binding the
command runner to the fake agent, a contract, and hz as a real process (``Space.hz``,
``Space.popen``) or in this process (``Space.cli``)."""

from __future__ import annotations

import contextlib
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.conftest import CliResult
from tests.fakes.agent import recorded_pids
from tests.helpers.contracts import contract
from tests.helpers.in_process import leaves_nothing, run_main
from tests.helpers.operator import REPO, command_config

#: The variable the PostgreSQL spaces name in ``[system.queue] dsn_env``.
DSN_VARIABLE = "HZ_TEST_LEDGER_DSN"
#: A PostgreSQL space's lease: short, so an expired lease is seen within seconds.
PG_LEASE = 2
#: A PostgreSQL space's poll (``[system.queue] poll_seconds``): a held run's next look and a
#: lost notification are seen within a tenth of a second, not the default second.
PG_POLL = 0.1


@dataclass
class Space:
    root: Path
    config: Path
    state: Path
    pids: Path
    #: The PostgreSQL ledger's DSN; None for the SQLite ledger in ``state``.
    dsn: str | None = None

    def env(self, **extra: str) -> dict[str, str]:
        return {
            **os.environ,
            "PYTHONPATH": str(REPO),
            "HZ_CONFIG": str(self.config),
            "HZ_STATE_DIR": str(self.state),
            **({DSN_VARIABLE: self.dsn} if self.dsn else {}),
            **extra,
        }

    def hz(self, *args: str, timeout: float = 60, **extra: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "hz", *args],
            cwd=self.root,
            env=self.env(**extra),
            capture_output=True,
            text=True,
            timeout=timeout,
        )

    def worker_started(self, slots: int = 1, queues: str = "every queue") -> str:
        """The line ``hz worker`` starts with on this space's ledger."""
        if self.dsn is None:
            where = f"sqlite ledger {self.state / 'ledger.sqlite3'}"
        else:
            from psycopg.conninfo import conninfo_to_dict

            dsn = conninfo_to_dict(self.dsn)
            where = f"postgres ledger postgresql database {dsn['dbname']} on {dsn['host']}"
            where += f" port {dsn['port']}" if dsn.get("port") else ""
        noun = "slot" if slots == 1 else "slots"
        return f"hz: worker: started: {where}, {queues}, {slots} {noun}\n"

    def cli(
        self, *args: str, stdin: str | None = None, cwd: Path | None = None, **extra: str
    ) -> CliResult:
        """``hz ARGS`` in this process, as ``hz`` would run in this space (its configuration,
        state directory and DSN; ``extra`` variables on top), in ``cwd`` (default: the space's
        root): for reads and set-up, where no process is the point. It fails if the call
        leaves a thread, a descriptor or a signal handler behind."""
        env = {
            "HZ_CONFIG": str(self.config),
            "HZ_STATE_DIR": str(self.state),
            **({DSN_VARIABLE: self.dsn} if self.dsn else {}),
            **extra,
        }
        with leaves_nothing(f"hz {' '.join(args)[:80]}"), contextlib.chdir(cwd or self.root):
            return run_main(args, stdin=stdin, env=env)

    def submit(self, who: str, *args: str) -> str:
        """``hz submit greet.yaml --input who=WHO ARGS`` (in process): the queued run's id."""
        done = self.cli("submit", "greet.yaml", "--input", f"who={who}", *args)
        assert done.returncode == 0, done.stderr
        return done.stdout.strip()

    def popen(self, *args: str, **extra: str) -> subprocess.Popen[str]:
        return subprocess.Popen(
            [sys.executable, "-m", "hz", *args],
            cwd=self.root,
            env=self.env(**extra),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )

    def db(self) -> sqlite3.Connection:
        connection = sqlite3.connect(self.state / "ledger.sqlite3", timeout=30)
        connection.row_factory = sqlite3.Row
        return connection

    def rows(self, where: str = "TRUE", params: tuple[Any, ...] = ()) -> list[Any]:
        query = f"SELECT * FROM runs WHERE {where} ORDER BY created_at"
        if self.dsn is not None:
            return pg_rows(self.dsn, query.replace("?", "%s"), params)
        with contextlib.closing(self.db()) as c:
            return c.execute(query, params).fetchall()

    def jobs(self) -> dict[int, str]:
        """procrastinate's jobs: id -> status (PostgreSQL spaces)."""
        assert self.dsn is not None
        rows = pg_rows(self.dsn, "SELECT id, status FROM procrastinate_jobs ORDER BY id", ())
        return {int(r["id"]): str(r["status"]) for r in rows}

    def starts(self) -> list[dict[str, object]]:
        """Every agent leader started (each start appends one line)."""
        if not self.pids.exists():
            return []
        return [p for p in recorded_pids(self.pids) if p["role"] == "leader"]

    def kill_recorded(self) -> None:
        """Never leave an agent behind a failed test."""
        if self.pids.exists():
            for process in recorded_pids(self.pids):
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(int(str(process["pgid"])), signal.SIGKILL)


def pg_rows(dsn: str, query: str, params: tuple[Any, ...]) -> list[Any]:
    import psycopg
    from psycopg.rows import dict_row

    with psycopg.connect(dsn, row_factory=dict_row) as c:
        c.execute("SET search_path TO hz, public")
        return c.execute(query, params).fetchall()  # type: ignore[arg-type]


def space(
    tmp_path: Path,
    *agent_args: str,
    max_usd: float = 0.5,
    timeout: str = "60s",
    extra: str = "",
    dsn: str | None = None,
    lease: float = PG_LEASE,
    poll: float = PG_POLL,
) -> Space:
    """An operator configuration binding the fake agent; with ``dsn``, the PostgreSQL ledger
    (``[system.queue]``, a short lease and poll) instead of the SQLite one."""
    if dsn is not None:
        extra += (
            f'[system.queue]\nbackend = "postgres"\ndsn_env = "{DSN_VARIABLE}"\n'
            f"lease_seconds = {lease:g}\npoll_seconds = {poll:g}\n"
        )
    pids = tmp_path / "pids"
    config = command_config(tmp_path, *agent_args, extra=extra, pids=pids)
    (tmp_path / "greet.yaml").write_text(contract(timeout=timeout, max_usd=max_usd))
    return Space(tmp_path, config, tmp_path / "state", pids, dsn)


def watchdogs(parent: int) -> list[int]:
    """The process chokepoint's watchdogs a worker started (``hz-watchdog`` children)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                argv = f.read().split(b"\0")
            with open(f"/proc/{entry}/stat", encoding="utf-8") as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        if ppid == parent and b"hz-watchdog" in argv:
            found.append(int(entry))
    return found


def until(condition: Callable[[], Any], *, ceiling: float = 30.0, what: str = "") -> Any:
    """Poll ``condition`` every 50 ms until it is truthy; fail after ``ceiling`` seconds."""
    deadline = time.monotonic() + ceiling
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what or condition}")
        time.sleep(0.05)
