"""Fetching a job's ``read`` inputs before the session: windows, deadlines, caps, digests.

For each input the job reads (``InputSpec.read``) and that was not given by hand, ``fetch_inputs``
finds the provider bound to the operation's capability, resolves the input's window at ``at``,
calls the provider with a deadline and a byte cap, checks the answer against the operation's
result schema and the input's own schema, and records where the value came from
(``InputSource``: provider, operation, arguments, window, when, sha256 of the canonical JSON).

Windows. A relative window (``7d``) is ``[at - 7 days, at)``. ``since-last-success`` starts at
the end (``until``) of the same input's window in the job's last completed run, as the run
ledger holds it in that run's packet (``last_success``); when there is none (the first run, or
runs whose value was given by hand), it falls back to the last ``FALLBACK_WINDOW`` (7 days) and
the source says ``fallback: true``. Times are UTC, to the second. A ledger row is outside
input: an end that is no time between 1970 and 9999, or one later than now (a run rendered
``--at`` a future time, a row edited by hand), is passed over for the run before it, and said
in a warning (HZ728); an end after ``at`` (``--at`` in the past) gives an empty window, said
too.

Bounds. What a job asks for is checked again here, since a job file is outside input too: at
most ``MAX_READ_INPUTS`` inputs read through an operation (HZ417), each input's arguments and
window against its operation (HZ727). Every fetch has its provider's deadline, and all the
fetches of one job end within ``JOB_FETCH_SECONDS`` (HZ726). An answer is measured as the
UTF-8 bytes of its canonical JSON, what the packet holds (a text that is not Unicode, such as
a lone surrogate, is HZ724).

Everything that goes wrong is a located ``Problem`` whose code is the provider's
(``HZ720``–``HZ727``, ``hz.runtime.providers.protocol``) and whose message names the input,
the operation and the provider: ``input 'merged': code-host.merged_pull_requests (github):
…``. Every input is tried, so one pass reports every failure; the caller writes no packet and
starts nothing when there is any.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from hz.runtime.artifacts.canonical import digest_of
from hz.runtime.artifacts.errors import ConfigError, HzError
from hz.runtime.artifacts.models import InputSource, InputSpec, Job, ResolvedWindow
from hz.runtime.artifacts.operations import (
    MAX_READ_INPUTS,
    Operation,
    Window,
    WindowError,
    window_length,
)
from hz.runtime.artifacts.problem import Problem
from hz.runtime.process import threads
from hz.runtime.providers.binding import Bindings, Bound, unbound_hint
from hz.runtime.providers.protocol import (
    DEFAULT_MAX_BYTES,
    DEFAULT_TIMEOUT_SECONDS,
    HZ720,
    HZ721,
    HZ722,
    HZ724,
    HZ725,
    HZ726,
    HZ727,
    FetchRequest,
    ProviderError,
)

#: ``since-last-success`` without a completed run to start from: this long before ``at``.
FALLBACK_WINDOW = timedelta(days=7)
#: How long past its deadline a provider's answer is still waited for before the fetch is
#: given up (a provider stops at its deadline itself; this covers one that does not).
GRACE_SECONDS = 0.5
#: Errors of a schema shown per answer before the rest are counted.
MAX_SCHEMA_ERRORS = 3
#: Fetches of one provider still running past their deadline (left behind in daemon threads:
#: Python cannot stop a thread) before no more of that provider's is started. In a long-lived
#: worker a provider that ignores its deadline would otherwise pile up threads, sockets and
#: memory with every run; past this, its fetches fail at once (HZ726) until one of them ends.
MAX_ABANDONED = 4

#: All the fetches of one job end within this many seconds: each fetch's own deadline is cut
#: to what is left, and an input not started by then fails (HZ726). One slow service or many
#: inputs cannot hold a run (or a worker) for inputs x timeouts.
JOB_FETCH_SECONDS = 300.0
#: The times windows resolve at and a ledger's window ends may be: ``--at`` is held to them,
#: a ledger row past them is passed over. (Python's dates end in year 9999.)
EARLIEST = datetime(1970, 1, 1, tzinfo=UTC)
LATEST = datetime(9999, 12, 31, 23, 59, 59, tzinfo=UTC)
#: How far past now a completed run's window may end before it is passed over: the clocks of
#: a fleet's hosts disagree a little; a window that ends later was not fetched by a real run.
CLOCK_SKEW = timedelta(minutes=5)
#: Passed-over runs named in one warning before the rest are counted.
MAX_PASSED_SHOWN = 3
#: A job asks for more inputs read through an operation than MAX_READ_INPUTS (the compiler's
#: rule, checked again for a job made by hand).
HZ417 = "HZ417"
#: since-last-success passed over a run's window, or resolved to an empty window (a warning).
HZ728 = "HZ728"

#: provider name -> the threads of its fetches given up on that may still run.
_abandoned: dict[str, list[threading.Thread]] = {}
_abandoned_lock = threading.Lock()

#: ``(job name, input name) -> (run id, the end of that input's window as recorded)`` for the
#: job's last completed runs that record one, newest first (``LedgerBase.window_ends``).
LastSuccess = Callable[[str, str], Iterable[tuple[str, str]]]


def no_last_success(job: str, name: str) -> Iterable[tuple[str, str]]:
    return ()


@dataclass(frozen=True, slots=True)
class FetchContext:
    """What one fetch of a job's inputs needs: the operator's bindings, the working directory,
    the time windows resolve at (``None``: now), the ledger's last successes, and the file
    problems are reported at (the contract or job rendered). ``now``, ``clock`` and ``sleep``
    are injected in tests."""

    bindings: Bindings
    workdir: Path
    at: datetime | None = None
    last_success: LastSuccess = no_last_success
    where: str = ""
    #: All the job's fetches end within this many seconds (``JOB_FETCH_SECONDS``).
    job_seconds: float = JOB_FETCH_SECONDS
    now: Callable[[], datetime] = field(default=lambda: datetime.now(UTC))
    clock: Callable[[], float] = field(default=time.monotonic)
    sleep: Callable[[float], None] = field(default=time.sleep)


@dataclass(frozen=True, slots=True)
class Fetched:
    """The values fetched and their sources, by input name; or the problems (then no value).
    ``warnings`` are said either way (a since-last-success run passed over, HZ728)."""

    values: dict[str, Any]
    sources: dict[str, InputSource]
    problems: tuple[Problem, ...] = ()
    warnings: tuple[Problem, ...] = ()


def read_inputs(job: Job) -> dict[str, InputSpec]:
    """The inputs of ``job`` that are read through a provider, by name."""
    return {name: spec for name, spec in sorted(job.inputs.items()) if spec.read is not None}


def fetch_inputs(job: Job, context: FetchContext, *, given: Collection[str] = ()) -> Fetched:
    """Fetch every ``read`` input of ``job`` but those ``given`` by hand (``--input``)."""
    at = _second(context.at if context.at is not None else context.now())
    if not EARLIEST <= at <= LATEST:
        raise ValueError(f"a fetch resolves windows between 1970 and 9999, not at {at}")
    reads = read_inputs(job)
    operation_reads = [name for name, spec in reads.items() if spec.read is not None]
    if len(operation_reads) > MAX_READ_INPUTS:
        message = (
            f"the job reads {len(operation_reads)} inputs through an operation, more than the "
            f"{MAX_READ_INPUTS} a job may read; nothing was fetched"
        )
        hint = "read fewer inputs: split the job, or read a whole directory with one files.glob"
        return Fetched({}, {}, (Problem(HZ417, message, context.where, hint=hint),))
    values: dict[str, Any] = {}
    sources: dict[str, InputSource] = {}
    problems: list[Problem] = []
    warnings: list[Problem] = []
    ends = context.clock() + context.job_seconds
    for name, spec in reads.items():
        if name in given:
            continue
        left = ends - context.clock()
        if left <= 0:
            problems.append(_not_started(name, spec, context))
            continue
        try:
            value, source = _fetch_one(job, name, spec, at, context, left, warnings)
        except _Failed as failed:
            problems.append(failed.problem)
            continue
        values[name] = value
        sources[name] = source
    if problems:
        return Fetched({}, {}, tuple(problems), tuple(warnings))
    return Fetched(values, sources, (), tuple(warnings))


def _not_started(name: str, spec: InputSpec, context: FetchContext) -> Problem:
    assert spec.read is not None
    message = (
        f"input '{name}': {spec.read.operation}: not fetched: the job's inputs took longer than "
        f"{context.job_seconds:g} s to fetch in all"
    )
    hint = "read fewer inputs, or narrow their arguments and windows; a slow service is named above"
    return Problem(HZ726, message, context.where, hint=hint)


class _Failed(Exception):
    def __init__(self, problem: Problem) -> None:
        self.problem = problem


def _second(moment: datetime) -> datetime:
    if moment.tzinfo is None:
        raise ValueError("a fetch resolves windows at an aware (UTC) time")
    return moment.astimezone(UTC).replace(microsecond=0)


def _utc(moment: datetime) -> str:
    # Not strftime: glibc writes a year before 1000 without its leading zeros.
    m = moment.astimezone(UTC)
    return f"{m.year:04d}-{m.month:02d}-{m.day:02d}T{m.hour:02d}:{m.minute:02d}:{m.second:02d}Z"


def _fetch_one(
    job: Job,
    name: str,
    spec: InputSpec,
    at: datetime,
    context: FetchContext,
    left: float,
    warnings: list[Problem],
) -> tuple[Any, InputSource]:
    read = spec.read
    assert read is not None
    operation_name = read.operation
    capability = operation_name.partition(".")[0]
    provider_name = context.bindings.provider_of(capability)

    def fail(code: str, message: str, hint: str | None = None) -> _Failed:
        shown = provider_name or "no provider"
        text = f"input '{name}': {operation_name} ({shown}): {message}"
        return _Failed(Problem(code, text, context.where, hint=hint))

    if provider_name is None:
        raise fail(HZ720, f"capability '{capability}' is not bound", unbound_hint(capability))
    try:
        bound = context.bindings.bound(provider_name)
    except ConfigError as e:
        code = HZ720 if e.message.startswith("unknown provider") else HZ721
        raise fail(code, e.message, e.hint) from e
    operation = _operation(bound, operation_name, fail)
    _check_request(operation, read.args, read.window, fail)
    window = _window(job.name, name, read.window, at, context, warnings)
    own_timeout, max_bytes = _limits(bound, operation_name)
    timeout = min(own_timeout, left)
    if timeout < own_timeout:
        slow = (
            f"all the job's fetches end within {context.job_seconds:g} s: read fewer inputs, or "
            "narrow their arguments and windows"
        )
    else:
        setting = _setting(bound, operation_name, "timeout_seconds")
        slow = "the service may be slow or down"
        slow += f"; raise {setting} to wait longer" if setting else ""
    request = FetchRequest(
        operation=operation,
        args=dict(read.args),
        window=None if window is None else Window(window[0], window[1]),
        workdir=context.workdir,
        deadline=context.clock() + timeout,
        max_bytes=max_bytes,
        clock=context.clock,
        sleep=context.sleep,
    )
    try:
        value = _call(bound, request, timeout, slow)
    except ProviderError as e:
        raise fail(e.code, e.message, e.hint) from e
    size = _size(value, fail)
    if size > max_bytes:
        raise fail(
            HZ725,
            f"the answer is {size:,} bytes as JSON, more than the cap of {max_bytes:,}",
            _cap_hint(_setting(bound, operation_name, "max_bytes")),
        )
    _check(operation.result, value, "the answer does not match the operation's result schema", fail)
    _check(spec.schema_, value, "the value does not match the input's schema", fail)
    resolved = None
    if window is not None:
        since, until, fallback = window
        assert read.window is not None
        resolved = ResolvedWindow(
            spec=read.window, since=_utc(since), until=_utc(until), fallback=fallback
        )
    source = InputSource(
        provider=provider_name,
        operation=operation_name,
        args=dict(read.args),
        window=resolved,
        fetched_at=_utc(context.now()),
        sha256=digest_of(value),
    )
    return value, source


def _cap_hint(setting: str | None) -> str:
    if setting is None:
        return "narrow the input's arguments or window (the provider has no setting to raise)"
    return f"narrow the input's arguments or window, or raise {setting}"


def _operation(bound: Bound, name: str, fail: Callable[..., _Failed]) -> Operation:
    bug = f"a bug in the provider '{bound.name}': report it to its authors"
    try:
        offered = dict(bound.provider.operations())
        operation = offered.get(name)
    except HzError as e:
        raise fail(HZ721, e.message, e.hint) from e
    except Exception as e:  # a plugin's code: whatever it raises is said, never a traceback
        raise fail(
            HZ721, f"provider '{bound.name}' cannot list its operations: {_said(e)}", bug
        ) from e
    if operation is not None and not isinstance(operation, Operation):
        raise fail(
            HZ721,
            f"provider '{bound.name}' declares this operation as {type(operation).__name__}, "
            "not an hz.runtime.artifacts.operations.Operation",
            bug,
        )
    if operation is None:
        served = ", ".join(sorted(offered)) or "none"
        raise fail(
            HZ720,
            f"provider '{bound.name}' does not implement this operation",
            f"it implements: {served}; bind the capability to a provider that does",
        )
    return operation


def _check_request(
    operation: Operation,
    args: Mapping[str, Any],
    window: str | None,
    fail: Callable[..., _Failed],
) -> None:
    """The job's arguments and window fit the operation. The compiler checks them (HZ411,
    HZ412), but a job file is outside input, and re-sealing one after an edit is easy: a
    provider (an operator's program) gets only arguments its operation's schema allows."""
    what = "the job's arguments do not match the operation's argument schema"
    _check(operation.args, dict(args), what, fail, HZ727)
    if window is None:
        return
    if not operation.window:
        raise fail(HZ727, "the job gives a window, but the operation takes none")
    try:
        window_length(window)
    except WindowError as e:
        raise fail(HZ727, f"the job's window: {e}") from e


def _window(
    job: str,
    name: str,
    text: str | None,
    at: datetime,
    context: FetchContext,
    warnings: list[Problem],
) -> tuple[datetime, datetime, bool] | None:
    """``(since, until, fallback)`` of the input's window (checked against its operation
    before), or None without one. Runs passed over are said in ``warnings``."""
    if text is None:
        return None
    length = window_length(text)
    if length is not None:
        return at - length, at, False
    latest = _second(context.now()) + CLOCK_SKEW
    passed: list[str] = []
    found: tuple[str, str, datetime] | None = None
    for run, until in context.last_success(job, name):
        moment = _moment(until)
        if moment is None:
            passed.append(f"run {_shown(run)}: its window's end {_shown(until)} is no time hz uses")
        elif moment > latest:
            passed.append(f"run {_shown(run)}: its window ends at {until}, later than now")
        else:
            found = run, until, moment
            break
    if passed:
        runs = "run" if len(passed) == 1 else "runs"
        more = len(passed) - MAX_PASSED_SHOWN
        tail = f" (and {more} more)" if more > 0 else ""
        warnings.append(
            Problem(
                HZ728,
                f"input '{name}': since-last-success passed over {len(passed)} completed {runs} "
                f"of the ledger: {'; '.join(passed[:MAX_PASSED_SHOWN])}{tail}",
                context.where,
                severity="warning",
                hint="such a row was edited by hand, or run from a packet rendered --at a future "
                "time; the window starts at the run before it instead (or falls back to 7 days)",
            )
        )
    if found is None:
        return at - FALLBACK_WINDOW, at, True
    run, until, moment = found
    if moment > at:
        # --at in the past: an empty window, never a negative one; said, never silently.
        warnings.append(
            Problem(
                HZ728,
                f"input '{name}': the window is empty: the job's last completed run "
                f"({_shown(run)}) fetched up to {until}, after {_utc(at)}",
                context.where,
                severity="warning",
                hint="render at a later time (--at), or give the input's value by hand (--input)",
            )
        )
        return at, at, False
    return moment, at, False


def _moment(text: str) -> datetime | None:
    """A ledger row's window end as a time, or None when it is none hz uses: not an ISO 8601
    UTC time (``2026-99-99T99:99:99Z``), or outside 1970..9999."""
    try:
        moment = datetime.strptime(text, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
    except ValueError:
        return None
    return moment if EARLIEST <= moment <= LATEST else None


def _shown(text: str, limit: int = 64) -> str:
    return repr(text) if len(text) <= limit else repr(text[: limit - 1] + "…")


def _setting(bound: Bound, operation: str, key: str) -> str | None:
    """Where the operator sets ``key`` for this fetch; None when the provider has no such
    setting (a hint never names a key that would be refused as unknown)."""
    settings: Any = bound.settings
    operations = getattr(settings, "operations", None)
    own = operations.get(operation) if isinstance(operations, Mapping) else None
    if own is not None and key in getattr(type(own), "model_fields", {}):
        return f'{key} in [providers.{bound.name}.operations."{operation}"]'
    if key in getattr(type(settings), "model_fields", {}):
        return f"[providers.{bound.name}] {key}"
    return None


def _limits(bound: Bound, operation: str) -> tuple[float, int]:
    """The fetch's timeout and byte cap: the provider's settings' ``timeout_seconds`` and
    ``max_bytes`` where it declares them (an operation's own in an ``operations`` table, as
    the command provider's), else the defaults."""
    settings: Any = bound.settings
    operations = getattr(settings, "operations", None)
    own = operations.get(operation) if isinstance(operations, Mapping) else None
    timeout = getattr(own, "timeout_seconds", None) or getattr(settings, "timeout_seconds", None)
    max_bytes = getattr(own, "max_bytes", None) or getattr(settings, "max_bytes", None)
    return float(timeout or DEFAULT_TIMEOUT_SECONDS), int(max_bytes or DEFAULT_MAX_BYTES)


def abandoned(provider: str) -> list[threading.Thread]:
    """The threads of ``provider``'s fetches that were given up on and still run."""
    with _abandoned_lock:
        alive = [t for t in _abandoned.get(provider, ()) if t.is_alive()]
        if alive:
            _abandoned[provider] = alive
        else:
            _abandoned.pop(provider, None)
        return list(alive)


def _refuse_when_abandoned(bound: Bound) -> None:
    count = len(abandoned(bound.name))
    if count >= MAX_ABANDONED:
        fetches = "fetch" if count == 1 else "fetches"
        run = "runs" if count == 1 else "run"
        raise ProviderError(
            HZ726,
            f"{count} earlier {fetches} of provider '{bound.name}' still {run} past the "
            "deadline; no more is started until one ends",
            hint="the provider ignores its deadline: report it to its authors, or restart this "
            "process (hz worker) to end them",
        )


def _call(bound: Bound, request: FetchRequest, timeout: float, slow: str) -> Any:
    """``provider.fetch(request)`` in a thread of its own, waited for until the deadline (and
    a grace): a provider that hangs past it is left behind (a daemon thread), counted, and the
    fetch fails with HZ726; while ``MAX_ABANDONED`` of one provider's still run, its fetches
    are refused at once (HZ726), ``slow`` the hint of a fetch stopped. Anything but a
    ``ProviderError`` is the provider's bug, said."""
    _refuse_when_abandoned(bound)
    waited = threads.call_within(
        lambda: bound.provider.fetch(request),
        timeout + GRACE_SECONDS,
        name=f"hz-fetch-{bound.name}",
        what=f"fetching {request.operation.name}",
    )
    if not waited.done:
        with _abandoned_lock:
            _abandoned.setdefault(bound.name, []).append(waited.thread)
        raise ProviderError(
            HZ726, f"no answer within {timeout:g} s; the fetch was stopped", hint=slow
        )
    error = waited.error
    if isinstance(error, ProviderError):
        raise error
    if error is not None:
        raise ProviderError(
            HZ722,
            f"the provider failed: {_said(error)}",
            hint=f"a bug in the provider '{bound.name}': report it to its authors",
        )
    return waited.value


def _said(error: BaseException) -> str:
    """``Type: message`` of a provider's exception, its message cut (and one whose ``str``
    itself raises, said without it)."""
    try:
        text = str(error)
    except Exception:  # a plugin's exception: its __str__ is its code too
        text = "(its message cannot be shown)"
    return f"{type(error).__name__}: {_short(text, 300)}"


def _size(value: Any, fail: Callable[..., _Failed]) -> int:
    """The bytes of the answer's canonical JSON as UTF-8: what the packet holds and the digest
    is of (``ensure_ascii`` would count a newline 2 bytes and a CJK character 6)."""
    try:
        text = json.dumps(
            value, sort_keys=True, separators=(",", ":"), allow_nan=False, ensure_ascii=False
        )
    except (TypeError, ValueError, RecursionError) as e:
        raise fail(HZ724, f"the answer is not JSON data: {e}") from e
    try:
        return len(text.encode("utf-8"))
    except UnicodeEncodeError as e:
        raise fail(
            HZ724,
            f"the answer is not JSON data: it holds text that is not Unicode ({e.reason}: "
            f"{text[e.start : e.end]!r} at character {e.start:,} of its JSON)",
        ) from e


def _check(
    schema: Any, value: Any, what: str, fail: Callable[..., _Failed], code: str = HZ724
) -> None:
    from hz.runtime.jsonschema import SchemaProblem, errors

    try:
        found = errors(schema, value)
    except SchemaProblem as e:
        raise fail(code, f"{what}: it cannot be checked: {e.message}") from e
    if not found:
        return
    found.sort(key=lambda e: (list(map(str, e.absolute_path)), e.message))
    shown = [
        f"at /{'/'.join(map(str, e.absolute_path))}: {_short(e.message)}"
        for e in found[:MAX_SCHEMA_ERRORS]
    ]
    more = len(found) - len(shown)
    tail = f" (and {more} more)" if more else ""
    raise fail(code, f"{what}: {'; '.join(shown)}{tail}")


def _short(message: str, limit: int = 120) -> str:
    return message if len(message) <= limit else message[: limit - 1] + "…"
