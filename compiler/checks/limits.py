"""The version gate and the session limits: timeout and budget."""

from __future__ import annotations

import math
import re
from typing import Any

from hz.compiler.checks.common import at, get
from hz.compiler.checks.messages import got
from hz.compiler.diagnostics import Diagnostic
from hz.compiler.rules.registry import HZ100, HZ103, HZ301, HZ302, HZ303, HZ304
from hz.compiler.source import SourceDoc

SUPPORTED_VERSION = 1
MAX_TIMEOUT = 24 * 3600

#: ASCII digits, as the published schema's ECMA-262 ``\d`` (Python's ``\d`` and ``str.isdigit``
#: take other scripts' digits, and ``isdigit`` superscripts that ``int`` refuses).
_DURATION = re.compile(r"(?:([0-9]+)h)?(?:([0-9]+)m)?(?:([0-9]+)s)?")
_DURATION_HINT = 'write integer seconds or hours, minutes and seconds: "90s", "10m", "1h30m"'
#: A number with more significant digits than this is over 24 hours in any unit; it is not
#: converted (int() refuses strings over 4300 digits, and a huge one is slow anyway).
_MAX_DIGITS = 9
_RANGE_HINT = "a session may run at least 1 second and at most 24 hours (86400 seconds)"
_CLIP = 40
_NUMERIC = re.compile(r"[0-9]+(?:\.[0-9]+)?")


def _digits(text: str) -> bool:
    return text.isascii() and text.isdigit()


def clip(text: str) -> str:
    """A user's value cut to a readable length for a message: the first 40 characters + "…"."""
    return text if len(text) <= _CLIP else text[:_CLIP] + "…"


def check_version(doc: SourceDoc) -> Diagnostic | None:
    """The gate: a contract newer than this hz gets one error and nothing else; so does a
    version that is not a number ("2"), since the format of the rest is then unknown."""
    hz = doc.data.get("hz")
    if not isinstance(hz, dict) or "contract" not in hz:
        return None  # the schema reports the missing key
    version: Any = hz["contract"]
    path = ("hz", "contract")
    shown = clip(version if isinstance(version, str) else repr(version))
    if isinstance(version, str) and _digits(version) and _plain(doc, path):
        version = _number(version)  # unquoted, too many digits for the loader to convert
    if isinstance(version, bool) or not isinstance(version, (int, float)):
        text = version.strip() if isinstance(version, str) else ""
        hint = (
            f"write the version as a number, without quotes: contract: {clip(text)}"
            if _NUMERIC.fullmatch(text)
            else f"the format version is a number: contract: {SUPPORTED_VERSION}"
        )
        msg = f"hz.contract: expected an integer, got {got(version)}"
        return at(doc, path, HZ103, msg, hint=hint)
    if not version > SUPPORTED_VERSION:  # nan, 0 and 0.5 are the schema's to report
        return None
    return at(
        doc,
        path,
        HZ100,
        f"this contract is written in format version {shown} and needs a newer hz "
        f"(this hz reads version {SUPPORTED_VERSION})",
        hint="upgrade hz, or write the contract in format version 1",
    )


def _number(digits: str | None) -> int:
    significant = (digits or "").lstrip("0")
    return int(significant or "0") if len(significant) <= _MAX_DIGITS else 10**_MAX_DIGITS


def parse_duration(text: str) -> int | None:
    """ "1h30m" -> 5400; None when ``text`` is not hours, minutes and seconds in order, or
    when minutes after hours or seconds after minutes or hours are 60 or more ("1h90m":
    a typo as likely as a sum, so it is not guessed)."""
    m = _DURATION.fullmatch(text)
    if not text or m is None:
        return None
    h, mi, s = (_number(g) for g in m.groups())
    hours, minutes, _ = m.groups()
    if (hours is not None and mi >= 60) or ((hours or minutes) is not None and s >= 60):
        return None
    return h * 3600 + mi * 60 + s


def duration_text(seconds: int) -> str:
    """5400 -> "1h30m": the canonical spelling of a duration."""
    h, rest = divmod(seconds, 3600)
    mi, s = divmod(rest, 60)
    text = (f"{h}h" if h else "") + (f"{mi}m" if mi else "") + (f"{s}s" if s else "")
    return text or "0s"


def _duration_hint(text: str) -> str:
    m = _DURATION.fullmatch(text)
    if text and m is not None:  # well-formed but a component is 60 or more
        h, mi, s = (_number(g) for g in m.groups())
        total = h * 3600 + mi * 60 + s
        fixed = duration_text(total) if total <= MAX_TIMEOUT else None
        spelled = f': write "{fixed}"' if fixed else ""
        return f"minutes after hours and seconds after minutes must be below 60{spelled}"
    return _DURATION_HINT


def check_timeout(doc: SourceDoc) -> tuple[int | None, list[Diagnostic]]:
    """The timeout in seconds, or None with the reason."""
    hz = doc.data.get("hz")
    if not isinstance(hz, dict) or "timeout" not in hz:
        return None, []  # the schema reports the missing key
    raw: Any = hz["timeout"]
    path = ("hz", "timeout")
    seconds: int | None
    if isinstance(raw, str) and _digits(raw) and _plain(doc, path):
        # An unquoted integer too long for the loader to convert: a number, and far too big.
        seconds = _number(raw)
    elif isinstance(raw, str):
        seconds = parse_duration(raw)
        if seconds is None:
            msg = f"hz.timeout: {clip(raw)!r} is not a duration"
            hint = _duration_hint(raw)
            if _digits(raw.strip()) and _number(raw.strip()) <= MAX_TIMEOUT:
                # "600" quoted: seconds need no quotes, strings a unit
                n = raw.strip()
                hint = f'write {n} without quotes for seconds, or "{n}s"'
            elif _digits(raw.strip()):
                hint = _RANGE_HINT
            return None, [at(doc, path, HZ301, msg, hint=hint)]
    elif isinstance(raw, int) and not isinstance(raw, bool):
        seconds = raw
    else:
        msg = f'hz.timeout: expected integer seconds or a duration such as "10m", got {got(raw)}'
        return None, [at(doc, path, HZ103, msg, hint=_DURATION_HINT)]
    if seconds is None or not 1 <= seconds <= MAX_TIMEOUT:
        shown = clip(raw if isinstance(raw, str) and not _digits(raw) else f"{raw}")
        shown += "" if isinstance(raw, str) and not _digits(raw) else " seconds"
        msg = f"hz.timeout: {shown} is outside 1 second … 24 hours"
        hint = _RANGE_HINT
        return None, [at(doc, path, HZ302, msg, hint=hint)]
    return seconds, []


def _plain(doc: SourceDoc, path: tuple[str, ...]) -> bool:
    info = doc.scalars.get(path)
    return info is not None and info.style is None


def check_max_usd(doc: SourceDoc, ceiling: float) -> tuple[float | None, list[Diagnostic]]:
    """The budget in US dollars, or None with the reason."""
    agent = get(doc.data, "hz", "agent")
    if not isinstance(agent, dict) or "max_usd" not in agent:
        return None, []
    raw: Any = agent["max_usd"]
    path = ("hz", "agent", "max_usd")
    if isinstance(raw, bool) or not isinstance(raw, (int, float)):
        msg = f"hz.agent.max_usd: expected a number of US dollars, got {got(raw)}"
        text = raw.strip() if isinstance(raw, str) else ""
        numeric = _NUMERIC.fullmatch(text) is not None
        hint = f"remove the quotes: max_usd: {clip(text)}" if numeric else None
        if numeric and _plain(doc, path):  # digits past what a number can hold: kept as text
            msg = f"hz.agent.max_usd: {clip(text)} is no amount of US dollars (too many digits)"
            hint = "a budget is a few dollars, e.g. max_usd: 0.50"
        return None, [at(doc, path, HZ103, msg, hint=hint)]
    # An integer is compared exactly first: float() of one past 1e308 raises OverflowError.
    usd = math.inf if isinstance(raw, int) and raw > ceiling else float(raw)
    if math.isnan(usd) or usd <= 0:
        msg = f"hz.agent.max_usd: the budget must be greater than 0, got {raw}"
        hint = "every session needs a positive budget, e.g. max_usd: 0.50"
        return None, [at(doc, path, HZ303, msg, hint=hint)]
    if usd > ceiling:
        msg = f"hz.agent.max_usd: {clip(str(raw))} is over the ceiling of {ceiling:g} US dollars"
        hint = (
            "lower the budget, or raise the ceiling: "
            "[authoring] max_usd_ceiling in the hz configuration, or --max-usd-ceiling"
        )
        return None, [at(doc, path, HZ304, msg, hint=hint)]
    return usd, []
