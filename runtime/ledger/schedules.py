"""Firing schedules and chains: at each slot of a scheduled job, and when an upstream job
completes, a queued run under a request key that names the occasion.

The request key is what makes a slot run at most once (docs/schedules.md): ``schedule:JOB:SLOT``
for a slot, ``after:RUN:JOB`` for a follower of run RUN. ``Ledger.create`` takes the key's lock
and refuses a key that has a run, on either backend, so two workers, a restart or a clock that
jumped back can ask for a slot again and get ``KeyHeld``: nothing is queued twice.

Which slots are due is a pure function of the schedule, the job's ledger row (paused, and the
instant its slots count from), the newest slot that has a run, and ``now``:

- the candidates are the slots after the newest fired one (or after ``since`` when none has
  fired, or when the job was resumed later) up to ``now``;
- ``catch_up: latest`` fires the newest candidate; ``all`` each of them (the newest
  ``CATCH_UP_CAP``); ``skip`` only a candidate at most ``ON_TIME`` seconds old.

A clock jumped back sees no candidate (every slot up to the newest fired one is behind it). The
packet is made when the slot fires (``Maker``: rendering, and fetching the inputs, is the
caller's, above the runtime); when it cannot be made, nothing is queued and the slot is a
candidate again on the next look.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from hz.runtime.artifacts.errors import HzError
from hz.runtime.artifacts.models import Job, Packet
from hz.runtime.artifacts.schedule import (
    CATCH_UP_CAP,
    MAX_FOLLOWERS,
    jitter_of,
    request_key,
    slots_between,
)
from hz.runtime.ledger.db import LedgerError
from hz.runtime.ledger.states import RunState
from hz.runtime.ledger.store import KeyHeld, KeyReused, Ledger
from hz.runtime.ledger.store.schedules import CLOCK_ALLOWANCE as CLOCK_ALLOWANCE

#: How old a slot may be and still fire under ``catch_up: skip`` (a worker looks every few
#: seconds; a slot older than this was missed).
ON_TIME = 60.0
#: How often a worker looks for due slots and completed upstream runs.
LOOK_EVERY = 2.0
#: After an occasion's packet could not be made, how long before it is made again (doubling
#: at each failure up to ``BACK_OFF_MOST``): a failing provider is not asked at every look.
BACK_OFF_FIRST = 30.0
BACK_OFF_MOST = 900.0


@dataclass(frozen=True, slots=True)
class Occasion:
    """Why a run is made: a job's slot, or an upstream run that completed."""

    job: Job
    key: str
    slot: datetime | None = None
    upstream_run: str | None = None
    #: The job of ``upstream_run``: an input that reads its draft reads that run's.
    upstream: str | None = None

    def pinned(self) -> dict[str, str]:
        """The upstream run whose draft this occasion reads, by job: the run that queued it."""
        if self.upstream is None or self.upstream_run is None:
            return {}
        return {self.upstream: self.upstream_run}


#: Makes the packet of an occasion (renders the job, fetching its inputs): the caller's.
Maker = Callable[[Occasion], Packet]


@dataclass
class Fired:
    """What one look did: runs queued (key, run id), keys that already had a run,
    occasions whose packet could not be made (key, message; a job whose look failed is
    ``schedule:JOB`` or ``after:JOB``), and what the look passed over (lines to say once: a
    fired slot after this clock)."""

    queued: list[tuple[str, str]] = field(default_factory=list)
    held: list[str] = field(default_factory=list)
    failed: list[tuple[str, str]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def add(self, other: Fired) -> None:
        self.queued += other.queued
        self.held += other.held
        self.failed += other.failed
        self.notes += other.notes


def due_slots(
    job: Job, ledger: Ledger, now: datetime, notes: list[str] | None = None
) -> list[datetime]:
    """The slots of ``job`` to fire at ``now`` (oldest first): none when it has no schedule or
    is paused. A slot fired later than ``now`` by more than ``CLOCK_ALLOWANCE`` (a worker
    whose clock is ahead, or a planted row) is not counted as done, and said in ``notes``."""
    schedule = job.schedule
    if schedule is None:
        return []
    state = ledger.schedule_state(job.name, now.timestamp())
    if state.paused:
        return []
    horizon = now.timestamp() + CLOCK_ALLOWANCE
    if state.since > horizon and ledger.pull_since_back(job.name, now.timestamp()):
        # First seen by a worker whose clock was ahead: its slots would not count until then.
        if notes is not None:
            shown = datetime.fromtimestamp(state.since, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
            notes.append(
                f"schedule:{job.name}: its slots counted from {shown}, after this worker's "
                "clock (a clock ahead on another worker?): they count from now"
            )
        state = ledger.schedule_state(job.name, now.timestamp())
    since = datetime.fromtimestamp(state.since, UTC)
    last = ledger.last_slot(job.name, horizon)
    if last is not None:
        since = max(since, datetime.fromtimestamp(last[0], UTC))
    ahead = ledger.slot_ahead(job.name, horizon)
    if ahead is not None and notes is not None:
        notes.append(_ahead_note(job.name, ahead[0], ahead[1].id))
    if schedule.catch_up == "all":
        return slots_between(schedule, since, now, cap=CATCH_UP_CAP)
    candidates = slots_between(schedule, since, now, cap=1)
    if schedule.catch_up == "skip":
        return [s for s in candidates if (now - s).total_seconds() <= ON_TIME]
    return candidates


def fire_schedules(
    ledger: Ledger,
    jobs: Iterable[Job],
    now: datetime,
    make: Maker,
    *,
    workdir: Path,
    receipt_dir: Path | None = None,
) -> Fired:
    """Queue a run for every due slot of ``jobs`` at ``now``. One job whose look fails (a
    bug, a row hz cannot read) is said in ``failed`` as ``schedule:JOB`` and the others go on;
    a ledger that cannot be used now fails the whole look."""
    fired = Fired()
    for job in jobs:
        try:
            for slot in due_slots(job, ledger, now, fired.notes):
                delay = jitter_of(job.schedule, job.name, slot) if job.schedule else 0
                occasion = Occasion(job, request_key(job.name, slot), slot=slot)
                _queue(
                    ledger, occasion, make, fired, workdir, receipt_dir, slot.timestamp() + delay
                )
        except LedgerError:
            raise
        except Exception as e:  # one job's failure never stops the others' (nor the thread)
            fired.failed.append((f"schedule:{job.name}", _failure(e)))
    return fired


def _failure(error: Exception) -> str:
    if isinstance(error, HzError):
        return error.message
    return f"unexpected error: {type(error).__name__}: {error}"


def _ahead_note(job: str, slot: float, run_id: str) -> str:
    shown = datetime.fromtimestamp(slot, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    return (
        f"schedule:{job}: the run {run_id} is for the slot {shown}, after this worker's clock: "
        "not counted as fired (a clock ahead on another worker, or a planted key?)"
    )


def fire_followers(
    ledger: Ledger,
    jobs: Iterable[Job],
    make: Maker,
    *,
    workdir: Path,
    receipt_dir: Path | None = None,
    look_back: int = 20,
    now: datetime | None = None,
    most: int = MAX_FOLLOWERS,
) -> Fired:
    """Queue each job of ``jobs`` once for each completed run of a job it follows
    (``after``): the newest ``look_back`` completed runs of that job that ended after the
    ledger first saw the follower (its ``schedule_state`` row), and the newest one before
    that. A new follower, or one given ``after`` later, is queued once for the upstream's
    past (its newest completion), not once for each of the 20 newest.

    At most ``most`` followers' runs (``MAX_FOLLOWERS`` by default) are queued or running at
    once, over every job of the ledger: a fan-out (many jobs after one, chains of chains)
    queues nothing more at the limit (said in ``notes``); what was left is queued at a later
    look, as runs end, within the ``look_back`` newest completions."""
    fired = Fired()
    moment = (now or datetime.now(UTC)).timestamp()
    room: int | None = None  # counted when the first run would be queued
    for job in jobs:
        if not job.after:
            continue
        try:
            since = ledger.schedule_state(job.name, moment).since
            for upstream in job.after:
                rows = ledger.newest_completed(upstream, look_back, ended_after=since)
                rows += ledger.newest_completed(upstream, 1, not_after=since)
                for row in rows:
                    key = f"after:{row.id}:{job.name}"
                    if ledger.select("request_key = ?", (key,)):
                        continue
                    if room is None:
                        room = most - ledger.live_followers()
                    if room <= 0:
                        fired.notes.append(_full_note(most))
                        return fired
                    occasion = Occasion(job, key, upstream_run=row.id, upstream=upstream)
                    queued = len(fired.queued)
                    _queue(ledger, occasion, make, fired, workdir, receipt_dir, 0.0)
                    room -= len(fired.queued) - queued
        except LedgerError:
            raise
        except Exception as e:  # as fire_schedules: the other jobs go on
            fired.failed.append((f"after:{job.name}", _failure(e)))
    return fired


def _full_note(most: int) -> str:
    return (
        f"after: followers' runs queued or running are at the limit, {most} "
        "([system.schedules] max_followers): no more are queued until some end"
    )


def _queue(
    ledger: Ledger,
    occasion: Occasion,
    make: Maker,
    fired: Fired,
    workdir: Path,
    receipt_dir: Path | None,
    not_before: float,
) -> None:
    try:
        packet = make(occasion)
    except HzError as e:
        fired.failed.append((occasion.key, e.message))
        return
    try:
        run_id, _ = ledger.create(
            packet,
            key=occasion.key,
            workdir=workdir,
            receipt_dir=receipt_dir,
            not_before=not_before,
            submitted=True,
        )
    except (KeyHeld, KeyReused):
        fired.held.append(occasion.key)
        return
    fired.queued.append((occasion.key, run_id))


class Firing:
    """A worker's side of schedules and chains: ``look`` fires what is due now (the clock is a
    parameter: tests move it); ``run`` looks every ``every`` seconds until ``stopping``."""

    def __init__(
        self,
        ledger: Ledger,
        jobs: tuple[Job, ...],
        make: Maker,
        *,
        workdir: Path,
        receipt_dir: Path | None = None,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
        report: Callable[[Fired], None] = lambda fired: None,
        trouble: Callable[[HzError], None] = lambda error: None,
        max_followers: int = MAX_FOLLOWERS,
    ) -> None:
        self.ledger = ledger
        self.max_followers = max_followers
        self.jobs = jobs
        self.workdir = workdir
        self.receipt_dir = receipt_dir
        self.clock = clock
        self.report = report
        self.trouble = trouble
        self._said: set[str] = set()
        #: Occasions whose packet failed: key -> (not before, the next delay).
        self._backing_off: dict[str, tuple[float, float]] = {}
        self._deferred: set[str] = set()
        self.make = self._made_or_deferred(make)

    def _made_or_deferred(self, make: Maker) -> Maker:
        """``make``, once per back-off period for an occasion whose packet failed."""

        def made(occasion: Occasion) -> Packet:
            now = self.clock().timestamp()
            waiting = self._backing_off.get(occasion.key)
            if waiting is not None and now < waiting[0]:
                self._deferred.add(occasion.key)
                raise HzError(f"{occasion.key}: backing off")
            try:
                packet = make(occasion)
            except Exception:
                delay = BACK_OFF_FIRST if waiting is None else waiting[1]
                self._backing_off[occasion.key] = (now + delay, min(delay * 2, BACK_OFF_MOST))
                if len(self._backing_off) > 10_000:  # bounded: the oldest entries go
                    del self._backing_off[next(iter(self._backing_off))]
                raise
            self._backing_off.pop(occasion.key, None)
            return packet

        return made

    def look(self, *, schedules: bool = True) -> Fired:
        """Fire what is due now: the slots of the scheduled jobs (unless ``schedules`` is
        false: on PostgreSQL a tick does that, ``tick``) and the followers of completed runs."""
        fired = self._schedules() if schedules else Fired()
        fired.add(
            fire_followers(
                self.ledger,
                self.jobs,
                self.make,
                workdir=self.workdir,
                receipt_dir=self.receipt_dir,
                now=self.clock(),
                most=self.max_followers,
            )
        )
        full = _full_note(self.max_followers)
        if full not in fired.notes:  # below the limit: said again when it is reached again
            self._said.discard(full)
        self._report(fired)
        return fired

    def _report(self, fired: Fired) -> None:
        # A note (a slot after this clock) is said once per worker, not at every look; an
        # occasion backing off was said when it failed.
        fired.notes = [note for note in fired.notes if note not in self._said]
        self._said.update(fired.notes)
        fired.failed = [(key, said) for key, said in fired.failed if key not in self._deferred]
        self._deferred.clear()
        self.report(fired)

    def _schedules(self) -> Fired:
        return fire_schedules(
            self.ledger,
            self.jobs,
            self.clock(),
            self.make,
            workdir=self.workdir,
            receipt_dir=self.receipt_dir,
        )

    def tick(self) -> Fired | None:
        """A look at the schedules, a failure told to ``trouble`` (None): what PostgreSQL's
        periodic tick and a worker's start run (``hz.runtime.ledger.pg.ticks``). Whatever tick
        asked, the slots are the clock's and the ledger's: a tick deferred late, or again
        after a clock jump back, finds no slot that has a run."""
        try:
            fired = self._schedules()
        except Exception as e:  # a tick that raised would fail in procrastinate's table
            self.trouble(_trouble(e))
            return None
        self._report(fired)
        return fired

    def run(
        self,
        stopping: Callable[[float], bool],
        every: float = LOOK_EVERY,
        *,
        schedules: bool = True,
    ) -> None:
        """Look, then wait ``every`` seconds (``stopping(every)``: true once the worker
        stops), until it stops; the schedules too unless ``schedules`` is false. A look that
        fails (a database that cannot be written now, a damaged row) is told to ``trouble``
        and tried again at the next look."""
        try:
            while True:
                try:
                    self.look(schedules=schedules)
                except Exception as e:  # the thread must outlive any look
                    self.trouble(_trouble(e))
                if stopping(every):
                    return
        finally:
            self.ledger.thread_done()


def _trouble(error: Exception) -> HzError:
    return error if isinstance(error, HzError) else HzError(_failure(error))


@dataclass(frozen=True, slots=True)
class Draft:
    """Another job's draft, as an input that reads it gets it: the value (text, or the JSON
    value of a ``json`` draft), the run it is from, when that run ended, and the newer runs
    passed over for a draft hz could not read (one line each)."""

    value: Any
    run_id: str
    ended_at: float
    passed_over: tuple[str, ...] = ()


class NoDraft(HzError):
    """The job has no completed run young enough whose draft can be read."""


#: How many of an upstream's newest completed runs are tried for a draft hz can read.
DRAFT_TRIES = 5


def upstream_draft(
    ledger: Ledger, job: str, max_age: float | None, now: datetime, run_id: str | None = None
) -> Draft:
    """The draft of ``job``'s run ``run_id`` (a follower's: the run that queued it), or of its
    newest completed run whose draft can be read (a newer one whose draft cannot is passed
    over, and said; one that ended after ``now`` and this process's clock, beyond
    ``CLOCK_ALLOWANCE``, is not counted),
    at most ``max_age`` seconds old (any age when None); ``NoDraft`` saying why there is
    none."""
    if run_id is not None:
        row = ledger.get(run_id)
        if row.job_name != job or row.state != RunState.COMPLETED:
            raise NoDraft(f"run {run_id} is not a completed run of {job}")
        return _draft(row, job, max_age, now)
    # ``now`` may be a slot fired late, or ``--at`` in the past: a run that ended since is
    # not from the future; the clock of this process says what is.
    latest = max(now.timestamp(), time.time()) + CLOCK_ALLOWANCE
    rows = ledger.newest_completed(job, DRAFT_TRIES, not_after=latest)
    if not rows:
        raise NoDraft(
            f"job {job} has no completed run in the ledger",
            hint=f"run {job} first, or queue this job after it (hz.after: [{job}])",
        )
    passed: list[str] = []
    for row in rows:
        try:
            found = _draft(row, job, max_age, now)
        except _Unreadable as e:
            passed.append(e.message)
            continue
        except NoDraft as e:  # too old: so is every older one
            raise NoDraft("; ".join([*passed, e.message]), hint=e.hint) from e
        return Draft(found.value, found.run_id, found.ended_at, tuple(passed))
    raise NoDraft("; ".join(passed))


class _Unreadable(NoDraft):
    """A completed run whose draft hz cannot read: the next older one is tried."""


def _draft(row: Any, job: str, max_age: float | None, now: datetime) -> Draft:
    from hz.runtime.artifacts import strict_json
    from hz.runtime.ledger.store import read_packet

    ended = row.ended_at if row.ended_at is not None else row.created_at
    age = max(0.0, now.timestamp() - ended)
    if max_age is not None and age > max_age:
        raise NoDraft(
            f"the newest completed run of {job} ({row.id}) ended {_age(age)} ago, older than "
            f"the {_age(max_age)} max_age allows",
            hint=f"run {job} again, or allow an older draft with a longer max_age",
        )
    unread = next((b for b in row.bad if b.startswith("result_json: ")), None)
    if unread is not None:  # too long (never fetched), not JSON, not text: said, and why
        raise _Unreadable(
            f"run {row.id} of {job}: its result in the ledger cannot be read "
            f"({unread.removeprefix('result_json: ')})"
        )
    result = row.result if isinstance(row.result, dict) else {}
    draft = result.get("draft")
    if not isinstance(draft, str):
        raise _Unreadable(f"run {row.id} of {job} completed without a draft hz can read")
    packet = read_packet(row)
    if packet is not None and packet.job.output.format == "json":
        try:
            return Draft(strict_json.loads(draft), row.id, ended)
        except strict_json.JsonError as e:
            raise _Unreadable(
                f"run {row.id} of {job}: its JSON draft does not parse: {e.msg}"
            ) from e
    return Draft(draft, row.id, ended)


def _age(seconds: float) -> str:
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{seconds / size:.0f}{unit}"
    return f"{seconds:.0f}s"
