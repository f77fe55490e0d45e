"""Firing schedules: each slot once (ledger rows) with two workers on SQLite and on
PostgreSQL, catch_up after a restart, a clock jumped back, a daylight-saving change, a paused
job; followers (after:) queued once per upstream run. Clocks are injected: no test waits."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from hz.runtime.artifacts.errors import HzError
from hz.runtime.artifacts.models import Job, Packet
from hz.runtime.artifacts.schedule import Schedule
from hz.runtime.ledger.schedules import Firing, Occasion
from hz.runtime.ledger.store import Ledger
from tests.helpers.scheduled import Clock, job, packet

MINUTELY = job("minutely", Schedule(cron="* * * * *"))
#: 02:30 every day in Berlin: on 29 March 2026 that wall time does not exist.
BERLIN = job("berlin", Schedule(cron="30 2 * * *", timezone="Europe/Berlin", catch_up="all"))
PAUSED = job("paused", Schedule(cron="* * * * *"))
JOBS = (MINUTELY, BERLIN, PAUSED)


@pytest.fixture
def ledgers(
    ledger_backend: str, tmp_path: Path, request: pytest.FixtureRequest
) -> Iterator[Callable[[], Ledger]]:
    """A new ``Ledger`` (its own connections: another worker) over one database per call."""
    made: list[Ledger] = []

    def new() -> Ledger:
        if ledger_backend == "sqlite":
            ledger = Ledger(tmp_path / "ledger.db")
        else:
            from hz.runtime.ledger.pg.db import PgDb

            dsn = request.getfixturevalue("pg_dsn")
            ledger = Ledger(PgDb(dsn, where="test"))
        made.append(ledger)
        return ledger

    yield new
    for ledger in made:
        ledger.close()


def keys(ledger: Ledger, prefix: str) -> list[str]:
    return [row.request_key for row in ledger.select("request_key LIKE ?", (prefix + "%",))]


def firing(ledger: Ledger, clock: Clock, tmp_path: Path, jobs: tuple[Job, ...] = JOBS) -> Firing:
    return Firing(ledger, jobs, packet, workdir=tmp_path, clock=clock)


def test_two_workers_fire_each_slot_once_across_a_dst_gap(
    ledgers: Callable[[], Ledger], tmp_path: Path
) -> None:
    # 01:40 CET; clocks go from 02:00 CET to 03:00 CEST at 01:00 UTC.
    start = datetime(2026, 3, 29, 0, 40, 30, tzinfo=UTC)
    clock = Clock(start)
    one, two = ledgers(), ledgers()
    one.set_paused("paused", True, start.timestamp())
    workers = [firing(one, clock, tmp_path), firing(two, clock, tmp_path)]
    # Looks every 50 seconds for an hour (the last at 01:39:40), by each worker.
    while clock.now < start + timedelta(minutes=60):
        for worker in workers:
            worker.look()
        clock.now += timedelta(seconds=50)
    minutely = keys(one, "schedule:minutely:")
    assert len(minutely) == len(set(minutely)) == 59
    assert minutely[0] == "schedule:minutely:2026-03-29T00:41:00Z"
    assert minutely[-1] == "schedule:minutely:2026-03-29T01:39:00Z"
    # 02:30 does not exist in Berlin that night: it fires at 03:30 summer time, once.
    assert keys(one, "schedule:berlin:") == ["schedule:berlin:2026-03-29T01:30:00Z"]
    assert keys(one, "schedule:paused:") == []


def test_catch_up_after_a_restart_and_a_clock_jumped_back(
    ledgers: Callable[[], Ledger], tmp_path: Path
) -> None:
    start = datetime(2026, 10, 24, 0, 0, 30, tzinfo=UTC)
    clock = Clock(start)
    latest = job("latest", Schedule(cron="*/10 * * * *"))
    every = job("every", Schedule(cron="*/10 * * * *", catch_up="all"))
    skip = job("skip", Schedule(cron="*/10 * * * *", catch_up="skip"))
    jobs = (latest, every, skip)
    ledger = ledgers()
    firing(ledger, clock, tmp_path, jobs).look()  # first seen: slots count from now
    clock.now = start + timedelta(minutes=10)
    first = firing(ledger, clock, tmp_path, jobs).look()
    assert sorted(key for key, _ in first.queued) == [
        "schedule:every:2026-10-24T00:10:00Z",
        "schedule:latest:2026-10-24T00:10:00Z",
        "schedule:skip:2026-10-24T00:10:00Z",
    ]
    # The worker is down for 35 minutes; a new one starts (a new Ledger, a new Firing).
    clock.now = start + timedelta(minutes=45)
    restarted = firing(ledgers(), clock, tmp_path, jobs).look()
    assert sorted(key for key, _ in restarted.queued) == [
        "schedule:every:2026-10-24T00:20:00Z",
        "schedule:every:2026-10-24T00:30:00Z",
        "schedule:every:2026-10-24T00:40:00Z",
        "schedule:latest:2026-10-24T00:40:00Z",
    ]  # skip: 00:40 is five minutes old, past ON_TIME
    # The clock jumps back an hour: nothing fires twice, nothing fires at all.
    clock.now = start - timedelta(minutes=30)
    back = firing(ledgers(), clock, tmp_path, jobs).look()
    # No candidate at all: the slots up to the newest fired one are behind the clock.
    assert (back.queued, back.held, back.failed) == ([], [], [])
    clock.now = start + timedelta(minutes=45)
    again = firing(ledgers(), clock, tmp_path, jobs).look()
    assert (again.queued, again.held) == ([], [])
    assert len(ledger.select("request_key LIKE 'schedule:%'")) == 7


def test_a_slot_whose_packet_cannot_be_made_is_tried_again(
    ledgers: Callable[[], Ledger], tmp_path: Path
) -> None:
    clock = Clock(datetime(2026, 1, 1, 0, 0, 30, tzinfo=UTC))
    ledger = ledgers()
    broken = True

    def make(occasion: Occasion) -> Packet:
        if broken:
            raise HzError("input 'merged': code-host.merged_pull_requests (github): 404")
        return packet(occasion)

    worker = Firing(ledger, (MINUTELY,), make, workdir=tmp_path, clock=clock)
    worker.look()
    clock.now += timedelta(seconds=31)  # 00:01:01
    assert worker.look().failed == [
        (
            "schedule:minutely:2026-01-01T00:01:00Z",
            "input 'merged': code-host.merged_pull_requests (github): 404",
        )
    ]
    assert keys(ledger, "schedule:") == []
    broken = False
    # Backing off (hit 8 of the attack on issue 26: a failing packet was made at every
    # look): not made again, nor said again, for 30 seconds.
    clock.now += timedelta(seconds=20)
    assert (worker.look().queued, worker.look().failed) == ([], [])
    clock.now += timedelta(seconds=10)
    assert [key for key, _ in worker.look().queued] == ["schedule:minutely:2026-01-01T00:01:00Z"]


def test_a_failing_packet_backs_off_doubling(tmp_path: Path) -> None:
    from hz.runtime.ledger.schedules import BACK_OFF_MOST

    ledger = Ledger(tmp_path / "ledger.db")
    start = datetime(2026, 1, 1, 0, 0, 30, tzinfo=UTC)
    clock = Clock(start)
    made: list[datetime] = []

    def make(occasion: Occasion) -> Packet:
        made.append(clock.now)
        raise HzError("404")

    every = job("every", Schedule(cron="0 0 1 1 *", catch_up="all"))
    worker = Firing(ledger, (every,), make, workdir=tmp_path, clock=clock)
    ledger.schedule_state("every", (start - timedelta(days=1)).timestamp())
    for _ in range(2 * 60):  # an hour of looks, every 30 seconds
        worker.look()
        clock.now += timedelta(seconds=30)
    waits = [(b - a).total_seconds() for a, b in itertools.pairwise(made)]
    assert waits == [30, 60, 120, 240, 480, 900, 900]
    assert BACK_OFF_MOST == 900
    ledger.close()


def test_pause_and_resume_skip_the_paused_slots(
    ledgers: Callable[[], Ledger], tmp_path: Path
) -> None:
    start = datetime(2026, 1, 1, 0, 0, 30, tzinfo=UTC)
    clock = Clock(start)
    ledger = ledgers()
    worker = firing(ledger, clock, tmp_path, (MINUTELY,))
    worker.look()
    assert ledger.set_paused("minutely", True, clock.now.timestamp()) is True
    assert ledger.set_paused("minutely", True, clock.now.timestamp()) is False
    clock.now += timedelta(minutes=5)
    assert worker.look().queued == []
    assert ledger.set_paused("minutely", False, clock.now.timestamp()) is True
    clock.now += timedelta(minutes=1)
    assert [key for key, _ in worker.look().queued] == ["schedule:minutely:2026-01-01T00:06:00Z"]


def finish(ledger: Ledger, run_id: str, cost: float = 0.1) -> None:
    """Mark a queued run completed, as its owner would (the state machine is tested
    elsewhere; here only the follower's trigger matters)."""
    with ledger.tx() as c:
        c.execute(
            "UPDATE runs SET state = 'completed', ended_at = ?, cost_usd = ? WHERE id = ?",
            (datetime.now(UTC).timestamp(), cost, run_id),
        )


def test_a_follower_is_queued_once_per_completed_upstream_run(
    ledgers: Callable[[], Ledger], tmp_path: Path
) -> None:
    clock = Clock(datetime(2026, 1, 1, 0, 0, 30, tzinfo=UTC))
    upstream = job("upstream", Schedule(cron="* * * * *"))
    follower = job("follower", after=("upstream",))
    one, two = ledgers(), ledgers()
    workers = [firing(one, clock, tmp_path, (upstream, follower)) for _ in range(1)]
    workers.append(firing(two, clock, tmp_path, (upstream, follower)))
    for worker in workers:
        worker.look()
    clock.now += timedelta(minutes=1)
    (queued,) = workers[0].look().queued
    assert workers[1].look().queued == []  # the slot has its run; upstream not completed yet
    finish(one, queued[1])
    seen: list[Any] = []
    for worker in workers:
        seen += worker.look().queued
    assert [key for key, _ in seen] == [f"after:{queued[1]}:follower"]
    assert keys(one, "after:") == [f"after:{queued[1]}:follower"]


def test_a_look_that_fails_is_told_and_the_next_one_goes_on(tmp_path: Path) -> None:
    ledger = Ledger(tmp_path / "ledger.db")
    told: list[str] = []
    clock = Clock(datetime(2026, 1, 1, 0, 0, 30, tzinfo=UTC))
    worker = Firing(
        ledger,
        (MINUTELY,),
        packet,
        workdir=tmp_path,
        clock=clock,
        trouble=lambda error: told.append(error.message),
    )
    looks = iter([HzError("the ledger cannot be written now"), None])
    real_look = worker.look

    def look(*, schedules: bool = True) -> Any:
        failure = next(looks)
        if failure is not None:
            raise failure
        return real_look(schedules=schedules)

    worker.look = look  # type: ignore[method-assign]
    waits: list[float] = []

    def stopping(every: float) -> bool:
        waits.append(every)
        return len(waits) == 2

    worker.run(stopping)
    assert told == ["the ledger cannot be written now"]
    assert waits == [2.0, 2.0]
    assert ledger.schedule_state("minutely", 0.0).since == clock.now.timestamp()
    ledger.close()


def test_catch_up_all_is_capped_and_jitter_delays_each_run_alike(
    ledgers: Callable[[], Ledger], tmp_path: Path
) -> None:
    from hz.runtime.artifacts.schedule import CATCH_UP_CAP, jitter_of

    start = datetime(2026, 1, 1, 0, 0, 30, tzinfo=UTC)
    clock = Clock(start)
    every = job("every", Schedule(cron="* * * * *", catch_up="all", jitter_seconds=40))
    ledger = ledgers()
    firing(ledger, clock, tmp_path, (every,)).look()
    clock.now = start + timedelta(hours=3)  # 180 slots missed
    fired = firing(ledger, clock, tmp_path, (every,)).look()
    assert len(fired.queued) == CATCH_UP_CAP
    assert fired.queued[0][0] == "schedule:every:2026-01-01T01:21:00Z"  # the newest 100
    assert fired.queued[-1][0] == "schedule:every:2026-01-01T03:00:00Z"
    slot = datetime(2026, 1, 1, 3, tzinfo=UTC)
    row = ledger.get(fired.queued[-1][1])
    assert row.not_before == slot.timestamp() + jitter_of(every.schedule, "every", slot)  # type: ignore[arg-type]
    delays = {ledger.get(run).not_before % 60 for _, run in fired.queued}
    assert len(delays) > 1  # spread, not one delay for all


def plant(ledger: Ledger, job_: Job, key: str, tmp_path: Path) -> str:
    """A run under ``key`` made outside the firing path (a planted or hand-edited row)."""
    occasion = Occasion(job_, key)
    run_id, _ = ledger.create(
        packet(occasion), key=key, workdir=tmp_path, receipt_dir=None, submitted=True
    )
    return run_id


@pytest.mark.parametrize(
    "slot", ["9999-12-31T23:59:00Z", "2099-01-01T00:00:00Z", "garbage", "2026-01-01T00:20:00Z"]
)
def test_a_fired_slot_after_the_clock_does_not_silence_the_schedule(
    ledgers: Callable[[], Ledger], tmp_path: Path, slot: str
) -> None:
    """Attack on issue 26, hits 2 and 15: a key from the far future killed the firing thread
    (year 10000; on PostgreSQL a date out of range) or silenced the job until its date; one
    20 minutes ahead (a worker whose clock is ahead) is past the allowance too."""
    ledger = ledgers()
    clock = Clock(datetime(2026, 1, 1, 0, 0, 30, tzinfo=UTC))
    planted = plant(ledger, MINUTELY, f"schedule:minutely:{slot}", tmp_path)
    notes: list[list[str]] = []
    worker = Firing(
        ledger,
        (MINUTELY,),
        packet,
        workdir=tmp_path,
        clock=clock,
        report=lambda fired: notes.append(fired.notes),
    )
    worker.look()
    clock.now += timedelta(minutes=1)
    assert [key for key, _ in worker.look().queued] == ["schedule:minutely:2026-01-01T00:01:00Z"]
    said = (
        f"schedule:minutely: the run {planted} is for the slot {slot}, after this worker's "
        "clock: not counted as fired (a clock ahead on another worker, or a planted key?)"
    )
    assert notes == ([[said], []] if slot[0].isdigit() else [[], []])  # said once


def test_a_slot_within_the_clock_allowance_counts_as_fired(tmp_path: Path) -> None:
    ledger = Ledger(tmp_path / "ledger.db")
    clock = Clock(datetime(2026, 1, 1, 0, 0, 30, tzinfo=UTC))
    plant(ledger, MINUTELY, "schedule:minutely:2026-01-01T00:04:00Z", tmp_path)
    worker = firing(ledger, clock, tmp_path, (MINUTELY,))
    worker.look()
    clock.now += timedelta(minutes=1)
    assert worker.look().queued == []  # 00:04 has a run, 3.5 minutes ahead: trusted
    ledger.close()


def test_one_job_that_fails_never_stops_the_others(
    ledgers: Callable[[], Ledger], tmp_path: Path
) -> None:
    ledger = ledgers()
    clock = Clock(datetime(2026, 1, 1, 0, 0, 30, tzinfo=UTC))
    first = job("aaa", Schedule(cron="* * * * *"))
    follower = job("bbb", after=("aaa",))

    def make(occasion: Occasion) -> Packet:
        if occasion.job.name == "aaa":
            raise RuntimeError("boom")
        return packet(occasion)

    worker = Firing(ledger, (first, follower, MINUTELY), make, workdir=tmp_path, clock=clock)
    worker.look()
    clock.now += timedelta(minutes=1)
    fired = worker.look()
    assert fired.failed == [("schedule:aaa", "unexpected error: RuntimeError: boom")]
    assert [key for key, _ in fired.queued] == ["schedule:minutely:2026-01-01T00:01:00Z"]


def test_a_look_that_raises_anything_is_told_and_the_thread_goes_on(tmp_path: Path) -> None:
    ledger = Ledger(tmp_path / "ledger.db")
    told: list[str] = []
    worker = Firing(
        ledger,
        (MINUTELY,),
        packet,
        workdir=tmp_path,
        trouble=lambda error: told.append(error.message),
    )
    failures = iter([OverflowError("date value out of range"), ValueError("year 10000")])

    def look(*, schedules: bool = True) -> Any:
        raise next(failures)

    worker.look = look  # type: ignore[method-assign]
    waits: list[float] = []
    worker.run(lambda every: waits.append(every) is None and len(waits) == 2)
    assert told == [
        "unexpected error: OverflowError: date value out of range",
        "unexpected error: ValueError: year 10000",
    ]

    def schedules() -> Any:
        raise KeyError("jit")

    worker._schedules = schedules  # type: ignore[method-assign]
    assert worker.tick() is None  # PostgreSQL's tick: told, not raised into procrastinate
    assert told[-1] == "unexpected error: KeyError: 'jit'"
    ledger.close()


def finish_at(ledger: Ledger, run_id: str, ended: datetime, result: str | None = None) -> None:
    with ledger.tx() as c:
        c.execute(
            "UPDATE runs SET state = 'completed', ended_at = ?, result_json = ? WHERE id = ?",
            (ended.timestamp(), result or '{"draft": "from ' + run_id + '"}', run_id),
        )


def test_a_new_follower_is_queued_once_for_the_past_not_for_each_run(tmp_path: Path) -> None:
    """Attack on issue 26, hit 5: six completed runs of up queued six runs of a new follower
    at once (up to 20 per upstream). Decided: a follower counts completions from the instant
    the ledger first saw it, and once for the newest one before."""
    ledger = Ledger(tmp_path / "ledger.db")
    start = datetime(2026, 1, 1, 0, 0, 30, tzinfo=UTC)
    up = job("up")
    past = [plant(ledger, up, f"up-{n}", tmp_path) for n in range(6)]
    for n, run_id in enumerate(past):
        finish_at(ledger, run_id, start - timedelta(minutes=10 - n))
    clock = Clock(start)
    worker = firing(ledger, clock, tmp_path, (up, job("down", after=("up",))))
    assert [key for key, _ in worker.look().queued] == [f"after:{past[-1]}:down"]
    assert worker.look().queued == []
    later = plant(ledger, up, "up-later", tmp_path)
    finish_at(ledger, later, start + timedelta(minutes=1))
    assert [key for key, _ in worker.look().queued] == [f"after:{later}:down"]
    ledger.close()


def test_the_draft_read_is_the_newest_readable_one_not_one_from_the_future(
    tmp_path: Path,
) -> None:
    """Hit 13: a row ended in 2100 was the newest until then (and passed any max_age); a
    newest row with a damaged result failed every reader although good runs existed."""
    from hz.runtime.ledger.schedules import NoDraft, upstream_draft

    ledger = Ledger(tmp_path / "ledger.db")
    now = datetime(2026, 1, 1, 12, tzinfo=UTC)
    up = job("up")
    good, future, broken, odd = (plant(ledger, up, f"up-{n}", tmp_path) for n in range(4))
    finish_at(ledger, good, now - timedelta(hours=3))
    finish_at(ledger, future, datetime(2100, 1, 1, tzinfo=UTC))
    finish_at(ledger, broken, now - timedelta(hours=1), '{"draft": 5}')
    finish_at(ledger, odd, now - timedelta(hours=2), "[1]")
    draft = upstream_draft(ledger, "up", None, now)
    assert (draft.value, draft.run_id, draft.passed_over) == (
        f"from {good}",
        good,
        (
            f"run {broken} of up completed without a draft hz can read",
            f"run {odd} of up: its result in the ledger cannot be read (a JSON list, not an "
            "object)",
        ),
    )
    with pytest.raises(NoDraft) as older:
        upstream_draft(ledger, "up", 3600.0, now)
    assert older.value.message == (
        f"run {broken} of up completed without a draft hz can read; the newest completed run "
        f"of up ({odd}) ended 2h ago, "
        "older than the 1h max_age allows"
    )
    pinned = upstream_draft(ledger, "up", None, now, run_id=future)
    assert (pinned.value, pinned.run_id) == (f"from {future}", future)
    with pytest.raises(NoDraft) as other:
        upstream_draft(ledger, "down", None, now, run_id=good)
    assert other.value.message == f"run {good} is not a completed run of down"
    ledger.close()


def test_a_job_first_seen_by_a_clock_ahead_fires_from_now(
    ledgers: Callable[[], Ledger], tmp_path: Path
) -> None:
    """Attack on issue 26, hit 15: a worker a year ahead made the job's slots count from
    then, on every worker, silently."""
    start = datetime(2026, 1, 1, 0, 0, 30, tzinfo=UTC)
    ledger = ledgers()
    ahead = Clock(start + timedelta(days=365))
    assert firing(ledger, ahead, tmp_path, (MINUTELY,)).look().queued == []
    clock = Clock(start)
    notes: list[str] = []
    worker = Firing(
        ledger, (MINUTELY,), packet, workdir=tmp_path, clock=clock,
        report=lambda fired: notes.extend(fired.notes),
    )  # fmt: skip
    worker.look()
    assert notes == [
        "schedule:minutely: its slots counted from 2027-01-01T00:00:30Z, after this worker's "
        "clock (a clock ahead on another worker?): they count from now"
    ]
    clock.now += timedelta(minutes=1)
    assert [key for key, _ in worker.look().queued] == ["schedule:minutely:2026-01-01T00:01:00Z"]


def test_followers_queued_or_running_are_bounded_over_the_ledger(
    ledgers: Callable[[], Ledger], tmp_path: Path
) -> None:
    """Attack on issue 26 (hits 5 and 9): nothing bounded what followers queue in total; ten
    jobs after one queued ten runs per completion, however many were waiting. Decided: at most
    ``max_followers`` runs with an ``after:`` key queued or running at once, said once."""
    start = datetime(2026, 1, 1, 0, 0, 30, tzinfo=UTC)
    up = job("up")
    followers = tuple(job(f"f{n}", after=("up",)) for n in range(10))
    ledger, other = ledgers(), ledgers()
    done = plant(ledger, up, "up-1", tmp_path)
    finish_at(ledger, done, start - timedelta(minutes=1))
    clock = Clock(start)
    said = (
        "after: followers' runs queued or running are at the limit, 4 ([system.schedules] "
        "max_followers): no more are queued until some end"
    )
    one, two = (
        Firing(each, (up, *followers), packet, workdir=tmp_path, clock=clock, max_followers=4)
        for each in (ledger, other)
    )
    first = one.look()
    assert ([key for key, _ in first.queued], first.notes) == (
        [f"after:{done}:f{n}" for n in range(4)],
        [said],
    )
    assert (two.look().queued, one.look().notes) == ([], [])  # another worker too; said once
    for _, run_id in first.queued[:2]:
        finish(ledger, run_id)
    assert [key for key, _ in two.look().queued] == [f"after:{done}:f4", f"after:{done}:f5"]
    for _, run_id in first.queued[2:]:
        finish(ledger, run_id)
    for row in ledger.select("request_key LIKE ?", ("after:%",)):
        finish(ledger, row.id)
    last = one.look()
    assert ([key for key, _ in last.queued], last.notes) == (
        [f"after:{done}:f{n}" for n in range(6, 10)],
        [],
    )
    assert len(keys(ledger, "after:")) == 10
    again = plant(ledger, up, "up-2", tmp_path)
    finish_at(ledger, again, start)
    full = one.look()  # f6..f9 still queued: none for up-2 yet
    assert (full.queued, full.notes) == ([], [said])  # said again: the limit reached again


def test_a_planted_result_over_the_bound_is_measured_by_the_database_never_fetched(
    ledgers: Callable[[], Ledger], tmp_path: Path
) -> None:
    """Attack on issue 26: a planted 200 MB ``result_json`` was fetched, decoded and held (830
    MB per render of a follower that reads its draft). The database now measures it: over
    ``MAX_RESULT`` hz never receives it, and says which run and why."""
    import tracemalloc

    from hz.runtime.ledger.rows import MAX_RESULT
    from hz.runtime.ledger.schedules import NoDraft, upstream_draft

    ledger = ledgers()
    now = datetime(2026, 1, 1, 12, tzinfo=UTC)
    up = job("up")
    planted = plant(ledger, up, "up-1", tmp_path)
    huge = '{"draft": "' + "x" * MAX_RESULT + '"}'
    finish_at(ledger, planted, now - timedelta(hours=1), huge)
    del huge
    why = f"{MAX_RESULT + 13:,} characters, more than the 64 MiB a result holds"
    tracemalloc.start()
    try:
        with pytest.raises(NoDraft) as refused:
            upstream_draft(ledger, "up", None, now)
        row = ledger.get(planted)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert refused.value.message == (
        f"run {planted} of up: its result in the ledger cannot be read ({why})"
    )
    assert (row.result, row.bad) == (None, (f"result_json: {why}",))
    assert peak < 4 << 20  # the 64 MiB text never reached Python
