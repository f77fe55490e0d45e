"""The run ledger under faults: a disk that fills up, a database cut or restarted, clocks that
jump, an owner stopped (SIGSTOP). For each: no exit 3, no lost result, no live run killed, no
run started twice.

The first half runs in process, with injected clocks and short leases and patience; the
second drives hz as real processes where process behaviour is the point (a whole process
under ``faketime``, SIGSTOP/SIGCONT).
"""

from __future__ import annotations

import contextlib
import json
import shutil
import signal
import sqlite3
import stat
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from hz.runtime.artifacts.result import AgentResult
from hz.runtime.ledger import handle as owner_module
from hz.runtime.ledger.cancel import cancel
from hz.runtime.ledger.db import LedgerDamaged, LedgerUnavailable
from hz.runtime.ledger.foreground import Request, run_foreground
from hz.runtime.ledger.owner import Binding, Policy, Slots, Told, run_owned
from hz.runtime.ledger.reconcile import owner_gone, reconcile, take_over
from hz.runtime.ledger.store import LeaseClock as Clock
from hz.runtime.ledger.store import Ledger, Owner
from hz.runtime.ledger.worker import Pool, from_queue
from hz.runtime.runners.protocol import RunRequest
from tests.fakes.agent import recorded_pids
from tests.helpers.faults import SmallDisk
from tests.helpers.ledger_env import Space, space, until
from tests.helpers.packets import make_packet
from tests.helpers.scripted import Answers

# Its children run code no in-process test runs: coverage measures them.
pytestmark = pytest.mark.child_coverage

DONE = AgentResult(runner="scripted", status="completed", draft="the paid-for draft")


class Doing:
    """A runner that does ``act()`` (fill the disk, wait) and then answers ``result``."""

    name = "scripted"

    def __init__(self, act: Callable[[], None], result: AgentResult = DONE) -> None:
        self.act = act
        self.result = result
        self.calls = 0

    def run(self, request: RunRequest) -> AgentResult:
        self.calls += 1
        self.act()
        return self.result


def owned_run(ledger: Ledger, workdir: Path, key: str = "k") -> tuple[str, int]:
    return ledger.create(
        make_packet(), key=key, workdir=workdir, receipt_dir=None, adopt=Owner.this_process()
    )


@pytest.fixture
def patience(monkeypatch: pytest.MonkeyPatch) -> None:
    """The owner's patience with a database that cannot take its record: half a second."""
    monkeypatch.setattr(owner_module, "COMMIT_PATIENCE", 0.5)


# -- 4. disk full as the session ends -----------------------------------------------------------


def test_a_result_the_full_disk_cannot_take_is_saved_and_named(
    small_disk: SmallDisk, tmp_path: Path, patience: None
) -> None:
    ledger = Ledger(small_disk.root / "ledger.sqlite3")
    run_id, generation = owned_run(ledger, tmp_path)
    runner = Doing(small_disk.fill)
    outcome = run_owned(
        ledger, run_id, generation, binding=Binding(runner, "scripted", ""), policy=Policy()
    )
    assert (outcome.state, runner.calls) == ("completed", 1)
    assert outcome.unrecorded is not None
    assert outcome.unrecorded.message == (
        f"{small_disk.root / 'ledger.sqlite3'}: the run ledger cannot be used now: database or "
        "disk is full"
    )
    assert outcome.saved is not None
    assert outcome.save_error is None
    assert stat.S_IMODE(outcome.saved.stat().st_mode) == 0o600
    saved = json.loads(outcome.saved.read_text())
    assert (saved["run_id"], saved["state"], saved["result"]["draft"]) == (
        run_id,
        "completed",
        "the paid-for draft",
    )
    outcome.saved.unlink()
    # The row is as the disk left it: live, owned by this (living) process, never run again.
    small_disk.free()
    assert ledger.get(run_id).state == "running" or ledger.get(run_id).state == "dispatching"
    assert reconcile(ledger) == []


def test_the_finish_is_retried_until_the_disk_has_room_again(
    small_disk: SmallDisk, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(owner_module, "COMMIT_PATIENCE", 30.0)
    ledger = Ledger(small_disk.root / "ledger.sqlite3")
    run_id, generation = owned_run(ledger, tmp_path)

    def fill_then_free_later() -> None:
        small_disk.fill()
        threading.Timer(0.5, small_disk.free).start()

    outcome = run_owned(
        ledger,
        run_id,
        generation,
        binding=Binding(Doing(fill_then_free_later), "scripted", ""),
        policy=Policy(),
    )
    assert (outcome.state, outcome.unrecorded) == ("completed", None)
    row = ledger.get(run_id)
    assert row.state == "completed"
    assert row.result is not None
    assert row.result["draft"] == "the paid-for draft"


# -- 5. the lease watcher through a spell of disk full ------------------------------------------


@pytest.mark.serial
def test_the_watcher_keeps_renewing_through_a_full_disk(
    small_disk: SmallDisk, tmp_path: Path
) -> None:
    ledger = Ledger(small_disk.root / "ledger.sqlite3", lease_seconds=0.3)
    run_id, generation = owned_run(ledger, tmp_path)
    leases: list[float] = []

    def a_spell_of_disk_full() -> None:
        small_disk.fill()
        time.sleep(0.6)  # two lease lengths: renewals fail all along
        small_disk.free()
        before = ledger.get(run_id).lease_until or 0.0
        deadline = time.monotonic() + 5
        while (ledger.get(run_id).lease_until or 0.0) <= before:  # renewed again
            assert time.monotonic() < deadline, "the lease was never renewed again"
            time.sleep(0.02)
        leases.append(ledger.get(run_id).lease_until or 0.0)

    outcome = run_owned(
        ledger,
        run_id,
        generation,
        binding=Binding(Doing(a_spell_of_disk_full), "scripted", ""),
        policy=Policy(),
    )
    assert outcome.state == "completed"
    assert leases
    assert leases[0] > ledger.clock().now - 0.3


# -- 6, 7. a worker's slot under the same faults ------------------------------------------------


def test_a_worker_slot_waits_out_a_full_disk_and_runs_the_queue(
    small_disk: SmallDisk, tmp_path: Path
) -> None:
    ledger = Ledger(small_disk.root / "ledger.sqlite3")
    run_id, _ = ledger.create(make_packet(), key="k", workdir=tmp_path, receipt_dir=None)
    done: list[str] = []
    troubles: list[str | None] = []
    small_disk.fill()
    pool = Pool(
        ledger,
        Slots(1, Binding(Doing(lambda: None), "scripted", ""), Policy()),
        from_queue(),
        Told(on_done=lambda outcome: (done.append(outcome.state), pool.stop("done"))),
        on_trouble=lambda e: troubles.append(None if e is None else e.message),
    )
    worker = threading.Thread(target=pool.run)
    worker.start()
    until(lambda: troubles, what="the slot to meet the full disk")
    small_disk.free()
    worker.join(timeout=30)
    assert not worker.is_alive()
    assert done == ["completed"]
    assert troubles == [
        f"{small_disk.root / 'ledger.sqlite3'}: the run ledger cannot be used now: database or "
        "disk is full",
        None,
    ]
    assert ledger.get(run_id).state == "completed"


def test_a_worker_on_a_damaged_ledger_stops_and_says_why(tmp_path: Path) -> None:
    path = tmp_path / "ledger.sqlite3"
    ledger = Ledger(path)
    ledger.create(make_packet(), key="k", workdir=tmp_path, receipt_dir=None)
    with ledger.tx() as c:
        c.execute("DROP TABLE events")
    pool = Pool(
        ledger,
        Slots(2, Binding(Doing(lambda: None), "scripted", ""), Policy()),
        from_queue(),
        Told(),
    )
    with pytest.raises(LedgerDamaged) as caught:
        pool.run()
    assert caught.value.message == f"{path}: the run ledger is damaged (no table events)"


def test_a_worker_finding_the_ledger_damaged_as_it_starts_a_run_stops(tmp_path: Path) -> None:
    """The damage is met in the middle of a run's start (a column hz checks only when it writes
    it): the slot used to report it as that run's error and go on, the run stuck ``prepared``,
    a ``--drain`` waiting for it for ever. The pool stops and says why (attack on issue 21,
    H7)."""
    path = tmp_path / "ledger.sqlite3"
    ledger = Ledger(path)
    ledger.create(make_packet(), key="k", workdir=tmp_path, receipt_dir=None)
    with ledger.tx() as c:
        c.execute("ALTER TABLE runs DROP COLUMN held_since")
    errors: list[str] = []
    pool = Pool(
        ledger,
        Slots(1, Binding(Doing(lambda: None), "scripted", ""), Policy()),
        from_queue(),
        Told(on_error=lambda run_id, e: errors.append(str(e))),
    )
    raised: list[BaseException] = []

    def run() -> None:
        try:
            pool.run()
        except BaseException as e:  # what run() raises, for the test to look at
            raised.append(e)

    runner = threading.Thread(target=run, daemon=True)
    runner.start()
    runner.join(timeout=15)
    pool.stop("the test is over")
    runner.join(timeout=15)
    assert (errors, [type(e) for e in raised]) == ([], [LedgerDamaged])
    assert isinstance(raised[0], LedgerDamaged)
    assert raised[0].message == (f"{path}: the run ledger is damaged (no such column: held_since)")


def test_a_queued_row_whose_generation_is_no_whole_number_is_never_claimed(
    tmp_path: Path,
) -> None:
    """``generation`` = 9e999 (REAL infinity in SQLite): claiming it failed with an
    OverflowError (exit 3 of hz worker); it cannot be fenced, so it is not claimed."""
    ledger = Ledger(tmp_path / "ledger.sqlite3")
    odd, _ = ledger.create(make_packet(), key="odd", workdir=tmp_path, receipt_dir=None)
    with ledger.tx() as c:
        c.execute("UPDATE runs SET generation = 9e999 WHERE id = ?", (odd,))
    fine, _ = ledger.create(make_packet(), key="fine", workdir=tmp_path, receipt_dir=None)
    assert ledger.claim_next(Owner.this_process()) == (fine, 1)
    assert ledger.claim_next(Owner.this_process()) is None
    assert ledger.get(odd).bad == ("generation: inf is not a whole number",)


@pytest.mark.serial
def test_a_cancel_racing_a_claim_lets_the_slot_go_on(tmp_path: Path) -> None:
    ledger, other = Ledger(tmp_path / "l.sqlite3"), Ledger(tmp_path / "l.sqlite3")
    first, _ = ledger.create(make_packet(), key="a", workdir=tmp_path, receipt_dir=None)
    second, _ = ledger.create(make_packet(), key="b", workdir=tmp_path, receipt_dir=None)
    take = from_queue()

    def claim_and_get_cancelled(ledger_: Ledger, owner: Owner) -> Any:
        claimed = take(ledger_, owner)
        if claimed is not False and claimed[0] == first:
            cancel(other, first)  # after the claim, before ``prepared``
        return claimed

    done: list[tuple[str, str]] = []
    pool = Pool(
        ledger,
        Slots(1, Binding(Doing(lambda: None), "scripted", ""), Policy()),
        claim_and_get_cancelled,
        Told(on_done=lambda o: (done.append((o.run_id, o.state)), pool.stop("done"))),
    )
    worker = threading.Thread(target=pool.run)
    worker.start()
    worker.join(timeout=30)
    assert done == [(second, "completed")]
    assert (ledger.get(first).state, ledger.get(first).failure_kind) == ("cancelled", "aborted")


# -- 8. hz run waiting out a retry's backoff ----------------------------------------------------


def limited(after: float) -> AgentResult:
    return AgentResult(
        runner="scripted", status="failed", failure_kind="rate_limited", retry_after_seconds=after
    )


@pytest.mark.serial
def test_a_retry_waited_for_keeps_its_lease_and_can_be_cancelled(tmp_path: Path) -> None:
    path = tmp_path / "ledger.sqlite3"
    ledger = Ledger(path, lease_seconds=0.3)
    other = Ledger(path)
    seen: list[float] = []

    def watch_then_cancel() -> None:
        retry = until(
            lambda: next((r for r in other.select() if r.attempt == 2 and r.owner), None),
            what="the retry, owned",
        )
        time.sleep(0.8)  # past two leases of the waiting owner
        row = other.get(retry.id)
        seen.append((row.lease_until or 0.0) - other.clock().now)
        cancel(other, retry.id)

    canceller = threading.Thread(target=watch_then_cancel)
    canceller.start()
    outcome = run_foreground(
        ledger,
        Request(make_packet(), "k", tmp_path, None, False),
        binding=Binding(Answers(limited(3.0), DONE), "scripted", ""),
        policy=Policy(max_attempts=3),
    )
    canceller.join(timeout=10)
    assert seen
    assert seen[0] > 0
    assert (outcome.state, outcome.failure_kind) == ("cancelled", "aborted")
    assert outcome.reason == "settled by another process before the agent started (cancelled)"


# -- 9. a live owner here is never judged gone by clocks ----------------------------------------


@pytest.mark.parametrize("jump", [-3600.0, 3600.0, 1e9])
def test_a_live_owner_here_is_alive_whatever_the_clock(tmp_path: Path, jump: float) -> None:
    ledger = Ledger(tmp_path / "ledger.sqlite3")
    run_id, _ = owned_run(ledger, tmp_path)
    row = ledger.get(run_id)
    clock = Clock(now=time.time() + jump, lease_seconds=ledger.lease_seconds)
    assert clock.expired(row.lease_until) == (jump > 0)
    assert owner_gone(row, clock) is False


def test_a_gone_owner_here_is_gone_whatever_its_lease(tmp_path: Path) -> None:
    ledger = Ledger(tmp_path / "ledger.sqlite3")
    child = subprocess.run(["true"], check=True)
    assert child.returncode == 0
    me = Owner.this_process()
    dead = Owner("here:1", 1 << 21, 12345, me.boot, me.host, me.pidns)
    run_id, _ = ledger.create(
        make_packet(), key="k", workdir=tmp_path, receipt_dir=None, adopt=dead
    )
    assert owner_gone(ledger.get(run_id), Clock(now=time.time() - 3600)) is True


@pytest.mark.serial
def test_an_owner_whose_run_is_being_settled_elsewhere_reports_that_ending(
    tmp_path: Path,
) -> None:
    """The run taken over while its agent ran (a reconciler, a canceller past its ceiling) and
    settled a moment later: the owner reports ``uncertain`` (exit 9), never the live state."""
    path = tmp_path / "ledger.sqlite3"
    ledger, other = Ledger(path), Ledger(path)
    run_id, generation = owned_run(ledger, tmp_path)
    from hz.runtime.ledger.reconcile import settle_lost

    def taken_then_settled_later() -> None:
        taken = take_over(other, other.get(run_id), Owner.this_process())
        assert taken is not None

        def settle() -> None:
            time.sleep(0.5)  # the reconciler killing the group: its grace
            settle_lost(other, taken, generation=taken.generation, why="owner gone")

        threading.Thread(target=settle).start()

    outcome = run_owned(
        ledger,
        run_id,
        generation,
        binding=Binding(Doing(taken_then_settled_later), "scripted", ""),
        policy=Policy(),
    )
    assert outcome.state == "uncertain"
    assert ledger.get(run_id).state == "uncertain"


# -- hz run through a full disk, in process: what the user sees ---------------------------------


def test_hz_run_prints_and_saves_a_result_the_full_disk_cannot_take(
    cli: Any,
    small_disk: SmallDisk,
    tmp_path: Path,
    patience: None,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    (tmp_path / "tmp").mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    s = space(tmp_path, "echo", "--prompt-file={prompt_file}", f"--fill={small_disk.filler}")
    state = small_disk.root / "state"
    done = cli(
        "run",
        "greet.yaml",
        "--input",
        "who=Ann",
        "--no-receipt",
        "-q",
        cwd=s.root,
        env={"HZ_CONFIG": str(s.config), "HZ_STATE_DIR": str(state)},
    )
    assert done.stdout == "Say hi to Ann.\n"  # the draft, as ever
    lines = done.stderr.splitlines()
    [saved] = Path(tempfile.gettempdir()).glob("hz-result-run_*.json")
    try:
        run_id = json.loads(saved.read_text())["run_id"]
        assert (done.returncode, lines) == (
            8,
            [
                f"hz: error: the run ledger could not record how run {run_id} ended "
                f"(completed): {state / 'ledger.sqlite3'}: the run ledger cannot be used now: "
                "database or disk is full",
                f"  hint: its result is printed above; its result is saved in {saved} (readable "
                "by you only); once reconciled, the ledger calls the run uncertain, since "
                "nothing on record saw its end (see docs/runs.md, 'When the ledger cannot be "
                "written')",
            ],
        )
        assert json.loads(saved.read_text())["result"]["draft"] == "Say hi to Ann.\n"
    finally:
        saved.unlink()
    assert len(s.starts()) == 1


# -- real processes ------------------------------------------------------------------------------


def lines_of(s: Space) -> list[str]:
    return [f"{r['id']} {r['state']}" for r in s.rows()]


def running(s: Space) -> bool:
    if s.dsn is None and not (s.state / "ledger.sqlite3").exists():
        return False
    try:
        return any(r["state"] == "running" for r in s.rows())
    except sqlite3.OperationalError:  # created, its tables not yet
        return False


@pytest.mark.serial
def test_hz_run_waits_for_room_to_record_its_result(small_disk: SmallDisk, tmp_path: Path) -> None:
    """The disk fills while the agent works; hz keeps trying its terminal record and takes it
    as soon as there is room: exit 0, the result on record, the agent started once."""
    s = space(tmp_path, "echo", "--prompt-file={prompt_file}", f"--fill={small_disk.filler}")
    s.state = small_disk.root / "state"
    owner = s.popen("run", "greet.yaml", "--input", "who=Ann", "--no-receipt", "-q")
    try:
        until(lambda: s.starts(), what="the agent")
        until(lambda: small_disk.filler.exists(), what="the disk filled")
        time.sleep(1.0)  # the session ends meanwhile; its record waits for room
        assert owner.poll() is None
        small_disk.free()
        out, err = owner.communicate(timeout=60)
    finally:
        if owner.poll() is None:
            owner.kill()
            owner.communicate()
    assert (owner.returncode, err) == (0, "")
    assert out == "Say hi to Ann.\n"
    [row] = s.rows()
    assert (row["state"], len(s.starts())) == ("completed", 1)


def owned_by_hz_run(s: Space, *args: str, **env: str) -> subprocess.Popen[str]:
    """``hz run`` of a session that takes a few seconds, once its run is ``running``."""
    owner = s.popen("run", "greet.yaml", "--input", "who=Ann", "--no-receipt", "-q", *args, **env)
    try:
        until(lambda: running(s), what="the run running")
    except BaseException:
        owner.kill()
        owner.communicate()
        raise
    return owner


@contextlib.contextmanager
def completes_once(s: Space, owner: subprocess.Popen[str], timeout: float = 60) -> Iterator[None]:
    """The block runs while ``owner`` (an ``hz run``) lives; then the owner exits 0 with nothing
    on stderr, its run completed, its agent started once. A failing block kills the owner."""
    err = None
    try:
        yield
        _out, err = owner.communicate(timeout=timeout)
    finally:
        if owner.poll() is None:
            owner.send_signal(signal.SIGCONT)  # a stopped owner, too
            owner.kill()
            owner.communicate()
    assert (owner.returncode, err) == (0, ""), err
    assert [r["state"] for r in s.rows()] == ["completed"]
    assert len(s.starts()) == 1


@pytest.fixture
def faketime() -> str:
    found = shutil.which("faketime")
    if found is None:
        pytest.fail(
            "faketime is missing: .ci/install-debian installs it (apt-get install faketime)"
        )
    return found


@pytest.mark.serial
@pytest.mark.parametrize("jump", ["+60s", "-60s"])
def test_a_clock_that_jumps_never_sees_a_live_owner_gone(
    tmp_path: Path, dsn: str | None, faketime: str, jump: str
) -> None:
    release = tmp_path / "release"  # the agent runs until the test is done looking
    s = space(tmp_path, "echo", "--prompt-file={prompt_file}", f"--until={release}", dsn=dsn)
    owner = owned_by_hz_run(s)
    with completes_once(s, owner):
        hz = [faketime, "-f", jump, sys.executable, "-m", "hz"]
        listed = subprocess.run(
            [*hz, "runs", "list"],
            cwd=s.root,
            env=s.env(),
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert (listed.returncode, listed.stderr) == (0, "")
        assert lines_of(s) == [f"{s.rows()[0]['id']} running"]
        release.touch()


@pytest.mark.serial
def test_an_owner_whose_own_clock_is_behind_is_not_judged_gone(
    tmp_path: Path, faketime: str
) -> None:
    """The owner's leases are written by its clock on SQLite: an hour behind, every lease it
    writes has lapsed for everyone else. Its process lives: it is alive."""
    release = tmp_path / "release"  # the agent runs until the test is done looking
    s = space(tmp_path, "echo", "--prompt-file={prompt_file}", f"--until={release}")
    owner = subprocess.Popen(
        [
            faketime,
            "-f",
            "-1h",
            sys.executable,
            "-m",
            "hz",
            "run",
            "greet.yaml",
            "--input",
            "who=Ann",
            "--no-receipt",
            "-q",
        ],
        cwd=s.root,
        env=s.env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    with completes_once(s, owner):
        until(lambda: running(s), what="the run running")
        listed = s.cli("runs", "list")  # another hz, in this process
        assert (listed.returncode, listed.stderr) == (0, "")
        assert [r["state"] for r in s.rows()] == ["running"]  # looked at while it ran
        release.touch()


@pytest.mark.serial
def test_an_owner_stopped_past_its_lease_is_alive_and_finishes(
    tmp_path: Path, dsn: str | None
) -> None:
    """SIGSTOP (Ctrl-Z) of hz run for two leases: another hz reconciles nothing; SIGCONT and
    the run completes, its agent started once."""
    s = space(tmp_path, "echo", "--prompt-file={prompt_file}", "--delay=2", dsn=dsn, lease=1)
    if dsn is None:
        s.config.write_text(s.config.read_text() + "[system.queue]\nlease_seconds = 1\n")
    owner = owned_by_hz_run(s)
    with completes_once(s, owner):
        owner.send_signal(signal.SIGSTOP)
        time.sleep(2.5)
        listed = s.cli("runs", "list")  # another hz, in this process
        assert (listed.returncode, listed.stderr) == (0, "")
        assert [r["state"] for r in s.rows()] == ["running"]
        owner.send_signal(signal.SIGCONT)


@pytest.mark.serial
def test_a_database_restarted_or_cut_mid_run_loses_nothing(
    tmp_path: Path, pg_cluster: Any, pg_dsn: str
) -> None:
    """PostgreSQL: every connection cut mid-run (mid-transaction for whichever was in one),
    then the server restarted: hz run renews again, records its end, exits 0."""
    import psycopg

    release = tmp_path / "release"  # the agent runs until the server is back
    s = space(
        tmp_path, "echo", "--prompt-file={prompt_file}", f"--until={release}", dsn=pg_dsn, lease=5
    )
    owner = owned_by_hz_run(s)
    with completes_once(s, owner, timeout=90):
        try:
            with psycopg.connect(pg_dsn, autocommit=True) as c:
                c.execute(
                    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                    "WHERE datname = current_database() AND pid <> pg_backend_pid()"
                )
            time.sleep(0.5)
            pg_cluster.stop("fast")
            time.sleep(1.0)
            pg_cluster.start()
        finally:
            release.touch()


# -- attacks on the above: a full disk at each commit, every column wrong in turn ---------------


POINTS = ("prepare", "dispatch", "spawned", "finish")


def fill_at(
    monkeypatch: pytest.MonkeyPatch, disk: SmallDisk, point: str, free_after: float | None
) -> None:
    """Fill the disk just before the owner's ``point`` record (once); free it after a while,
    or never."""
    original = getattr(Ledger, point)
    filled: list[bool] = []

    def filling(self: Ledger, *args: Any, **kwargs: Any) -> Any:
        if not filled:
            filled.append(True)
            disk.fill()
            if free_after is not None:
                threading.Timer(free_after, disk.free).start()
        return original(self, *args, **kwargs)

    monkeypatch.setattr(Ledger, point, filling)


def agent_binding(tmp_path: Path) -> Binding:
    from tests.helpers.operator import command_binding

    return command_binding(tmp_path, "echo", "--prompt-file={prompt_file}")


@pytest.mark.parametrize("point", POINTS)
def test_a_disk_full_for_a_while_at_any_commit_costs_nothing(
    small_disk: SmallDisk, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, point: str
) -> None:
    monkeypatch.setattr(owner_module, "COMMIT_PATIENCE", 30.0)
    ledger = Ledger(small_disk.root / "ledger.sqlite3")
    run_id, generation = owned_run(ledger, tmp_path)
    fill_at(monkeypatch, small_disk, point, free_after=0.4)
    outcome = run_owned(
        ledger, run_id, generation, binding=agent_binding(tmp_path), policy=Policy()
    )
    assert (outcome.state, outcome.unrecorded) == ("completed", None)
    assert ledger.get(run_id).state == "completed"
    pids = tmp_path / "pids"
    assert len([p for p in recorded_pids(pids) if p["role"] == "leader"]) == 1


@pytest.mark.parametrize("point", POINTS)
def test_a_disk_that_stays_full_at_any_commit_never_loses_a_result(
    small_disk: SmallDisk,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    patience: None,
    point: str,
) -> None:
    (tmp_path / "tmp").mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    ledger = Ledger(small_disk.root / "ledger.sqlite3")
    run_id, generation = owned_run(ledger, tmp_path)
    fill_at(monkeypatch, small_disk, point, free_after=None)
    pids = tmp_path / "pids"
    if point in ("prepare", "dispatch"):  # before anything is spawned: a clear error, no agent
        with pytest.raises(LedgerUnavailable):
            run_owned(ledger, run_id, generation, binding=agent_binding(tmp_path), policy=Policy())
        assert not pids.exists()
        return
    outcome = run_owned(
        ledger, run_id, generation, binding=agent_binding(tmp_path), policy=Policy()
    )
    assert outcome.state == "completed"
    assert outcome.saved is not None
    assert json.loads(outcome.saved.read_text())["result"]["draft"] == outcome.result.draft
    assert len([p for p in recorded_pids(pids) if p["role"] == "leader"]) == 1


#: The columns of numbers (the rest hold text, or JSON text).
NUMERIC = {
    "attempt",
    "max_usd",
    "reserved_usd",
    "cost_usd",
    "generation",
    "owner_pid",
    "owner_start",
    "lease_until",
    "pid",
    "pgid",
    "proc_start",
    "cancel_requested_at",
    "not_before",
    "created_at",
    "dispatched_at",
    "ended_at",
    "priority",
    "job_id",
    "swept_at",
    "held_since",
}


def wrong_values(column: str) -> list[Any]:
    """A value of another kind than the column's, and bytes (which no column holds)."""
    if column in NUMERIC:
        return ["not a number", b"\xff\x1b[2J"]
    if column.endswith("_json"):
        return ["{not json", b"\xff\x1b[2J"]
    return [12.5, b"\xff\x1b[2J"]


@pytest.mark.parametrize("state", ["running", "completed", "queued"])
def test_every_column_wrong_in_turn_never_crashes_a_reader(tmp_path: Path, state: str) -> None:
    """For each column of a run and each wrong value: listing, showing (text and JSON),
    reconciling, claiming and cancelling go on; the row is named, the other run untouched."""

    from hz.runtime.artifacts.errors import HzError
    from hz.runtime.artifacts.printable import printable_json
    from hz.runtime.ledger.rows import RUN_COLUMNS
    from hz.runtime.ledger.view import list_table, run_json, run_text

    path = tmp_path / "ledger.sqlite3"
    ledger = Ledger(path)
    good, _ = ledger.create(make_packet(), key="good", workdir=tmp_path, receipt_dir=None)
    for column in RUN_COLUMNS:
        for value in wrong_values(column):
            odd, _ = ledger.create(
                make_packet(), key=f"odd-{column}-{value!r}", workdir=tmp_path, receipt_dir=None
            )
            with ledger.tx() as c:
                c.execute(
                    "UPDATE runs SET state = ?, owner = ?, owner_pid = ?, owner_start = ?, "
                    "owner_boot = ?, owner_host = ?, lease_until = 0 WHERE id = ?",
                    (
                        state,
                        "gone:1",
                        1 << 21,
                        1,
                        Owner.this_process().boot,
                        Owner.this_process().host,
                        odd,
                    ),
                )
            raw = sqlite3.connect(path)
            try:
                raw.execute(f"UPDATE runs SET {column} = ? WHERE id = ?", (value, odd))
                raw.commit()
            except sqlite3.IntegrityError:
                continue  # the schema itself refuses it (NOT NULL, a foreign key)
            finally:
                raw.close()
            rows = ledger.select()
            for row in rows:
                document = run_json(ledger, row)
                list_table([document])
                run_text(document)
                printable_json(document)
            found = [r for r in rows if r.bad]
            if not found:
                # A number in a TEXT column: SQLite stored it as text, which it is; unreadable
                # observations are left out (a best effort), a packet hz cannot read fails its
                # run not_started when claimed: neither is a fault of the row.
                assert isinstance(value, float) or column in ("observed_json", "packet_json")
                with ledger.tx() as c:
                    c.execute("DELETE FROM events WHERE run_id <> ?", (good,))
                    c.execute("DELETE FROM runs WHERE id IS NOT ?", (good,))
                continue
            [bad] = found
            assert any(b.startswith(f"{column}: ") for b in bad.bad), (column, value, bad.bad)
            reconcile(ledger)
            ledger.claim_next(Owner.this_process())
            if bad.addressable:
                with contextlib.suppress(HzError):  # refused, or not its state to cancel
                    cancel(ledger, bad.id, ceiling=0.5)
            # The odd run settled or set aside; the good one is still what it was. The odd
            # one goes, for the next column's.
            with ledger.tx() as c:
                c.execute("DELETE FROM events WHERE run_id <> ?", (good,))
                c.execute("DELETE FROM runs WHERE id IS NOT ?", (good,))
    assert ledger.get(good).state in ("queued", "prepared")


@pytest.mark.parametrize("state", ["queued", "prepared", "dispatching", "running"])
def test_a_stopped_owner_at_any_phase_is_left_alone(tmp_path: Path, state: str) -> None:
    """An owner stopped (SIGSTOP) at any phase, its lease long lapsed: it lives, so nothing
    settles its run; an owner that is gone at the same phase is settled."""
    ledger = Ledger(tmp_path / "ledger.sqlite3")
    alive, _ = owned_run(ledger, tmp_path, key="alive")
    me = Owner.this_process()
    gone, _ = ledger.create(
        make_packet(),
        key="gone",
        workdir=tmp_path,
        receipt_dir=None,
        adopt=Owner("here:1", 1 << 21, 1, me.boot, me.host, me.pidns),
    )
    with ledger.tx() as c:
        c.execute("UPDATE runs SET state = ?, lease_until = 0", (state,))
    settled = reconcile(ledger)
    assert [s.run_id for s in settled] == [gone]
    assert ledger.get(alive).state == state


@pytest.mark.serial
def test_a_watcher_that_cannot_keep_the_record_stops_its_run_and_says_why(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The ledger turns damaged under a running session: nothing could renew its lease or
    record its end, so the watcher stops the agent, and the reason says why."""
    from tests.helpers.operator import command_binding

    path = tmp_path / "ledger.sqlite3"
    ledger = Ledger(path, lease_seconds=0.3)
    run_id, generation = owned_run(ledger, tmp_path)

    def damaged(self: Ledger, *args: Any) -> bool:
        raise LedgerDamaged(f"{path}: the run ledger is damaged (database disk image is malformed)")

    monkeypatch.setattr(Ledger, "renew", damaged)
    begun = time.monotonic()
    outcome = run_owned(
        ledger,
        run_id,
        generation,
        binding=command_binding(tmp_path, "sleep", "--seconds=20"),
        policy=Policy(),
    )
    assert time.monotonic() - begun < 10
    assert outcome.state == "cancelled"
    assert outcome.result is not None
    assert outcome.result.reason == (
        f"the run ledger cannot keep this run's record ({path}: the run ledger is damaged "
        "(database disk image is malformed)); it was stopped; the run's processes were killed"
    )
