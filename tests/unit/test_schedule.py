"""The schedule's slots: five fields, IANA zones, daylight-saving gaps and repeats, catch-up
windows, jitter and request keys (hz.runtime.artifacts.schedule)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from hz.runtime.artifacts.schedule import (
    Schedule,
    count_slots,
    cron_problem,
    jitter_of,
    jitter_seconds,
    next_slots,
    parse_slot,
    request_key,
    slot_name,
    slots_between,
    zone_problem,
)


def names(slots: list[datetime]) -> list[str]:
    return [slot_name(s) for s in slots]


def at(*parts: int) -> datetime:
    return datetime(*parts, tzinfo=UTC)  # type: ignore[misc]


def test_a_weekly_cron_in_utc() -> None:
    schedule = Schedule(cron="0 7 * * MON")
    assert names(next_slots(schedule, at(2026, 12, 2), 2)) == [
        "2026-12-07T07:00:00Z",
        "2026-12-14T07:00:00Z",
    ]


def test_the_spring_gap_fires_after_it_and_once_per_instant() -> None:
    # Europe/Berlin, 29 March 2026: 02:00 CET becomes 03:00 CEST (01:00 UTC).
    schedule = Schedule(cron="*/30 * * * *", timezone="Europe/Berlin")
    assert names(slots_between(schedule, at(2026, 3, 28, 23, 45), at(2026, 3, 29, 2))) == [
        "2026-03-29T00:00:00Z",  # 01:00 CET
        "2026-03-29T00:30:00Z",  # 01:30 CET
        "2026-03-29T01:00:00Z",  # 02:00 (in the gap) = 03:00 CEST, one slot with 03:00
        "2026-03-29T01:30:00Z",  # 02:30 (in the gap) = 03:30 CEST, one slot with 03:30
        "2026-03-29T02:00:00Z",  # 04:00 CEST
    ]


def test_a_daily_slot_in_the_gap_still_fires_that_day() -> None:
    schedule = Schedule(cron="30 2 * * *", timezone="Europe/Berlin")
    assert names(next_slots(schedule, at(2026, 3, 28, 12), 2)) == [
        "2026-03-29T01:30:00Z",  # 03:30 CEST: as far after the gap's start as 02:30 was
        "2026-03-30T00:30:00Z",  # 02:30 CEST
    ]


@pytest.mark.parametrize(
    ("cron", "zone", "moment", "first"),
    [
        # 30 seconds after Berlin's gap began: 02:30 (wall) is before 03:00:30, yet fires after.
        ("30 2 * * *", "Europe/Berlin", at(2026, 3, 29, 1, 0, 30), "2026-03-29T01:30:00Z"),
        # Lord Howe's half-hour gap: 02:15 fires at 02:45 summer time.
        ("15 2 * * *", "Australia/Lord_Howe", at(2026, 10, 3, 15, 30, 30), "2026-10-03T15:45:00Z"),
        # Samoa skipped 30 December 2011: its noon fires at the next day's noon, once.
        ("0 12 * * *", "Pacific/Apia", at(2011, 12, 30, 10, 0, 30), "2011-12-30T22:00:00Z"),
    ],
)
def test_a_walk_from_just_after_a_gap_still_finds_the_slot_the_gap_moved(
    cron: str, zone: str, moment: datetime, first: str
) -> None:
    # The walk starts before the moment's wall time by the zone's offset change near it.
    assert names(next_slots(Schedule(cron=cron, timezone=zone), moment, 1)) == [first]


def test_the_autumn_repeat_fires_once_at_its_first_occurrence() -> None:
    # Europe/Berlin, 25 October 2026: 03:00 CEST becomes 02:00 CET (01:00 UTC).
    schedule = Schedule(cron="30 2 * * *", timezone="Europe/Berlin")
    assert names(next_slots(schedule, at(2026, 10, 24, 12), 2)) == [
        "2026-10-25T00:30:00Z",  # 02:30 CEST, the first 02:30; 02:30 CET does not fire
        "2026-10-26T01:30:00Z",
    ]


def test_a_window_with_a_cap_keeps_the_newest() -> None:
    schedule = Schedule(cron="* * * * *")
    assert names(slots_between(schedule, at(2026, 1, 1), at(2026, 1, 1, 10), cap=2)) == [
        "2026-01-01T09:59:00Z",
        "2026-01-01T10:00:00Z",
    ]
    assert slots_between(schedule, at(2026, 1, 1), at(2026, 1, 1)) == []


FIVE = "a cron expression has 5 fields (minute hour day-of-month month day-of-week), this one has"
DOW = "the day of week field 'MONDAY' is not valid: not a value this field takes"
RANDOM = (
    "R (a random value) would give each worker and each look its own slots; write the value, "
    "or use jitter"
)
STEP = "the minute field '*/0' is not valid: step '0' in field 0 is not acceptable"


@pytest.mark.parametrize(
    ("cron", "problem"),
    [
        ("0 7 * * MON", None),
        ("0 0 29 2 *", None),
        ("61 * * * *", (0, "the minute field '61' is not valid: out of range")),
        ("R * * * *", (0, "the minute field 'R' is not valid: " + RANDOM)),
        ("0 0 r * *", (2, "the day of month field 'r' is not valid: " + RANDOM)),
        ("0 R(0-5) * * *", (1, "the hour field 'R(0-5)' is not valid: " + RANDOM)),
        ("0 0 * MAR FRI", None),  # names with an R in them are names
        ("0 7 * * MONDAY", (4, DOW)),
        ("*/0 * * * *", (0, STEP)),
        ("0 0 31 4,6 *", (None, "the expression matches no date (a day that no month of it has)")),
        ("* * *", (None, f"{FIVE} 3")),
        ("0 0 * * * *", (None, f"{FIVE} 6")),
    ],
)  # fmt: skip
def test_cron_problems(cron: str, problem: tuple[int | None, str] | None) -> None:
    assert cron_problem(cron) == problem


def test_zone_problems() -> None:
    assert zone_problem("Europe/Berlin") is None
    assert zone_problem("Europe/Berln") == (
        "unknown time zone 'Europe/Berln' (did you mean 'Europe/Berlin'?)"
    )
    assert zone_problem("../../etc/passwd") == "unknown time zone '../../etc/passwd'"


def test_jitter_is_the_same_on_every_worker_and_within_its_bound() -> None:
    assert jitter_seconds("5m") == 300
    assert jitter_seconds(30) == 30
    assert jitter_seconds("61m") is None
    assert jitter_seconds(True) is None
    schedule = Schedule(cron="* * * * *", jitter_seconds=300)
    delays = {jitter_of(schedule, "job", at(2026, 1, 1, 0, m)) for m in range(30)}
    assert all(0 <= d <= 300 for d in delays)
    assert len(delays) > 1
    assert jitter_of(schedule, "job", at(2026, 1, 1)) == jitter_of(schedule, "job", at(2026, 1, 1))
    assert jitter_of(Schedule(cron="* * * * *"), "job", at(2026, 1, 1)) == 0


def test_request_keys_and_slot_names_round_trip() -> None:
    slot = at(2026, 3, 29, 1, 30)
    assert request_key("weekly", slot) == "schedule:weekly:2026-03-29T01:30:00Z"
    assert parse_slot(slot_name(slot)) == slot
    assert parse_slot("yesterday") is None


def test_a_zone_not_shaped_like_one_is_never_looked_up() -> None:
    """A contract's zone name reaches the file system as a file name: one far too long made
    ZoneInfo raise OSError (a traceback from hz validate), a path climbs out of tzdata."""
    from hz.runtime.artifacts.schedule import zone_problem

    assert zone_problem("x" * 300) == f"unknown time zone '{'x' * 64}…'"
    assert zone_problem("../../etc/passwd") == "unknown time zone '../../etc/passwd'"
    assert zone_problem("Europe/Berlin") is None
    assert zone_problem("Etc/GMT+1") is None
    assert zone_problem("America/Argentina/Buenos_Aires") is None


@pytest.mark.parametrize(
    ("cron", "years"),
    [("0 0 29 2 SUN#5", (2032, 2060, 2088)), ("0 0 29 2 5#5", (2036, 2064, 2092))],
)
def test_a_cron_that_matches_decades_apart_yields_its_slots(
    cron: str, years: tuple[int, ...]
) -> None:
    """Attack on issue 26, hit 1: 28 years between matches raised CroniterBadDateError (exit 3
    in validate -v, schedules list, explain; the worker's thread) once past the first."""
    assert cron_problem(cron) is None
    first = [f"{year}-02-29T00:00:00Z" for year in years]
    schedule = Schedule(cron=cron)
    assert names(next_slots(schedule, at(2026, 1, 1), 3)) == first
    assert names(slots_between(schedule, at(2031, 1, 1), at(2070, 1, 1))) == first[:2]


@pytest.mark.parametrize("zone", ["UTC", "Pacific/Kiritimati", "Pacific/Pago_Pago"])
def test_the_slots_end_with_the_calendar(zone: str) -> None:
    """Hit 11: near 9999-12-31 croniter and the zone's offset leave datetime's range."""
    schedule = Schedule(cron="0 0 29 2 *", timezone=zone)
    assert next_slots(schedule, at(9999, 12, 20), 3) == []
    daily = Schedule(cron="0 12 * * *", timezone=zone)
    assert len(next_slots(daily, at(9999, 12, 29), 5)) < 5
    assert slots_between(daily, at(9999, 12, 30), at(9999, 12, 31, 23, 59)) != []


@pytest.mark.parametrize(
    ("zone", "said"),
    [
        ("localtime", "unknown time zone 'localtime'"),
        ("posixrules", "unknown time zone 'posixrules'"),
        ("Factory", "unknown time zone 'Factory'"),
        ("right/Europe/Berlin", "unknown time zone 'right/Europe/Berlin' (did you mean "
         "'Europe/Berlin'?)"),
        ("posix/Asia/Tokyo", "unknown time zone 'posix/Asia/Tokyo' (did you mean 'Asia/Tokyo'?)"),
        ("US/Eastern", None),  # an IANA link: in the database's list
        ("Etc/UTC", None),
    ],
)  # fmt: skip
def test_only_the_iana_zones_are_taken(zone: str, said: str | None) -> None:
    """Attack on issue 26, hit 7: files of the host's zone directory passed (``localtime``
    made slot names host-dependent, ``right/*`` an hour off, absent from the tzdata wheel)."""
    assert zone_problem(zone) == said


def test_a_capped_window_walks_a_bounded_number_of_slots(monkeypatch: pytest.MonkeyPatch) -> None:
    """Attack on issue 26, hit 8: a year of missed minutes walked every one of its 525,600
    slots at each look (11 s of CPU) to keep the newest one."""
    from croniter import croniter

    steps: list[int] = []
    real_next, real_prev = croniter.get_next, croniter.get_prev

    def get_next(self: croniter, *args: object) -> object:
        steps.append(1)
        return real_next(self, *args)  # type: ignore[arg-type]

    def get_prev(self: croniter, *args: object) -> object:
        steps.append(1)
        return real_prev(self, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(croniter, "get_next", get_next)
    monkeypatch.setattr(croniter, "get_prev", get_prev)
    minutely = Schedule(cron="* * * * *")
    now = at(2026, 12, 2, 2, 40, 30)
    newest = slots_between(minutely, at(2025, 12, 2), now, cap=100)
    assert (len(newest), slot_name(newest[0]), slot_name(newest[-1])) == (
        100,
        "2026-12-02T01:01:00Z",
        "2026-12-02T02:40:00Z",
    )
    assert len(steps) < 5_000  # a day before and after, and the cap: not the year
    berlin = Schedule(cron="30 2 * * *", timezone="Europe/Berlin")
    assert names(slots_between(berlin, at(2020, 1, 1), at(2026, 3, 30), cap=2)) == [
        "2026-03-28T01:30:00Z",
        "2026-03-29T01:30:00Z",  # the gap's 02:30, at 03:30 summer time
    ]


def test_a_minutely_job_is_counted_exactly_without_walking_each_slot() -> None:
    since = at(2026, 12, 2, 9, 0, 30)
    # 30 days of minutes; the first whole minute after 09:00:30 is 09:01, the last 09:00.
    assert count_slots(Schedule(cron="* * * * *"), since, since + timedelta(days=30)) == 43_200
    # Berlin's spring gap: 02:00-02:59 fire at 03:00-03:59 summer time, the instants of that
    # day's 03:00-03:59, once each: every minute of the 30 days has one slot. The autumn
    # repeat fires its first occurrence only: the hour of the second has none (60 fewer).
    berlin = Schedule(cron="* * * * *", timezone="Europe/Berlin")
    assert count_slots(berlin, at(2026, 3, 15), at(2026, 4, 14)) == 43_200
    assert count_slots(berlin, at(2026, 10, 10), at(2026, 11, 9)) == 43_200 - 60
    # Lord Howe moves its clocks by half an hour.
    howe = Schedule(cron="* * * * *", timezone="Australia/Lord_Howe")
    assert count_slots(howe, at(2026, 3, 20), at(2026, 4, 19)) == 43_200 - 30


@pytest.mark.parametrize(
    ("cron", "zone", "since"),
    [
        ("*/7 1-3 * * *", "Europe/Berlin", at(2026, 3, 27, 23, 59, 30)),
        ("0,45 2,3 * * *", "Europe/Berlin", at(2026, 10, 23, 0, 1)),
        ("10,50 1-4 * * SUN", "America/New_York", at(2026, 3, 6, 7)),
        ("0,30 0-3 * * *", "Australia/Lord_Howe", at(2026, 4, 3, 15)),
        ("0 0 L * *", "America/Santiago", at(2026, 3, 30)),
        ("0 1 * * SUN#5", "Europe/London", at(2026, 3, 1)),
        ("* 2 * * *", "America/New_York", at(2026, 10, 30, 6, 30)),
        ("59 23 * * *", "Pacific/Apia", at(2011, 12, 25)),  # a day skipped: walked
    ],
)
def test_a_count_is_the_walks_length_across_daylight_saving_changes(
    cron: str, zone: str, since: datetime
) -> None:
    schedule = Schedule(cron=cron, timezone=zone)
    for until in (since + timedelta(hours=5), since + timedelta(days=9)):
        assert count_slots(schedule, since, until) == len(slots_between(schedule, since, until))
    assert count_slots(schedule, since, since) == 0
