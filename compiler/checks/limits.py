"""The version gate and the session limits: timeout and budget."""

from __future__ import annotations

import math
import re
from typing import Any

from compiler.checks.common import at, get
from compiler.checks.messages import got
from compiler.diagnostics import Diagnostic
from compiler.source import SourceDoc

SUPPORTED_VERSION = 1
MAX_TIMEOUT = 24 * 3600

_DURATION = re.compile(r"(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?")
_DURATION_HINT = 'write integer seconds or hours, minutes and seconds: "90s", "10m", "1h30m"'


def check_version(doc: SourceDoc) -> Diagnostic | None:
    """The gate: a contract newer than this hz gets one error and nothing else."""
    version = get(doc.data, "hz", "contract")
    if isinstance(version, bool) or not isinstance(version, int) or version <= SUPPORTED_VERSION:
        return None
    return at(
        doc,
        ("hz", "contract"),
        "HZ100",
        f"this contract is written in format version {version} and needs a newer hz "
        f"(this hz reads version {SUPPORTED_VERSION})",
        hint="upgrade hz, or write the contract in format version 1",
    )


def parse_duration(text: str) -> int | None:
    """ "1h30m" -> 5400; None when ``text`` is not hours, minutes and seconds in order."""
    m = _DURATION.fullmatch(text)
    if not text or m is None:
        return None
    h, mi, s = (int(g) if g else 0 for g in m.groups())
    return h * 3600 + mi * 60 + s


def check_timeout(doc: SourceDoc) -> tuple[int | None, list[Diagnostic]]:
    """The timeout in seconds, or None with the reason."""
    hz = doc.data.get("hz")
    if not isinstance(hz, dict) or "timeout" not in hz:
        return None, []  # the schema reports the missing key
    raw: Any = hz["timeout"]
    path = ("hz", "timeout")
    if isinstance(raw, str):
        seconds = parse_duration(raw)
        if seconds is None:
            msg = f"hz.timeout: {raw!r} is not a duration"
            hint = _DURATION_HINT
            if raw.strip().isdigit():  # "600" quoted: seconds need no quotes, strings a unit
                hint = f'write {raw.strip()} without quotes for seconds, or "{raw.strip()}s"'
            return None, [at(doc, path, "HZ301", msg, hint=hint)]
    elif isinstance(raw, int) and not isinstance(raw, bool):
        seconds = raw
    else:
        msg = f'hz.timeout: expected integer seconds or a duration such as "10m", got {got(raw)}'
        return None, [at(doc, path, "HZ103", msg, hint=_DURATION_HINT)]
    if not 1 <= seconds <= MAX_TIMEOUT:
        shown = raw if isinstance(raw, str) else f"{raw} seconds"
        msg = f"hz.timeout: {shown} is outside 1 second … 24 hours"
        hint = "a session may run at least 1 second and at most 24 hours (86400 seconds)"
        return None, [at(doc, path, "HZ302", msg, hint=hint)]
    return seconds, []


def check_max_usd(doc: SourceDoc, ceiling: float) -> tuple[float | None, list[Diagnostic]]:
    """The budget in US dollars, or None with the reason."""
    agent = get(doc.data, "hz", "agent")
    if not isinstance(agent, dict) or "max_usd" not in agent:
        return None, []
    raw: Any = agent["max_usd"]
    path = ("hz", "agent", "max_usd")
    if isinstance(raw, bool) or not isinstance(raw, (int, float)):
        msg = f"hz.agent.max_usd: expected a number of US dollars, got {got(raw)}"
        return None, [at(doc, path, "HZ103", msg)]
    usd = float(raw)
    if math.isnan(usd) or usd <= 0:
        msg = f"hz.agent.max_usd: the budget must be greater than 0, got {raw}"
        hint = "every session needs a positive budget, e.g. max_usd: 0.50"
        return None, [at(doc, path, "HZ303", msg, hint=hint)]
    if usd > ceiling:
        msg = f"hz.agent.max_usd: {raw} is over the ceiling of {ceiling:g} US dollars"
        hint = (
            "lower the budget, or raise the ceiling: "
            "[authoring] max_usd_ceiling in hz.toml, or --max-usd-ceiling"
        )
        return None, [at(doc, path, "HZ304", msg, hint=hint)]
    return usd, []
