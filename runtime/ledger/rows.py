"""The ledger's rows as typed, frozen values, checked in one place as they are read.

A row is outside input: a hand edit, a newer hz, a damaged page can put any value in any
column (SQLite keeps text in a REAL column, bytes in a TEXT one). ``RunRow.read`` checks every
column against its kind; a value that does not fit is replaced by its kind's empty value and
named in ``bad`` (``"cost_usd: 'abc' is not a number"``). Readers use the typed attributes,
never the raw row. What a malformed row may do is decided by each reader, always without a
crash: ``hz runs list`` marks it, ``hz runs show`` names its bad columns, reconciliation and
cancellation leave it alone, an owner fails it ``not_started`` before anything is spawned.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from hz.runtime.artifacts.strict_json import JsonError
from hz.runtime.artifacts.strict_json import loads as json_loads
from hz.runtime.ledger.paths import path_text, read_path

#: The latest moment a time column may hold: the end of the year 9999, the last that a date
#: can be printed for (``datetime``).
LATEST = 253402300799.0
#: The largest process id Linux hands out (``pid_max`` is at most 2**22).
MAX_PID = 1 << 22
#: What a number column may hold in magnitude (money, counts): beyond it, a hand edit.
MAX_NUMBER = 1e15
#: A stored result object longer than this (characters) is not hz's (8 MiB per stream, and
#: some JSON). The database measures it (``RUN_SELECT``): a longer one is never fetched.
MAX_RESULT = 64 << 20
#: What the database hands back instead of a ``result_json`` over ``MAX_RESULT``: this, then
#: its length. A result hz stored is a JSON object: it never starts so.
OVERSIZE = "hz-oversize:"


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:39] + "…"


def not_utf8(text: str) -> bool:
    """Whether ``text`` holds bytes that were not UTF-8 (the SQLite connection reads them as
    ``os.fsdecode`` names them, ``\\udcXX``: ``hz.runtime.ledger.db.TEXT``)."""
    if text.isascii():
        return False
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def _text(value: Any) -> tuple[Any, str | None]:
    if isinstance(value, str):
        if not_utf8(value):
            return "", f"{_shown(value)} is not UTF-8 text"
        return value, None
    return "", f"{_shown(value)} is not text"


def _integer(low: int, high: int) -> Callable[[Any], tuple[Any, str | None]]:
    def check(value: Any) -> tuple[Any, str | None]:
        if isinstance(value, int) and not isinstance(value, bool) and low <= value <= high:
            return value, None
        if isinstance(value, int) and not isinstance(value, bool):
            return 0, f"{_shown(value)} is out of range"
        return 0, f"{_shown(value)} is not a whole number"

    return check


def _real(low: float, high: float) -> Callable[[Any], tuple[Any, str | None]]:
    def check(value: Any) -> tuple[Any, str | None]:
        if not isinstance(value, int | float) or isinstance(value, bool):
            return 0.0, f"{_shown(value)} is not a number"
        try:
            number = float(value)
        except OverflowError:  # an integer of 400 digits
            number = math.inf
        if not low <= number <= high:  # NaN fails both
            return 0.0, f"{_shown(value)} is out of range"
        return number, None

    return check


_INT = _integer(-(1 << 62), 1 << 62)
_COUNT = _integer(0, 1 << 31)
_PID = _integer(1, MAX_PID)
_TICKS = _integer(0, 1 << 62)
_AMOUNT = _real(0.0, MAX_NUMBER)
_TIME = _real(0.0, LATEST)


def _nullable(
    check: Callable[[Any], tuple[Any, str | None]],
) -> Callable[[Any], tuple[Any, str | None]]:
    def maybe(value: Any) -> tuple[Any, str | None]:
        if value is None:
            return None, None
        found, why = check(value)
        return (None, why) if why else (found, None)

    return maybe


def _from_text(
    read: Callable[[str], tuple[Any, str | None]], empty: Any
) -> Callable[[Any], tuple[Any, str | None]]:
    """A column of text that ``read`` makes its value of: text first (``empty`` when it is
    not)."""

    def check(value: Any) -> tuple[Any, str | None]:
        _, why = _text(value)
        return (empty, why) if why else read(value)

    return check


def _read_result(text: str) -> tuple[Any, str | None]:
    """The stored result object (``hz run --format json``'s), or why it is none."""
    if text.startswith(OVERSIZE) or len(text) > MAX_RESULT:
        size = text[len(OVERSIZE) :] if text.startswith(OVERSIZE) else str(len(text))
        size = f"{int(size):,}" if size.isdigit() and len(size) < 20 else "?"
        return None, f"{size} characters, more than the {MAX_RESULT >> 20} MiB a result holds"
    try:
        found = json_loads(text)
    except JsonError as e:
        return None, f"not JSON ({e.msg[:80]})"
    if not isinstance(found, dict):
        return None, f"a JSON {type(found).__name__}, not an object"
    return found, None


def _read_path(text: str) -> tuple[Any, str | None]:
    """A stored path (``paths.path_text``) as the path's own text: a ``file://`` URI, which
    holds bytes that are not UTF-8, read back to those bytes (``paths.read_path``)."""
    path = read_path(text)
    if "\x00" in path:
        return "", f"{_shown(text)} holds a NUL, which no path does"
    return path, None


_result = _nullable(_from_text(_read_result, None))
# Observations are a best effort: what cannot be read is left out, as before.
_observed = _nullable(_from_text(lambda text: (read_observed(text), None), None))
_path = _from_text(_read_path, "")
_T, _T0 = _text, _nullable(_text)
_P, _P0 = _path, _nullable(_path)
#: The columns that hold a path: read with ``_path``, written with ``paths.path_text``.
PATHS = ("workdir", "receipt_dir", "private_dir", "receipt_path", "target")
#: The columns read as the objects they hold, and their attributes.
OBJECTS = {"observed_json": "observed", "result_json": "result"}
#: Each column of ``runs`` and how its value is checked, read into the attribute of its name
#: (``OBJECTS``' of theirs).
RUN_COLUMNS: dict[str, Callable[[Any], tuple[Any, str | None]]] = {
    "id": _T,
    "request_key": _T,
    "state": _T,
    "failure_kind": _T0,
    "attempt": _integer(1, 1 << 31),
    "retry_of": _T0,
    "batch": _T0,
    "job_name": _T,
    "job_digest": _T,
    "inputs_sha256": _T,
    "workdir": _P,
    "receipt_dir": _P0,
    "packet_json": _T,
    "max_usd": _AMOUNT,
    "runner": _T0,
    "settings_digest": _T0,
    "reserved_usd": _AMOUNT,
    "cost_usd": _nullable(_AMOUNT),
    "generation": _INT,
    "owner": _T0,
    "owner_pid": _nullable(_PID),
    "owner_start": _nullable(_TICKS),
    "owner_boot": _T0,
    "owner_host": _T0,
    "lease_until": _nullable(_TIME),
    "host": _T0,
    "host_id": _T0,
    "boot_id": _T0,
    "pid": _nullable(_PID),
    "pgid": _nullable(_PID),
    "proc_start": _nullable(_TICKS),
    "private_dir": _P0,
    "cancel_requested_at": _nullable(_TIME),
    "observed_json": _observed,
    "result_json": _result,
    "receipt_path": _P0,
    "not_before": _TIME,
    "created_at": _TIME,
    "dispatched_at": _nullable(_TIME),
    "ended_at": _nullable(_TIME),
    "queue": _T,
    "priority": _integer(-(1 << 31), 1 << 31),
    "job_id": _nullable(_INT),
    "worker": _T0,
    "swept_at": _nullable(_TIME),
    "held_reason": _T0,
    "held_since": _nullable(_TIME),
    "target": _P0,
    "owner_pidns": _T0,
    "pidns": _T0,
}


#: The request a retry copies, column by column (``RunRow.request``, ``Store.retry``).
COPIED = (
    "request_key",
    "batch",
    "job_name",
    "job_digest",
    "inputs_sha256",
    "workdir",
    "receipt_dir",
    "packet_json",
    "max_usd",
    "queue",
    "priority",
    "target",
)


#: ``observed_json`` is hz's four small counters; anything longer was not written by hz.
MAX_OBSERVED = 4096
_OBSERVED_KEYS = {"elapsed_seconds": (int, float), "turns": (int,), "tool_calls": (int,)}


def read_observed(text: str | None) -> dict[str, Any] | None:
    """What a run's owner recorded of its session so far, or None when nothing (or nothing
    readable: a row edited by hand) is there. Only hz's own counters, with their types."""
    if not text or len(text) > MAX_OBSERVED:
        return None
    try:
        value = json.loads(text)
    except ValueError:
        return None
    if not isinstance(value, dict):
        return None
    seen: dict[str, Any] = {}
    for key, types in _OBSERVED_KEYS.items():
        item = value.get(key)
        seen[key] = item if isinstance(item, types) and not isinstance(item, bool) else None
    last = value.get("last_tool")
    seen["last_tool"] = last[:200] if isinstance(last, str) else None
    return seen


@dataclass(frozen=True, slots=True)
class RunRow:
    """One run as the ledger holds it (the columns of ``runs``; see docs/runs.md). Its paths
    (``PATHS``) are the paths' own text, as ``Path`` takes it: a path stored as a ``file://``
    URI (bytes that are not UTF-8) is read back to those bytes."""

    id: str
    request_key: str
    state: str
    failure_kind: str | None
    attempt: int
    retry_of: str | None
    batch: str | None
    job_name: str
    job_digest: str
    inputs_sha256: str
    workdir: str
    receipt_dir: str | None
    packet_json: str
    max_usd: float
    runner: str | None
    settings_digest: str | None
    reserved_usd: float
    cost_usd: float | None
    generation: int
    owner: str | None
    owner_pid: int | None
    owner_start: int | None
    owner_boot: str | None
    owner_host: str | None
    lease_until: float | None
    host: str | None
    host_id: str | None
    boot_id: str | None
    pid: int | None
    pgid: int | None
    proc_start: int | None
    private_dir: str | None
    cancel_requested_at: float | None
    #: ``observed_json``: hz's counters of the session so far (``read_observed``).
    observed: dict[str, Any] | None
    #: ``result_json``: the result object, once terminal.
    result: dict[str, Any] | None
    receipt_path: str | None
    not_before: float
    created_at: float
    dispatched_at: float | None
    ended_at: float | None
    queue: str
    priority: int
    job_id: int | None
    worker: str | None
    swept_at: float | None
    held_reason: str | None
    held_since: float | None
    #: The packet, job or contract the run was made from (absolute), when hz was told.
    target: str | None
    #: The pid namespaces of the owner and of the run's processes (``host.pid_namespace``).
    owner_pidns: str | None
    pidns: str | None
    #: The columns whose stored value did not fit, each ``"column: why"``; their attributes
    #: hold the kind's empty value.
    bad: tuple[str, ...] = ()

    @classmethod
    def read(cls, raw: Mapping[str, Any] | Any) -> RunRow:
        """The checked row of a database row (``sqlite3.Row`` or a dict)."""
        keys = set(raw.keys())
        values: dict[str, Any] = {}
        bad: list[str] = []
        for column, check in RUN_COLUMNS.items():
            name = OBJECTS.get(column, column)
            if column not in keys:  # a schema without it: as a fresh row would hold
                value, why = check(None)
                if why:
                    bad.append(f"{column}: missing")
                values[name] = value
                continue
            value, why = check(raw[column])
            values[name] = value
            if why:
                bad.append(f"{column}: {why}")
        if bad and values["id"] == "":
            values["id"] = "?"
        return cls(**values, bad=tuple(bad))

    @property
    def malformed(self) -> bool:
        return bool(self.bad)

    @property
    def addressable(self) -> bool:
        """Whether its id is text and its generation a whole number: a row whose id is not
        cannot be named, and one whose generation is not (``9e999``) cannot be written under
        fencing — neither is claimed."""
        return not any(b.startswith(("id: ", "generation: ")) for b in self.bad)

    def bad_columns(self) -> str:
        """Its bad values, for a message: ``cost_usd ('abc' is not a number), …``."""
        return ", ".join(f"{b.split(': ', 1)[0]} ({b.split(': ', 1)[1]})" for b in self.bad)

    def request(self) -> dict[str, Any]:
        """What a retry copies: the request (``COPIED``), its paths as stored."""
        copied = {name: getattr(self, name) for name in COPIED}
        for name in PATHS:
            if copied.get(name) is not None:
                copied[name] = path_text(copied[name])
        return copied


@dataclass(frozen=True, slots=True)
class EventRow:
    """One entry of a run's timeline."""

    at: float | None
    state: str
    detail: str | None
    bad: tuple[str, ...] = ()

    @classmethod
    def read(cls, raw: Mapping[str, Any] | Any) -> EventRow:
        bad = []
        at, why = _nullable(_TIME)(raw["at"])
        if why:
            bad.append(f"at: {why}")
        state, why = _text(raw["state"])
        if why:
            bad.append(f"state: {why}")
            state = "?"
        detail, why = _T0(raw["detail"])
        if why:
            bad.append(f"detail: {why}")
        return cls(at, state, detail, tuple(bad))
