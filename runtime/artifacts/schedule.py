"""When a job runs by itself: its cron schedule, in an IANA time zone, and the slots it yields.

One definition for both halves: the compiler checks a contract's ``hz.schedule`` with
``cron_problem`` / ``zone_problem`` and shows the next slots (``hz validate -v``,
``hz explain``); ``hz worker`` fires the same slots.

A cron expression has five fields (minute, hour, day of month, month, day of week) and is
read by croniter (decision 0019), the library procrastinate's periodic tasks read theirs with.
It is evaluated in the schedule's time zone, on the wall clock, then each wall time is placed on
the UTC time line:

- **A gap** (spring forward: 02:30 does not exist on the day clocks go from 02:00 to 03:00):
  the slot fires at the instant the wall time would have had with the offset before the change,
  which is as far after the gap's start as the wall time was (02:30 fires at 03:30 summer
  time). Two slots that land on one instant are one slot.
- **A repeat** (fall back: 02:30 happens twice): the slot fires once, at the first occurrence
  (the one with the offset before the change).

A slot is named by its UTC instant, ``2026-03-29T01:30:00Z``: the name every worker computes
alike, whatever its own time zone, and the ``SLOT`` of the request key ``schedule:JOB:SLOT``.
"""

from __future__ import annotations

import functools
import hashlib
import re
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Annotated, Final, Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import BaseModel, ConfigDict, Field, model_validator
from pydantic_core import PydanticCustomError

#: The fields of a cron expression, in order, as messages name them.
FIELDS: Final = ("minute", "hour", "day of month", "month", "day of week")
#: How many missed slots ``catch_up: all`` fires at most after a worker was down (the newest).
CATCH_UP_CAP: Final = 100
#: The most followers' runs (``after``) queued or running at once over a ledger, by default
#: (``[system.schedules] max_followers``), and the most that setting takes.
MAX_FOLLOWERS: Final = 100
MOST_FOLLOWERS: Final = 100_000
#: The longest jitter a schedule may ask for.
MAX_JITTER: Final = 3600
#: How far ahead a slot is looked for before a cron is said to match no date: the Gregorian
#: calendar repeats every 400 years, so a cron that matches any date matches one in every 400
#: years (``0 0 29 2 SUN#5`` matches 2004, 2032, 2060: 28 years apart, more between some).
_SEARCH_YEARS: Final = 400
_DURATION = re.compile(r"^(?=[0-9])(?:([0-9]+)h)?(?:([0-9]+)m)?(?:([0-9]+)s)?$")

CatchUp = Literal["latest", "all", "skip"]


class Schedule(BaseModel):
    """A job's schedule as a job records it: the cron, its time zone, what a worker that was
    down does with the slots it missed, and the most seconds a run is delayed after its slot
    (the same delay on every worker: ``jitter_of``)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    cron: Annotated[str, Field(min_length=9, max_length=200)]
    timezone: Annotated[str, Field(min_length=1, max_length=64)] = "UTC"
    catch_up: CatchUp = "latest"
    jitter_seconds: Annotated[int, Field(ge=0, le=MAX_JITTER)] = 0

    @model_validator(mode="after")
    def _usable(self) -> Schedule:
        # A job file is outside input: a hand-made one must not reach the worker with a cron
        # or zone it cannot evaluate.
        problem = cron_problem(self.cron)
        if problem is not None:
            raise PydanticCustomError("cron", problem[1])
        wrong_zone = zone_problem(self.timezone)
        if wrong_zone is not None:
            raise PydanticCustomError("zone", wrong_zone)
        return self


def cron_problem(cron: str) -> tuple[int | None, str] | None:
    """Why ``cron`` is not a usable five-field expression: ``(field index or None, message)``;
    None when it is. The field is the first one croniter refuses on its own."""
    from croniter import CroniterBadDateError, croniter

    fields = cron.split()
    if len(fields) != len(FIELDS):
        return None, (
            f"a cron expression has 5 fields (minute hour day-of-month month day-of-week), "
            f"this one has {len(fields)}"
        )
    for index, text in enumerate(fields):
        if text.upper() == "R" or text.upper().startswith("R("):
            # croniter draws a random value per object: every worker, every look, its own slot.
            return index, (
                f"the {FIELDS[index]} field {text!r} is not valid: R (a random value) would give "
                "each worker and each look its own slots; write the value, or use jitter"
            )
        alone = ["*"] * len(FIELDS)
        alone[index] = text
        try:
            croniter(" ".join(alone))
        except (ValueError, KeyError) as e:
            return index, f"the {FIELDS[index]} field {text!r} is not valid: {_reason(e)}"
    try:
        croniter(cron)
    except (ValueError, KeyError) as e:
        return None, f"not a valid cron expression: {_reason(e)}"
    try:
        croniter(cron, datetime(2000, 1, 1), max_years_between_matches=_SEARCH_YEARS).get_next(
            datetime
        )
    except CroniterBadDateError:
        return None, "the expression matches no date (a day that no month of it has)"
    return None


def _reason(error: Exception) -> str:
    text = str(error)
    # croniter quotes the whole expression first ("[61 * * * *] is not acceptable, ...").
    text = re.sub(r"^\[[^\]]*\]\s*", "", text).removeprefix("is not acceptable, ")
    return "not a value this field takes" if text in ("", "is not acceptable") else text


#: What an IANA zone name looks like ("Europe/Berlin", "America/Argentina/Buenos_Aires",
#: "Etc/GMT+1"): anything else is not looked up on disk at all.
_ZONE_NAME = re.compile(r"[A-Za-z0-9_+-]{1,32}(?:/[A-Za-z0-9_+-]{1,32}){0,2}")


def zone_problem(name: str) -> str | None:
    """Why ``name`` is not an IANA time zone hz can use; None when it is. The name comes from
    a contract: only one shaped like a zone's is looked up (a path-like or very long one would
    reach the file system as a file name), and only a name of the IANA database's list is
    taken (``iana_zones``): not ``localtime`` (the host's zone: every worker must compute
    the same slots), ``posixrules``, ``Factory``, ``posix/…`` or ``right/…`` (leap-second
    clocks), which a system's zone directory also holds."""
    if _ZONE_NAME.fullmatch(name) is None:
        shown = name if len(name) <= 64 else name[:64] + "…"
        return f"unknown time zone {shown!r}"
    known = iana_zones()
    try:
        if name not in known:
            raise ZoneInfoNotFoundError(name)
        ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError, OSError):
        from hz.runtime.artifacts.suggest import did_you_mean_suffix

        near = did_you_mean_suffix(name, sorted(known))
        return f"unknown time zone {name!r}{near}"
    return None


@functools.cache
def iana_zones() -> frozenset[str]:
    """The IANA zone names, as the ``tzdata`` package lists them (one list on every host,
    whatever its own zone directory holds), without ``Factory`` (no zone: its abbreviation
    says so)."""
    from importlib.resources import files

    listed = files("tzdata").joinpath("zones").read_text(encoding="utf-8")
    return frozenset(line.strip() for line in listed.splitlines() if line.strip()) - {"Factory"}


def jitter_seconds(value: int | str) -> int | None:
    """A jitter as seconds (an integer, or ``"30s"``, ``"5m"``, ``"1h"``); None when it is
    not one or is over ``MAX_JITTER``."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        seconds = value
    else:
        match = _DURATION.match(value)
        if match is None or not value.isascii():
            return None
        h, m, s = (int(part or 0) for part in match.groups())
        seconds = h * 3600 + m * 60 + s
    return seconds if 0 <= seconds <= MAX_JITTER else None


def slot_name(slot: datetime) -> str:
    """A slot's name: its UTC instant to the second, ``2026-03-29T01:30:00Z``."""
    return slot.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_slot(text: str) -> datetime | None:
    """The slot ``slot_name`` named, or None for text that is not one."""
    try:
        moment = datetime.strptime(text, "%Y-%m-%dT%H:%M:%SZ")
    except ValueError:
        return None
    return moment.replace(tzinfo=UTC)


def _instant(wall: datetime, zone: ZoneInfo) -> datetime:
    """The UTC instant of a wall time: a repeated one's first occurrence, one in a gap at the
    offset before the change (``fold=0`` for both, as PEP 495 defines it)."""
    return wall.replace(tzinfo=zone, fold=0).astimezone(UTC)


def slots_after(schedule: Schedule, moment: datetime) -> Iterator[datetime]:
    """The slots strictly after ``moment`` (aware), in order, as UTC instants; they end with
    the calendar (year 9999), never with an error."""
    from croniter import CroniterBadDateError, croniter

    zone = ZoneInfo(schedule.timezone)
    try:
        # Start early on the wall clock: a gap can move a slot past ``moment``'s wall time, by
        # at most the difference of two offsets of the zone near ``moment`` (a day at most).
        wall = moment.astimezone(zone).replace(tzinfo=None) - _lead(zone, moment)
        found = croniter(schedule.cron, wall, max_years_between_matches=_SEARCH_YEARS)
    except (OverflowError, ValueError):  # a moment at either end of the calendar
        return
    last: datetime | None = None
    while True:
        try:
            instant = _instant(found.get_next(datetime), zone)
        except (CroniterBadDateError, OverflowError, ValueError):
            return  # no slot before the calendar ends
        if instant <= moment or (last is not None and instant <= last):
            continue
        last = instant
        yield instant


def _lead(zone: ZoneInfo, moment: datetime) -> timedelta:
    """How far before ``moment``'s wall time a walk of the slots after ``moment`` starts: an
    hour more than the spread of the zone's offsets from two days before ``moment`` to two
    days after (a wall time earlier than that lands before ``moment`` whatever the gap), and
    never more than a day. A minutely job's look walks 60 wall times before it, not 1,440."""
    try:
        runs = _offset_runs(zone, moment - timedelta(days=2), moment + timedelta(days=2))
    except (OverflowError, ValueError):  # near either end of the calendar
        return timedelta(days=1)
    offsets = [offset for _, _, offset in runs]
    return min(timedelta(days=1), max(offsets) - min(offsets) + timedelta(hours=1))


#: What a listing of next slots says when there is none (``--at`` near the end of the
#: calendar).
NO_SLOT: Final = "none before the calendar ends (9999-12-31)"


def next_slots(schedule: Schedule, moment: datetime, count: int) -> list[datetime]:
    """The next ``count`` slots after ``moment``."""
    out = []
    for slot in slots_after(schedule, moment):
        out.append(slot)
        if len(out) >= count:
            break
    return out


def slots_between(
    schedule: Schedule, since: datetime, until: datetime, *, cap: int | None = None
) -> list[datetime]:
    """The slots in ``(since, until]``, oldest first; with ``cap``, only the newest ``cap``.
    A cap bounds the work too: the walk starts a little before the ``cap``-th newest slot
    (found walking back from ``until``), not at ``since`` (a year of missed minutes was half
    a million slots walked at every look)."""
    if cap is not None and until - since > timedelta(days=2):  # else the walk is short
        since = max(since, _before_newest(schedule, until, cap))
    out: list[datetime] = []
    for slot in slots_after(schedule, since):
        if slot > until:
            break
        out.append(slot)
        if cap is not None and len(out) > 4 * cap:
            del out[: len(out) - cap]
    return out if cap is None else out[-cap:]


#: How far apart ``count_slots`` samples a zone's UTC offset to find where it changes: the
#: changes of one zone in the IANA database are days apart (the closest, Africa/Freetown's in
#: 1939, four days), so no change between two samples goes unseen.
_OFFSET_STEP: Final = timedelta(hours=1)
#: A random field (croniter's ``R``): each croniter draws its own values.
_RANDOM = re.compile(r"(?<![A-Za-z])R(?![A-Za-z])", re.IGNORECASE)


def count_slots(schedule: Schedule, since: datetime, until: datetime) -> int:
    """``len(slots_between(schedule, since, until))`` without walking each slot where the
    zone's offset stays the same: there each wall time the cron names is one slot, counted per
    day (the days the cron's day fields name, found by croniter, times its hours and minutes).
    Within a margin of each change of the offset (a gap moves wall times by the change, a
    repeat fires its first occurrences) the slots are walked, as they are for a random cron
    and at the ends of the calendar."""
    from croniter import CroniterBadDateError, croniter

    if until <= since:
        return 0
    try:
        runs = _offset_runs(
            ZoneInfo(schedule.timezone), since - timedelta(days=3), until + timedelta(days=3)
        )
    except (OverflowError, ValueError):  # near either end of the calendar
        runs = []
    spread = max((o for _, _, o in runs), default=timedelta(0)) - min(
        (o for _, _, o in runs), default=timedelta(0)
    )
    if not runs or spread >= timedelta(hours=12) or _RANDOM.search(schedule.cron):
        # A zone that moved across the date line (Pacific/Apia in 2011): walked.
        return len(slots_between(schedule, since, until))
    margin = spread + timedelta(hours=1)
    minutes, hours = (
        list(range(span)) if field == ["*"] else [int(value) for value in field]
        for field, span in zip(croniter(schedule.cron).expanded[:2], (60, 24), strict=True)
    )
    days = " ".join(["0", "0", *schedule.cron.split()[2:]])
    count = 0
    walked_from = since
    for begin, end, offset in runs:
        # Within (a, b] the offset is the same from a - margin to b + margin: each wall time
        # in (a, b] + offset is one slot, and no other wall time lands there.
        a, b = max(since, begin + margin), min(until, end - margin)
        if a >= b:
            continue
        if a > walked_from:
            count += len(slots_between(schedule, walked_from, a))
        walked_from = b
        low, high = (a + offset).replace(tzinfo=None), (b + offset).replace(tzinfo=None)
        first = low.replace(hour=0, minute=0, second=0, microsecond=0) - _SECOND
        found = croniter(days, first, max_years_between_matches=_SEARCH_YEARS)
        try:
            while (day := found.get_next(datetime)) <= high:
                count += _walls_in(day, hours, minutes, low, high)
        except (CroniterBadDateError, OverflowError, ValueError):
            pass  # no such day before the calendar ends
    if until > walked_from:
        count += len(slots_between(schedule, walked_from, until))
    return count


_SECOND: Final = timedelta(seconds=1)


def _offset_runs(
    zone: ZoneInfo, since: datetime, until: datetime
) -> list[tuple[datetime, datetime, timedelta]]:
    """The zone's UTC offset from ``since`` to ``until``, sampled every ``_OFFSET_STEP``:
    ``(first, last, offset)`` for each run of samples with one offset."""
    runs: list[tuple[datetime, datetime, timedelta]] = []
    moment = since
    while True:
        offset = moment.astimezone(zone).utcoffset()
        assert offset is not None
        if runs and runs[-1][2] == offset:
            runs[-1] = (runs[-1][0], moment, offset)
        else:
            runs.append((moment, moment, offset))
        if moment >= until:
            return runs
        moment = min(until, moment + _OFFSET_STEP)


def _walls_in(
    day: datetime, hours: list[int], minutes: list[int], low: datetime, high: datetime
) -> int:
    """How many of ``day``'s wall times at ``hours`` x ``minutes`` are in ``(low, high]``."""
    if low < day and day.replace(hour=23, minute=59) <= high:
        return len(hours) * len(minutes)
    return sum(low < day.replace(hour=h, minute=m) <= high for h in hours for m in minutes)


def _before_newest(schedule: Schedule, until: datetime, cap: int) -> datetime:
    """An instant before the newest ``cap`` slots up to ``until`` (the calendar's start when
    there are fewer): croniter walks back from a day after ``until``'s wall time (a repeated
    hour can place a later wall time before ``until``) over at most a day's slots and
    ``cap`` more; the forward walk then starts three hours (more than any daylight-saving
    shift) before the oldest of them."""
    from croniter import CroniterBadDateError, croniter

    earliest = datetime.min.replace(tzinfo=UTC)
    zone = ZoneInfo(schedule.timezone)
    try:
        wall = until.astimezone(zone).replace(tzinfo=None) + timedelta(days=1)
        back = croniter(schedule.cron, wall, max_years_between_matches=_SEARCH_YEARS)
        found = 0
        while found <= cap:
            instant = _instant(back.get_prev(datetime), zone)
            if instant <= until:
                found += 1
        return instant - timedelta(hours=3)
    except (CroniterBadDateError, OverflowError, ValueError):
        return earliest


def jitter_of(schedule: Schedule, job: str, slot: datetime) -> int:
    """The delay of ``job``'s run for ``slot``, in whole seconds below the schedule's jitter:
    derived from the two, so every worker delays the same run alike."""
    if schedule.jitter_seconds == 0:
        return 0
    seed = hashlib.sha256(f"{job}\0{slot_name(slot)}".encode()).digest()
    return int.from_bytes(seed[:8], "big") % (schedule.jitter_seconds + 1)


def request_key(job: str, slot: datetime) -> str:
    """The request key of ``job``'s run for ``slot``: one run per slot, however many workers
    fire it."""
    return f"schedule:{job}:{slot_name(slot)}"


def describe(schedule: Schedule) -> str:
    """A schedule in one line: ``0 7 * * MON (Europe/Berlin, catch_up latest)``."""
    extra = f", jitter {schedule.jitter_seconds}s" if schedule.jitter_seconds else ""
    return f"{schedule.cron} ({schedule.timezone}, catch_up {schedule.catch_up}{extra})"
