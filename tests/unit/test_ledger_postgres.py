"""The PostgreSQL backend in process, on the session's real server: its configuration (the
DSN the libpq way, never a password), its migrations, and the worker's supervision."""

from __future__ import annotations

import asyncio
import shlex
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import psycopg
import pytest

from hz.runtime.artifacts.errors import ConfigError
from hz.runtime.config.layers import load_config
from hz.runtime.ledger.db import LedgerError
from hz.runtime.ledger.owner import Binding, Policy, Slots, Told
from hz.runtime.ledger.pg import require
from hz.runtime.ledger.pg.connect import target
from hz.runtime.ledger.pg.db import PgDb
from hz.runtime.ledger.pg.dispatch import Procrastinate, make_app
from hz.runtime.ledger.pg.schema import SCHEMA_VERSION
from hz.runtime.ledger.pg.worker import PgWorker, WorkerOptions, _Worker
from hz.runtime.ledger.session import ledger_for
from hz.runtime.ledger.store import Ledger


def operator(tmp_path: Path, queue: str) -> Path:
    path = tmp_path / "operator.toml"
    path.write_text("[system.queue]\n" + queue)
    return path


def config_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, queue: str, dsn: str | None = None
) -> str:
    if dsn is None:
        monkeypatch.delenv("LEDGER_DSN", raising=False)
    else:
        monkeypatch.setenv("LEDGER_DSN", dsn)
    config = load_config(environ={"HZ_CONFIG": str(operator(tmp_path, queue))})
    with pytest.raises(ConfigError) as caught:
        ledger_for(config)
    return caught.value.message


def test_a_password_is_never_configured(tmp_path: Path) -> None:
    path = operator(tmp_path, 'dsn_env = "host=db password=hunter2"\n')
    with pytest.raises(ConfigError) as caught:
        load_config(environ={"HZ_CONFIG": str(path)})
    assert caught.value.message == (
        f"{path}:2:1: [system.queue] dsn_env holds a password; a password is never configured "
        "here: give it the libpq way (PGPASSWORD, ~/.pgpass, or the DSN in the environment "
        "variable [system.queue] dsn_env names)"
    )
    assert "hunter2" not in str(caught.value.hint)
    path = operator(tmp_path, 'dsn_env = "postgresql://me@db/hz"\n')
    with pytest.raises(ConfigError) as caught:
        load_config(environ={"HZ_CONFIG": str(path)})
    assert caught.value.message == (
        f"{path}:2:1: [system.queue] dsn_env must be the name of an environment variable that "
        "holds the DSN"
    )


def test_a_project_cannot_choose_the_queue_backend(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "hz.toml").write_text('[system.queue]\nbackend = "postgres"\n')
    with pytest.raises(ConfigError) as caught:
        load_config(environ={}, cwd=tmp_path)
    assert caught.value.message == (
        f"{tmp_path / 'hz.toml'}:2:1: HZ801 'system.queue.backend' configures execution "
        "and is not allowed in a project hz.toml"
    )


def test_the_dsn_variable_must_be_set_and_a_dsn(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    queue = 'backend = "postgres"\ndsn_env = "LEDGER_DSN"\n'
    assert config_error(tmp_path, monkeypatch, queue) == (
        "[system.queue] dsn_env names the environment variable LEDGER_DSN, which is not set "
        "or empty"
    )
    assert config_error(tmp_path, monkeypatch, queue, "host=db password='unclosed") == (
        "environment variable LEDGER_DSN: not a PostgreSQL connection string (libpq key=value "
        "pairs or a postgresql:// URI)"
    )
    assert config_error(tmp_path, monkeypatch, queue, "x" * 5000) == (
        "environment variable LEDGER_DSN: a DSN of at most 4096 characters without NUL is expected"
    )


def test_the_target_names_the_database_never_the_password() -> None:
    found = target(
        {"dsn_env": "D"}, {"D": "host=db.example port=5433 dbname=hz user=me password=s3cret"}
    )
    assert found.where == "postgresql database hz on db.example port 5433"
    assert "s3cret" in found.conninfo
    assert "s3cret" not in repr(found)
    assert "connect_timeout=10" in found.conninfo
    from_env = target({}, {"PGHOST": "h", "PGDATABASE": "d"})
    assert (from_env.conninfo, from_env.where) == (
        "connect_timeout=10",
        "postgresql database d on h",
    )


def test_config_show_names_the_variable_not_the_dsn(tmp_path: Path, cli: Any) -> None:
    path = operator(tmp_path, 'backend = "postgres"\ndsn_env = "LEDGER_DSN"\n')
    shown = cli("config", "show", env={"HZ_CONFIG": str(path), "LEDGER_DSN": "password=x"})
    assert shown.returncode == 0, shown.stderr
    assert 'dsn_env = "LEDGER_DSN"' in shown.stdout
    assert "password" not in shown.stdout


def test_a_missing_extra_names_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "procrastinate", None)
    with pytest.raises(ConfigError) as caught:
        require()
    assert caught.value.message == (
        '[system.queue] backend = "postgres" needs psycopg and procrastinate (procrastinate is '
        "not installed)"
    )
    assert caught.value.hint == (
        f"install the extra into hz's environment: {shlex.quote(sys.executable)} -m pip install "
        "'hz-contracts[postgres]'"
    )


def test_poll_seconds_sets_both_procrastinate_polls(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, pg_dsn: str
) -> None:
    monkeypatch.setenv("LEDGER_DSN", pg_dsn)

    def polls(queue: str) -> tuple[float | None, Any, Any]:
        config = load_config(environ={"HZ_CONFIG": str(operator(tmp_path, queue))})
        ledger = ledger_for(config)
        pg = PgWorker(
            ledger,
            make_app(pg_dsn),
            Slots(1, Binding(runner=None, name="none", settings_digest=""), Policy()),  # type: ignore[arg-type]
            Told(lambda outcome: None, lambda run_id, error: None),
            options=WorkerOptions(),
            on_settled=lambda settled: None,
            note=lambda line: None,
        )
        options = pg._worker_options()
        return (
            ledger.poll_seconds,
            options["fetch_job_polling_interval"],
            options["abort_job_polling_interval"],
        )

    base = 'backend = "postgres"\ndsn_env = "LEDGER_DSN"\n'
    assert polls(base) == (None, 1.0, 1.0)
    assert polls(base + "poll_seconds = 0.25\n") == (0.25, 0.25, 0.25)
    path = operator(tmp_path, base + "poll_seconds = 0\n")
    with pytest.raises(ConfigError) as caught:
        load_config(environ={"HZ_CONFIG": str(path)})
    assert caught.value.message == (
        f"{path}:4:1: [system.queue] poll_seconds must be a number of seconds from 0.01 to 60, "
        "got 0"
    )


def test_an_unreachable_server_is_a_ledger_error(tmp_path: Path) -> None:
    db = PgDb(f"host={tmp_path} port=1 dbname=none connect_timeout=2", where="the void")
    with pytest.raises(LedgerError) as caught:
        db.migrate()
    assert caught.value.message.startswith("the void: the PostgreSQL ledger cannot be used: ")


def test_four_processes_migrate_one_empty_database_once(pg_cluster: Any) -> None:
    name = f"hz_empty_{time.time_ns()}"
    pg_cluster.admin(f"CREATE DATABASE {name}")
    dsn = pg_cluster.dsn(name)
    code = (
        "import sys; from hz.runtime.ledger.pg.db import PgDb; "
        "print(PgDb(sys.argv[1], where='w').migrate())"
    )
    try:
        racing = [
            subprocess.Popen([sys.executable, "-c", code, dsn], stdout=subprocess.PIPE, text=True)
            for _ in range(4)
        ]
        outputs = sorted(p.communicate(timeout=60)[0] for p in racing)
        assert [p.returncode for p in racing] == [0, 0, 0, 0]
        assert outputs == ["False\n", "False\n", "False\n", "True\n"]
        with psycopg.connect(dsn) as c:
            assert c.execute("SELECT version FROM hz.meta").fetchall() == [(SCHEMA_VERSION,)]
            assert c.execute("SELECT to_regclass('procrastinate_jobs')").fetchone() is not None
    finally:
        pg_cluster.drop_database(name)


def test_a_ledger_of_the_previous_schema_is_migrated_with_its_runs(pg_dsn: str) -> None:
    """Version 3 had no ``target``, no pid namespaces, no table of locks, none of schedules
    and no publish steps: the migrations add them, the runs before them have none."""
    with psycopg.connect(pg_dsn, autocommit=True) as c:
        c.execute(
            "ALTER TABLE hz.runs DROP COLUMN target, DROP COLUMN owner_pidns, DROP COLUMN pidns"
        )
        c.execute("DROP TABLE hz.locks")
        c.execute("DROP TABLE hz.schedules")
        c.execute("DROP TABLE hz.publish_steps")
        c.execute("UPDATE hz.meta SET version = 3")
        c.execute(
            "INSERT INTO hz.runs (id, request_key, state, job_name, job_digest, inputs_sha256, "
            "workdir, packet_json, max_usd, created_at) VALUES "
            "('run_old', 'k', 'completed', 'greet', 'd', 'i', '/w', '{}', 0.5, 1.0)"
        )
    assert PgDb(pg_dsn, where="w").migrate() is True
    ledger = Ledger(PgDb(pg_dsn, where="w"))
    try:
        row = ledger.get("run_old")
        assert (row.state, row.target, row.owner_pidns, row.pidns, row.bad) == (
            "completed",
            None,
            None,
            None,
            (),
        )
        assert ledger.steps("run_old") == []
    finally:
        ledger.close()
    with psycopg.connect(pg_dsn) as c:
        assert c.execute("SELECT version FROM hz.meta").fetchall() == [(SCHEMA_VERSION,)]


def test_a_newer_schema_is_refused(pg_dsn: str) -> None:
    with psycopg.connect(pg_dsn, autocommit=True) as c:
        c.execute("UPDATE hz.meta SET version = %s", (SCHEMA_VERSION + 1,))
    with pytest.raises(LedgerError) as caught:
        PgDb(pg_dsn, where="w").migrate()
    assert caught.value.message == (
        f"w: the run ledger has schema version {SCHEMA_VERSION + 1}; this hz knows up to "
        f"{SCHEMA_VERSION}"
    )


def test_the_side_task_monitor_watches_every_side_task(pg_dsn: str) -> None:
    # procrastinate's own monitor stops watching once the first side task ends (its issue
    # #1597): the periodic deferrer ends at once without periodic tasks.
    async def scenario() -> _Worker:
        worker = _Worker(make_app(pg_dsn), install_signal_handlers=False)

        async def ends() -> None:
            return None

        async def fails() -> None:
            await asyncio.sleep(0.05)
            raise RuntimeError("connection lost")

        tasks = [
            asyncio.create_task(ends(), name="deferrer"),
            asyncio.create_task(asyncio.sleep(60), name="update_heartbeats"),
            asyncio.create_task(fails(), name="listener"),
        ]
        await asyncio.wait_for(worker._monitor_side_tasks(tasks), timeout=5)
        for task in tasks:
            task.cancel()
        return worker

    worker = asyncio.run(scenario())
    assert worker.side_failure == "its side task listener failed: connection lost"
    assert worker._stop_event.is_set()


def test_a_worker_whose_heartbeat_ended_is_restarted(pg_dsn: str) -> None:
    ledger = Ledger(PgDb(pg_dsn, where="w"), dispatcher=Procrastinate(pg_dsn))
    notes: list[str] = []
    pg = PgWorker(
        ledger,
        make_app(pg_dsn),
        Slots(1, Binding(runner=None, name="none", settings_digest=""), Policy()),  # type: ignore[arg-type]
        Told(lambda outcome: None, lambda run_id, error: None),
        options=WorkerOptions(),
        on_settled=lambda settled: None,
        note=notes.append,
    )

    async def heartbeat() -> asyncio.Task[Any] | None:
        return next((t for t in asyncio.all_tasks() if t.get_name() == "update_heartbeats"), None)

    async def scenario() -> None:
        pg._wake = asyncio.Event()
        supervisor = asyncio.create_task(pg._supervise())
        deadline = time.monotonic() + 20
        while (first := await heartbeat()) is None:
            assert time.monotonic() < deadline
            await asyncio.sleep(0.05)
        old = pg._worker
        first.cancel()  # the heartbeat side task ends
        while pg._worker is old or pg._worker is None or (await heartbeat()) in (None, first):
            assert time.monotonic() < deadline, notes
            await asyncio.sleep(0.05)
        pg.stop("the test is over")
        await asyncio.wait_for(supervisor, timeout=20)

    try:
        asyncio.run(scenario())
    finally:
        ledger.close()
    assert notes == [
        "hz: worker: procrastinate's worker stopped (its side task update_heartbeats ended); "
        "restarting"
    ]


class _Done:
    """A runner whose session ends well at once."""

    name = "scripted"

    def run(self, request: Any) -> Any:
        from hz.runtime.artifacts.result import AgentResult

        return AgentResult(runner="scripted", status="completed", draft="ok")


def test_a_run_whose_report_the_database_cannot_serve_keeps_its_job_succeeded(
    pg_dsn: str, tmp_path: Path
) -> None:
    """The database going away just after a run's end was recorded fails only the report of
    it (said on the error channel): the run's job returns, so procrastinate ends it
    ``succeeded`` as its run ended, never ``failed`` beside a completed run."""
    from types import SimpleNamespace

    from hz.runtime.ledger.db import LedgerUnavailable
    from tests.helpers.packets import make_packet

    ledger = Ledger(PgDb(pg_dsn, where="w"), dispatcher=Procrastinate(pg_dsn))
    errors: list[tuple[str, str]] = []

    def done(outcome: Any) -> None:
        raise LedgerUnavailable("w: the PostgreSQL ledger cannot be used: the server restarts")

    pg = PgWorker(
        ledger,
        make_app(pg_dsn),
        Slots(1, Binding(_Done(), "scripted", ""), Policy()),  # type: ignore[arg-type]
        Told(done, lambda run_id, error: errors.append((run_id, str(error)))),
        options=WorkerOptions(),
        on_settled=lambda settled: None,
        note=lambda line: None,
    )
    try:
        run_id, _ = ledger.create(make_packet(), key="k", workdir=tmp_path, receipt_dir=None)
        row = ledger.get(run_id)
        context = SimpleNamespace(job=SimpleNamespace(id=row.job_id), should_abort=lambda: False)
        assert pg._job(context, run_id=run_id) is None  # type: ignore[arg-type]
        assert ledger.get(run_id).state == "completed"
    finally:
        ledger.close()
    assert errors == [(run_id, "w: the PostgreSQL ledger cannot be used: the server restarts")]


def test_a_completed_run_whose_publish_meets_a_restart_publishes_once(
    pg_dsn: str, tmp_path: Path
) -> None:
    """The database away as the worker makes a completed run's publish steps (made nowhere
    else): waited out as the run's records are, on the clock given, and the draft written
    once; publishing again writes nothing."""
    from types import SimpleNamespace

    from hz.cli.publish import publish_completed
    from hz.runtime.artifacts.models import PublishSpec
    from hz.runtime.ledger.db import LedgerUnavailable
    from tests.helpers.clock import FakeClock
    from tests.helpers.packets import make_packet

    config_file = tmp_path / "config.toml"
    config_file.write_text(
        '[publish]\nmode = "auto"\nallow = ["files.write"]\nfolders = ["reports"]\n'
    )
    (tmp_path / "reports").mkdir()
    config = load_config(environ={"HZ_CONFIG": str(config_file)})
    clock, failures, said = FakeClock(), [2], []

    class Restarting(Ledger):
        def add_steps(self, run_id: str, targets: Any) -> Any:
            if failures[0] > 0:
                failures[0] -= 1
                raise LedgerUnavailable("w: the PostgreSQL ledger cannot be used: restarting")
            return super().add_steps(run_id, targets)

    ledger = Restarting(PgDb(pg_dsn, where="w"), dispatcher=Procrastinate(pg_dsn))
    pg = PgWorker(
        ledger,
        make_app(pg_dsn),
        Slots(1, Binding(_Done(), "scripted", ""), Policy()),  # type: ignore[arg-type]
        Told(
            lambda outcome: said.append(
                publish_completed(ledger, config, outcome.run_id, clock=clock)
            ),
            lambda run_id, error: said.append(str(error)),
        ),
        options=WorkerOptions(),
        on_settled=lambda settled: None,
        note=lambda line: None,
    )
    spec = PublishSpec(to="files.write", args={"path": "reports/out.md"})
    try:
        run_id, _ = ledger.create(
            make_packet(publishes=(spec,)), key="k", workdir=tmp_path, receipt_dir=None
        )
        context = SimpleNamespace(
            job=SimpleNamespace(id=ledger.get(run_id).job_id), should_abort=lambda: False
        )
        assert pg._job(context, run_id=run_id) is None  # type: ignore[arg-type]
        assert said == [0]
        assert clock.slept == [0.1, 0.2]
        assert [(s.state, s.attempts) for s in ledger.steps(run_id)] == [("published", 1)]
        assert publish_completed(ledger, config, run_id, clock=clock) == 0
        assert [(s.state, s.attempts) for s in ledger.steps(run_id)] == [("published", 1)]
    finally:
        ledger.close()
    assert (tmp_path / "reports" / "out.md").read_text() == "ok"


def test_queue_init_migrates_and_names_the_database(
    pg_cluster: Any, cli: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    name = f"hz_init_{time.time_ns()}"
    pg_cluster.admin(f"CREATE DATABASE {name}")
    try:
        path = operator(tmp_path, 'backend = "postgres"\ndsn_env = "LEDGER_DSN"\n')
        monkeypatch.setenv("LEDGER_DSN", pg_cluster.dsn(name))
        monkeypatch.setenv("HZ_CONFIG", str(path))
        where = f"postgresql database {name} on {pg_cluster.root} port {pg_cluster.port}"
        for _ in range(2):  # idempotent
            done = cli("queue", "init")
            assert (done.returncode, done.stdout, done.stderr) == (
                0,
                f"hz: the run ledger is ready: postgres, {where}\n",
                "",
            )
        with psycopg.connect(pg_cluster.dsn(name)) as c:
            assert c.execute("SELECT version FROM hz.meta").fetchall() == [(SCHEMA_VERSION,)]
    finally:
        pg_cluster.drop_database(name)


def test_a_queued_run_whose_job_ended_unrun_is_queued_again(pg_dsn: str, tmp_path: Path) -> None:
    from hz.runtime.ledger.reconcile import reconcile
    from tests.helpers.packets import make_packet

    ledger = Ledger(PgDb(pg_dsn, where="w"), dispatcher=Procrastinate(pg_dsn))
    try:
        run_id, _ = ledger.create(make_packet(), key="k", workdir=tmp_path, receipt_dir=None)
        old = ledger.get(run_id).job_id
        with psycopg.connect(pg_dsn, autocommit=True) as c:  # its claim failed mid-way
            c.execute("UPDATE procrastinate_jobs SET status = 'failed' WHERE id = %s", (old,))
        assert reconcile(ledger) == []
        row = ledger.get(run_id)
        assert (row.state, row.job_id != old) == ("queued", True)
        assert [e.detail for e in ledger.events(run_id)][-1] == (
            "its job ended without running it: queued again"
        )
        assert ledger.redispatch_stranded() == []  # its new job waits: nothing more to do
    finally:
        ledger.close()


def test_abandon_cancels_a_waiting_job_and_fails_a_taken_one(pg_dsn: str) -> None:
    """A run settled elsewhere than by its worker: its job ends without a retry or an abort
    request, inside the settling transaction; a job that has ended already is left alone."""
    db = PgDb(pg_dsn, where="w")
    dispatcher = Procrastinate(pg_dsn)
    try:
        with db.tx() as c:
            waiting, taken, done = (
                dispatcher.enqueue(c, run_id, queue="default", priority=0, not_before=0.0)
                for run_id in ("r-waiting", "r-taken", "r-done")
            )
        with psycopg.connect(pg_dsn, autocommit=True) as c:
            c.execute("UPDATE procrastinate_jobs SET status = 'doing' WHERE id = %s", (taken,))
            c.execute("UPDATE procrastinate_jobs SET status = 'succeeded' WHERE id = %s", (done,))
        for _ in range(2):  # the second time, every job has ended: nothing changes
            with db.tx() as c:
                for job in (waiting, taken, done):
                    dispatcher.abandon(c, job)
            with psycopg.connect(pg_dsn) as c:
                rows = c.execute(
                    "SELECT id, status, abort_requested FROM procrastinate_jobs ORDER BY id"
                ).fetchall()
            assert rows == [
                (waiting, "cancelled", False),
                (taken, "failed", False),
                (done, "succeeded", False),
            ]
    finally:
        db.close()


def test_a_role_with_no_privileges_cannot_hold_hzs_locks(
    pg_dsn: str, pg_cluster: Any, tmp_path: Path
) -> None:
    """Advisory locks need no grant: a role that may only connect held hz's
    ``(26746, hashtext('request_key:nightly'))`` and ``…('ceilings')`` for ever, and every
    submit with that key, every dispatch under a spend ceiling, waited with it (attack on issue
    21, H4). hz's locks are rows of its own table now: that role cannot take them, and what it
    holds of the old ones is nobody's concern."""
    import secrets
    import threading

    from hz.runtime.ledger.store import Ceilings, Owner
    from tests.helpers.packets import make_packet

    mallory = f"mallory_{secrets.token_hex(4)}"
    pg_cluster.admin(f"CREATE ROLE {mallory} LOGIN")
    squatter = psycopg.connect(pg_dsn.replace("user=postgres", f"user={mallory}"), autocommit=True)
    ledger = Ledger(PgDb(pg_dsn, where="w"), dispatcher=Procrastinate(pg_dsn))
    try:
        for name in ("request_key:nightly", "ceilings"):
            squatter.execute("SELECT pg_advisory_lock(26746, hashtext(%s))", (name,))
        with pytest.raises(psycopg.errors.InsufficientPrivilege) as denied:
            squatter.execute("SELECT slot FROM hz.locks FOR UPDATE")
        assert str(denied.value).splitlines()[0] == "permission denied for schema hz"
        done: list[str] = []

        def submit_and_dispatch() -> None:
            run_id, generation = ledger.create(
                make_packet(),
                key="nightly",
                workdir=tmp_path,
                receipt_dir=None,
                adopt=Owner.this_process(),
            )
            ledger.prepare(run_id, generation, "echo", "d")
            refusal = ledger.dispatch(run_id, generation, Ceilings(per_day=100.0))
            done.append(f"{ledger.get(run_id).state} {refusal}")

        worker = threading.Thread(target=submit_and_dispatch, daemon=True)
        worker.start()
        worker.join(timeout=10)
        assert done == ["dispatching None"]
    finally:
        squatter.close()  # a run stuck behind it (before the fix) goes on, and ends
        ledger.close()
        pg_cluster.admin(f"DROP ROLE {mallory}")


def test_a_lock_held_too_long_is_a_ledger_unavailable(
    pg_dsn: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A transaction of hz's holding a lock past ``LOCK_TIMEOUT`` (a client cut off
    mid-transaction): the next one waits that long, then fails as a fault worth retrying."""
    from hz.runtime.ledger.db import LedgerUnavailable
    from hz.runtime.ledger.pg import db as pg_db
    from hz.runtime.ledger.pg.db import lock_slot
    from tests.helpers.packets import make_packet

    ledger = Ledger(PgDb(pg_dsn, where="w"), dispatcher=Procrastinate(pg_dsn))
    holder = psycopg.connect(pg_dsn)
    try:
        holder.execute(
            "SELECT 1 FROM hz.locks WHERE slot = %s FOR UPDATE", (lock_slot("request_key:k"),)
        )
        monkeypatch.setattr(pg_db, "LOCK_TIMEOUT", 1)
        with pytest.raises(LedgerUnavailable) as caught:
            ledger.create(make_packet(), key="k", workdir=tmp_path, receipt_dir=None)
        assert caught.value.message == (
            "w: the PostgreSQL ledger is locked: another transaction held the lock hz waited "
            "for over 1 s"
        )
        assert ledger.select() == []
    finally:
        holder.close()
        ledger.close()
