"""``hz.schedule`` and ``hz.after``: a cron each field of which croniter reads, a date it can
match, an IANA time zone, a jitter within an hour (the schema checks the shapes)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from hz.compiler.checks.common import at
from hz.compiler.diagnostics import Diagnostic
from hz.compiler.rules.registry import HZ160, HZ161, HZ162, HZ163
from hz.compiler.source import JsonPath, SourceDoc

if TYPE_CHECKING:
    # The schedule module builds pydantic models and imports croniter: only for a contract
    # with a schedule (``hz validate`` of one without must not pay for them).
    from hz.runtime.artifacts.schedule import Schedule

_CRON_HINT = (
    'five fields: minute hour day-of-month month day-of-week, e.g. "0 7 * * MON" '
    "(see docs/schedules.md)"
)


def check_schedule(doc: SourceDoc) -> list[Diagnostic]:
    """Every problem of the contract's schedule the schema cannot see."""
    hz = doc.data.get("hz") if isinstance(doc.data, dict) else None
    value = hz.get("schedule") if isinstance(hz, dict) else None
    if isinstance(value, str):
        return _cron(doc, ("hz", "schedule"), value)
    if not isinstance(value, dict):
        return []
    from hz.runtime.artifacts.schedule import MAX_JITTER, jitter_seconds, zone_problem

    found: list[Diagnostic] = []
    if isinstance(value.get("cron"), str):
        found += _cron(doc, ("hz", "schedule", "cron"), value["cron"])
    zone = value.get("timezone")
    if isinstance(zone, str) and zone:
        problem = zone_problem(zone)
        if problem is not None:
            found.append(
                at(
                    doc,
                    ("hz", "schedule", "timezone"),
                    HZ162,
                    f"hz.schedule.timezone: {problem}",
                    hint="an IANA time zone name such as Europe/Berlin or UTC",
                )
            )
    jitter = value.get("jitter")
    if isinstance(jitter, str) and jitter and jitter_seconds(jitter) is None:
        found.append(
            at(
                doc,
                ("hz", "schedule", "jitter"),
                HZ163,
                f"hz.schedule.jitter: {jitter!r} is longer than {MAX_JITTER // 60} minutes",
                hint='a jitter spreads runs within an hour of their slot: at most "1h"',
            )
        )
    return found


def _cron(doc: SourceDoc, path: JsonPath, cron: str) -> list[Diagnostic]:
    from hz.runtime.artifacts.schedule import cron_problem

    problem = cron_problem(cron)
    if problem is None:
        return []
    field, message = problem
    where = ".".join(str(p) for p in path)
    code = HZ161 if message.startswith("the expression matches no date") else HZ160
    pos = doc.pos(path)
    column = pos.column
    if field is not None and path in doc.scalars:
        column += _field_offset(doc, path, cron, field)
    hint = (
        "every day of month it names is past the end of each month it names"
        if code == HZ161
        else _CRON_HINT
    )
    return [Diagnostic(code, f"{where}: {message}", doc.path, pos.line, column, hint=hint)]


def _field_offset(doc: SourceDoc, path: JsonPath, cron: str, field: int) -> int:
    """How far into the written scalar the cron's ``field`` starts (plain or quoted on one
    line; otherwise 0: the scalar's start)."""
    info = doc.scalars.get(path)
    if info is None or info.style not in (None, "'", '"'):
        return 0
    quote = 0 if info.style is None else 1
    offset = len(cron) - len(cron.lstrip())
    for index, part in enumerate(cron.split()):
        offset = cron.index(part, offset)
        if index == field:
            return quote + offset
        offset += len(part)
    return 0


def schedule_of(value: Any) -> Schedule | None:
    """The ``Schedule`` of a checked contract's ``hz.schedule`` (None without one)."""
    if value is None:
        return None
    from hz.runtime.artifacts.schedule import Schedule, jitter_seconds

    if isinstance(value, str):
        return Schedule(cron=" ".join(value.split()))
    jitter = value.get("jitter", 0)
    return Schedule(
        cron=" ".join(value["cron"].split()),
        timezone=value.get("timezone", "UTC"),
        catch_up=value.get("catch_up", "latest"),
        jitter_seconds=jitter_seconds(jitter) or 0,
    )
