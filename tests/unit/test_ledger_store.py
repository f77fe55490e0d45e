"""The run ledger's store: schema migrations, request keys, fencing, ceilings, reconcile."""

from __future__ import annotations

import contextlib
import gc
import os
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from hz.runtime.artifacts.errors import ConfigError
from hz.runtime.artifacts.result import AgentResult
from hz.runtime.config.layers import load_config
from hz.runtime.config.tables import SystemSettings
from hz.runtime.ledger.cancel import cancel
from hz.runtime.ledger.db import BUSY_TIMEOUT_MS, MIGRATIONS, SCHEMA_VERSION, LedgerError, wal
from hz.runtime.ledger.paths import state_dir
from hz.runtime.ledger.reconcile import reconcile
from hz.runtime.ledger.store import (
    Ceilings,
    Ending,
    KeyHeld,
    KeyReused,
    Ledger,
    Owner,
    StaleOwner,
    hold_delay,
)
from hz.runtime.ledger.store import (
    LeaseClock as Clock,
)
from hz.runtime.runners.protocol import RunRequest
from tests.helpers.packets import make_packet


@pytest.fixture
def ledger(new_ledger: Any) -> Ledger:
    """A ledger on each backend (``new_ledger`` in tests/conftest.py)."""
    return new_ledger()  # type: ignore[no-any-return]


def dead_owner() -> Owner:
    """An owner whose process has exited on this boot."""
    child = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    )
    me = Owner.this_process()
    name = f"{me.name.split(':')[0]}:{child.stdout.strip()}"
    return Owner(name, int(child.stdout), 1, me.boot, pidns=me.pidns)


def new_run(ledger: Ledger, tmp_path: Path, key: str = "k", **kwargs: object) -> tuple[str, int]:
    return ledger.create(
        make_packet(),
        key=key,
        workdir=tmp_path,
        receipt_dir=None,
        **kwargs,  # type: ignore[arg-type]
    )


def test_a_fresh_ledger_has_the_current_schema_in_wal_mode(tmp_path: Path) -> None:
    c = Ledger(tmp_path / "ledger.sqlite3").connection
    assert c.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    assert c.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert c.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


def test_a_newer_schema_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "ledger.sqlite3"
    sqlite3.connect(path).execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    with pytest.raises(LedgerError) as caught:
        Ledger(path)
    assert caught.value.message == (
        f"{path}: the run ledger has schema version {SCHEMA_VERSION + 1}; this hz knows up to "
        f"{SCHEMA_VERSION}"
    )


def test_a_ledger_of_the_first_schema_is_migrated_with_its_runs(tmp_path: Path) -> None:
    path = tmp_path / "ledger.sqlite3"
    with contextlib.closing(sqlite3.connect(path)) as old:
        old.executescript(MIGRATIONS[0])
        old.execute(
            "INSERT INTO runs (id, request_key, state, job_name, job_digest, inputs_sha256, "
            "workdir, packet_json, max_usd, created_at) VALUES "
            "('run_old', 'k', 'completed', 'greet', 'd', 'i', '/w', '{}', 0.5, 1.0)"
        )
        old.execute("PRAGMA user_version = 1")
        old.commit()
    ledger = Ledger(path)
    assert ledger.connection.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    [row] = ledger.select()
    assert (row.id, row.state, row.queue, row.priority, row.held_since, row.target) == (
        "run_old",
        "completed",
        "default",
        0,
        None,
        None,
    )
    assert row.bad == ()
    assert ledger.get("run_old").request_key == "k"
    run_id, _ = new_run(ledger, tmp_path, key="new")  # and the migrated ledger takes new runs
    assert ledger.claim_next(Owner.this_process(), queues=("default",)) == (run_id, 1)


def test_two_processes_migrate_one_fresh_ledger_once(tmp_path: Path) -> None:
    path = tmp_path / "ledger.sqlite3"
    code = (
        "import sys; from pathlib import Path; from hz.runtime.ledger.store import Ledger; "
        "Ledger(Path(sys.argv[1]))"
    )
    processes = [subprocess.Popen([sys.executable, "-c", code, str(path)]) for _ in range(4)]
    assert [p.wait(timeout=60) for p in processes] == [0, 0, 0, 0]
    assert sqlite3.connect(path).execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION


def _writing(path: Path) -> sqlite3.Connection:
    """Another process's write transaction on a ledger file not yet in WAL mode."""
    other = sqlite3.connect(path, isolation_level=None)
    other.execute("CREATE TABLE t (x)")
    other.execute("BEGIN IMMEDIATE")
    other.execute("INSERT INTO t VALUES (1)")
    return other


def test_wal_waits_for_a_fresh_ledger_another_process_is_writing(tmp_path: Path) -> None:
    """SQLite answers "database is locked" at once here (no busy handler): the race of two
    processes opening one fresh ledger that CI met. hz tries the switch again."""
    path = tmp_path / "ledger.sqlite3"
    other = _writing(path)
    raw = sqlite3.connect(path, timeout=0.05, isolation_level=None)
    pauses: list[float] = []

    def sleep(seconds: float) -> None:
        pauses.append(seconds)
        if len(pauses) == 2:
            other.execute("COMMIT")  # the other process is done

    wal(raw, sleep=sleep)
    assert raw.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert pauses == [0.001, 0.002]


def test_wal_gives_up_when_the_busy_timeout_has_passed(tmp_path: Path) -> None:
    path = tmp_path / "ledger.sqlite3"
    other = _writing(path)
    raw = sqlite3.connect(path, timeout=0.05, isolation_level=None)
    now = [0.0]

    def sleep(seconds: float) -> None:
        now[0] += 1.0

    with pytest.raises(sqlite3.OperationalError, match=r"^database is locked$"):
        wal(raw, clock=lambda: now[0], sleep=sleep)
    assert now[0] == BUSY_TIMEOUT_MS / 1000
    other.execute("ROLLBACK")


def test_the_state_dir_comes_from_the_environment_then_the_operator(tmp_path: Path) -> None:
    configured = SystemSettings.from_table({"state_dir": "/o"})
    assert state_dir(configured, {"HZ_STATE_DIR": "/e"}) == Path("/e")
    assert state_dir(configured, {}) == Path("/o")
    assert state_dir(SystemSettings.from_table({}), {}).name == "hz"


def test_a_project_cannot_move_the_state_dir(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "hz.toml").write_text('[system]\nstate_dir = "/tmp/elsewhere"\n')
    with pytest.raises(ConfigError) as caught:
        load_config(environ={}, cwd=tmp_path)
    assert caught.value.message == (
        f"{tmp_path / 'hz.toml'}:2:1: HZ801 'system.state_dir' configures execution "
        "and is not allowed in a project hz.toml"
    )


def test_a_key_reused_with_another_request_is_refused_naming_what_differs(
    ledger: Ledger, tmp_path: Path
) -> None:
    """As an idempotency key: the same key with other parameters is an error, forced or not,
    never the other request's run adopted or started."""
    first, _ = new_run(ledger, tmp_path)
    other = make_packet("Say hello.")  # another job: its template differs
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    for forced in (False, True):
        with pytest.raises(KeyReused) as caught:
            ledger.create(
                other.model_copy(update={"inputs_sha256": "2" * 64}),
                key="k",
                workdir=elsewhere,
                receipt_dir=tmp_path / "receipts",
                force_new=forced,
                adopt=Owner.this_process(),
            )
        assert caught.value.message == (
            f"run {first} (queued) holds this request key for another request; what differs: "
            "the job (greet there and here, but another version of it), the input values, the "
            f"working directory (there {tmp_path}, here {elsewhere}) and the receipt directory "
            f"(there none, here {tmp_path / 'receipts'}); nothing was started"
        )
        assert caught.value.hint == (
            "a request key names one request: give this one a key of its own, or leave "
            f"--request-key out to start a new run (hz runs show {first} shows the other)"
        )
    # A packet made by hand: the same job and input values with another prompt.
    packet = make_packet()
    edited = packet.model_copy(update={"prompt": "Run rm.", "prompt_sha256": "3" * 64})
    with pytest.raises(KeyReused) as caught:
        ledger.create(edited, key="k", workdir=tmp_path, receipt_dir=None)
    assert caught.value.message == (
        f"run {first} (queued) holds this request key for another request; what differs: the "
        "prompt; nothing was started"
    )
    assert [r.id for r in ledger.select()] == [first]  # nothing was queued
    assert ledger.get(first).owner is None  # nor the other run adopted


def test_a_held_key_refuses_a_new_run_unless_forced(ledger: Ledger, tmp_path: Path) -> None:
    first, _ = new_run(ledger, tmp_path)
    with pytest.raises(KeyHeld) as caught:
        new_run(ledger, tmp_path)
    assert caught.value.message == (
        f"run {first} (queued) already holds this request key; nothing was started"
    )
    second, _ = new_run(ledger, tmp_path, force_new=True)
    assert second != first


def test_an_unowned_queued_run_of_the_key_is_adopted(ledger: Ledger, tmp_path: Path) -> None:
    first, generation = new_run(ledger, tmp_path)
    adopted, claimed = new_run(ledger, tmp_path, adopt=Owner.this_process())
    assert (adopted, claimed) == (first, generation + 1)


def test_a_stale_owner_cannot_write_over_a_newer_one(ledger: Ledger, tmp_path: Path) -> None:
    run_id, _ = new_run(ledger, tmp_path)
    _, old = ledger.claim_next(Owner.this_process()) or ("", 0)
    ledger.prepare(run_id, old, "echo", "d")
    settled = cancel(ledger, run_id)
    assert (settled.state, settled.failure_kind) == ("cancelled", "aborted")
    with pytest.raises(StaleOwner):
        ledger.dispatch(run_id, old, Ceilings())
    with pytest.raises(StaleOwner):
        ledger.finish(run_id, old, Ending("completed"))
    assert ledger.get(run_id).state == "cancelled"


def test_a_reservation_becomes_the_cost_and_an_unknown_cost_keeps_it(
    ledger: Ledger, tmp_path: Path
) -> None:
    ceilings = Ceilings(per_day=1.0)
    runs = []
    for key in ("a", "b", "c"):
        run_id, _ = new_run(ledger, tmp_path, key=key)
        _, generation = ledger.claim_next(Owner.this_process()) or ("", 0)
        ledger.prepare(run_id, generation, "echo", "d")
        runs.append((run_id, generation))
    # make_packet's budget is $0.50: two fit under $1.00, the third does not.
    assert ledger.dispatch(*runs[0], ceilings) is None
    assert ledger.dispatch(*runs[1], ceilings) is None
    assert ledger.dispatch(*runs[2], ceilings) == (
        "reserving $0.50 would cross [system.budget] max_usd_per_day of $1.00 "
        "($1.00 reserved or spent today)"
    )
    ledger.finish(*runs[0], Ending("completed", cost_usd=0.0))
    assert ledger.dispatch(*runs[2], ceilings) is None
    ledger.finish(*runs[1], Ending("completed"))
    reserved = [ledger.get(r).reserved_usd for r, _ in runs]
    assert reserved == [0.0, 0.5, 0.5]


def test_the_days_of_a_ceiling_are_the_databases_not_the_hosts(
    ledger: Ledger, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A host whose clock is a day ahead (or behind) counts the same day's reservations as
    every other host: the day, and when a run was dispatched, are the database's."""
    ceilings = Ceilings(per_day=1.0)
    runs = []
    for key in ("a", "b", "c", "d"):
        run_id, _ = new_run(ledger, tmp_path, key=key)
        _, generation = ledger.claim_next(Owner.this_process()) or ("", 0)
        ledger.prepare(run_id, generation, "echo", "d")
        runs.append((run_id, generation))
    assert ledger.dispatch(*runs[0], ceilings) is None
    refused = (
        "reserving $0.50 would cross [system.budget] max_usd_per_day of $1.00 "
        "($1.00 reserved or spent today)"
    )
    real = time.time
    for skew in (-86400.0, 86400.0):
        with monkeypatch.context() as patched:
            patched.setattr(time, "time", lambda skew=skew, real=real: real() + skew)
            if skew < 0:  # a host a day behind reserves today's room, not yesterday's
                assert ledger.dispatch(*runs[1], ceilings) is None
                assert abs((ledger.get(runs[1][0]).dispatched_at or 0.0) - real()) < 60
            else:  # a host a day ahead finds today's room taken, not tomorrow's free
                assert ledger.dispatch(*runs[2], ceilings) == refused
    assert ledger.dispatch(*runs[3], ceilings) == refused


def test_a_held_runs_wait_is_half_its_hold_within_the_shortest_and_the_longest() -> None:
    noon = 20000 * 86400 + 43200.0
    assert [hold_delay(held, noon) for held in (0, 1, 2, 3, 10, 100)] == [1, 1, 1, 1.5, 5, 30]
    waits = [hold_delay(held, noon, (0.25, 4)) for held in (0, 0.5, 1, 6, 100)]
    assert waits == [0.25, 0.25, 0.5, 3, 4]
    # Never past the next UTC day, when a per-day ceiling's window opens again.
    assert hold_delay(100, noon + 43200 - 2, (0.25, 4)) == pytest.approx(2.1)


def test_a_per_runner_ceiling_counts_that_runner_only(ledger: Ledger, tmp_path: Path) -> None:
    ceilings = Ceilings(per_runner=(("echo", 0.6),))
    outcomes = []
    for key, runner in (("a", "command"), ("b", "echo"), ("c", "echo")):
        run_id, _ = new_run(ledger, tmp_path, key=key)
        _, generation = ledger.claim_next(Owner.this_process()) or ("", 0)
        ledger.prepare(run_id, generation, runner, "d")
        outcomes.append(ledger.dispatch(run_id, generation, ceilings))
    assert outcomes[:2] == [None, None]
    assert outcomes[2] is not None
    assert "per_runner.echo of $0.60" in outcomes[2]


def test_reconcile_retries_a_run_whose_owner_died_before_dispatch_once(
    ledger: Ledger, tmp_path: Path
) -> None:
    run_id, _ = new_run(ledger, tmp_path)
    _, generation = ledger.claim_next(dead_owner()) or ("", 0)
    ledger.prepare(run_id, generation, "echo", "d")
    [settled] = reconcile(ledger)
    assert (settled.run_id, settled.was, settled.state) == (run_id, "prepared", "failed")
    assert reconcile(ledger) == []  # idempotent
    old, retry = ledger.select()
    assert (old.failure_kind, retry.state, retry.attempt, retry.retry_of) == (
        "not_started",
        "queued",
        2,
        run_id,
    )


def test_reconcile_retries_no_more_than_max_attempts(ledger: Ledger, tmp_path: Path) -> None:
    new_run(ledger, tmp_path, attempt=3)
    _, _generation = ledger.claim_next(dead_owner()) or ("", 0)
    [settled] = reconcile(ledger, max_attempts=3)
    assert settled.detail.endswith("never reached dispatching")
    assert len(ledger.select()) == 1


def test_an_expired_lease_is_a_gone_owner(ledger: Ledger, tmp_path: Path) -> None:
    run_id, _ = new_run(ledger, tmp_path)
    other_host = Owner("elsewhere:1", 1, 1, "another-boot")
    _, _generation = ledger.claim_next(other_host) or ("", 0)
    assert reconcile(ledger) == []  # its lease still runs
    # A lease lapses only once the database has been up a lease (the session's PostgreSQL
    # may be younger than the default 15 s): a short one here.
    ledger.lease_seconds = 0.5
    with ledger.tx() as c:
        c.execute("UPDATE runs SET lease_until = ? WHERE id = ?", (time.time() - 1, run_id))
    assert [s.state for s in reconcile(ledger)] == ["failed"]


def test_a_lease_that_lapsed_while_the_database_was_down_is_not_yet_expired() -> None:
    # No owner could renew while the server was down: its leases are judged only once it has
    # been up for one lease, by the database's clock.
    lapsed = 1000.0
    assert Clock(now=1001.0, started=0.0, lease_seconds=15).expired(lapsed)
    assert not Clock(now=1001.0, started=990.0, lease_seconds=15).expired(lapsed)
    assert Clock(now=1005.0, started=990.0, lease_seconds=15).expired(lapsed)
    assert not Clock(now=999.0, started=0.0, lease_seconds=15).expired(lapsed)
    assert not Clock(now=1001.0, started=0.0, lease_seconds=15).expired(None)


def test_the_ledger_clock_is_the_database_clock(ledger: Ledger) -> None:
    clock = ledger.clock()
    assert abs(clock.now - time.time()) < 5  # the same machine here
    assert clock.started <= clock.now
    assert clock.lease_seconds == ledger.lease_seconds


def test_a_stale_generation_cannot_write_a_terminal_over_uncertain(
    ledger: Ledger, tmp_path: Path
) -> None:
    # An owner on another host whose lease expired (a partition): reconcile settles the run
    # uncertain; the owner, back, finds its generation fenced out.
    run_id, _ = new_run(ledger, tmp_path)
    elsewhere = Owner("elsewhere:1", 1, 1, "another-boot", "another-host")
    _, old = ledger.claim_next(elsewhere) or ("", 0)
    ledger.prepare(run_id, old, "command", "d")
    assert ledger.dispatch(run_id, old, Ceilings()) is None
    ledger.spawned(run_id, old, 1, 1)
    assert reconcile(ledger) == []  # its lease still runs
    # A lease lapses only once the database has been up a lease (the session's PostgreSQL
    # may be younger than the default 15 s): a short one here.
    ledger.lease_seconds = 0.5
    with ledger.tx() as c:
        c.execute("UPDATE runs SET lease_until = ? WHERE id = ?", (time.time() - 1, run_id))
    [settled] = reconcile(ledger)
    assert (settled.was, settled.state) == ("running", "uncertain")
    with pytest.raises(StaleOwner):
        ledger.renew(run_id, old)
    with pytest.raises(StaleOwner):
        ledger.finish(run_id, old, Ending("completed", cost_usd=0.1))
    row = ledger.get(run_id)
    assert (row.state, row.reserved_usd, row.cost_usd) == ("uncertain", 0.5, None)


def test_claiming_a_run_takes_only_a_queued_unowned_one(ledger: Ledger, tmp_path: Path) -> None:
    run_id, _ = new_run(ledger, tmp_path)
    me = Owner.this_process()
    generation = ledger.claim(run_id, me, worker="w1")
    assert generation == 1
    assert ledger.claim(run_id, me, worker="w2") is None  # taken
    other, _ = new_run(ledger, tmp_path, key="other")
    cancel(ledger, other)
    assert ledger.claim(other, me) is None  # cancelled: the ledger says no, whatever the queue
    assert ledger.get(run_id).worker == "w1"


def test_priority_then_age_orders_claims_within_queues(ledger: Ledger, tmp_path: Path) -> None:
    low, _ = new_run(ledger, tmp_path, key="low")
    high, _ = new_run(ledger, tmp_path, key="high", priority=5)
    review, _ = new_run(ledger, tmp_path, key="review", queue="reviews")
    me = Owner.this_process()
    assert (ledger.claim_next(me, queues=("reviews",)) or ("",))[0] == review
    assert [(ledger.claim_next(me) or ("",))[0] for _ in range(3)] == [high, low, ""]


class _Slow:
    """A runner whose session outlasts a few ticks of the run's watcher thread."""

    name = "slow"

    def run(self, request: RunRequest) -> AgentResult:
        time.sleep(0.35)
        return AgentResult(runner="slow", status="completed", draft="ok")


def _open_ledger_files(path: Path) -> int:
    """How many of this process's file descriptors are on the ledger (its -wal and -shm too)."""
    found = 0
    for fd in os.listdir("/proc/self/fd"):
        with contextlib.suppress(OSError):
            found += os.readlink(f"/proc/self/fd/{fd}").startswith(str(path))
    return found


def test_a_runs_watcher_thread_closes_its_connection_as_it_ends(tmp_path: Path) -> None:
    """One connection per run's watcher, left to the garbage collector, made the memory of a
    batch or a worker grow with its runs (and held three files each until collected)."""
    from hz.runtime.ledger.foreground import Request, run_foreground
    from hz.runtime.ledger.owner import Binding, Policy

    path = tmp_path / "ledger.sqlite3"  # PostgreSQL's threads borrow from one pool
    ledger = Ledger(path)
    files = []
    gc.disable()  # what a collection would hide, the thread must not leave
    try:
        for n in range(4):
            outcome = run_foreground(
                ledger,
                Request(make_packet(), f"k{n}", tmp_path, None, False),
                binding=Binding(_Slow(), "slow", ""),
                policy=Policy(),
            )
            assert outcome.state == "completed"
            files.append(_open_ledger_files(path))
    finally:
        gc.enable()
    # SQLite keeps one descriptor of a closed connection for reuse while others hold locks.
    assert files[1:] == files[:1] * 3
