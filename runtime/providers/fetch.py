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
the source says ``fallback: true``. Times are UTC, to the second.

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
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from hz.runtime.artifacts.canonical import digest_of
from hz.runtime.artifacts.errors import ConfigError, HzError
from hz.runtime.artifacts.models import InputSource, InputSpec, Job, ResolvedWindow
from hz.runtime.artifacts.operations import (
    SINCE_LAST_SUCCESS,
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

#: provider name -> the threads of its fetches given up on that may still run.
_abandoned: dict[str, list[threading.Thread]] = {}
_abandoned_lock = threading.Lock()

#: ``(job name, input name) -> the end of that input's window in the job's last completed
#: run``, or None when there is none.
LastSuccess = Callable[[str, str], datetime | None]


def no_last_success(job: str, name: str) -> datetime | None:
    return None


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
    now: Callable[[], datetime] = field(default=lambda: datetime.now(UTC))
    clock: Callable[[], float] = field(default=time.monotonic)
    sleep: Callable[[float], None] = field(default=time.sleep)


@dataclass(frozen=True, slots=True)
class Fetched:
    """The values fetched and their sources, by input name; or the problems (then no value)."""

    values: dict[str, Any]
    sources: dict[str, InputSource]
    problems: tuple[Problem, ...] = ()


def read_inputs(job: Job) -> dict[str, InputSpec]:
    """The inputs of ``job`` that are read through a provider, by name."""
    return {name: spec for name, spec in sorted(job.inputs.items()) if spec.read is not None}


def fetch_inputs(job: Job, context: FetchContext, *, given: Collection[str] = ()) -> Fetched:
    """Fetch every ``read`` input of ``job`` but those ``given`` by hand (``--input``)."""
    at = _second(context.at if context.at is not None else context.now())
    values: dict[str, Any] = {}
    sources: dict[str, InputSource] = {}
    problems: list[Problem] = []
    for name, spec in read_inputs(job).items():
        if name in given:
            continue
        try:
            value, source = _fetch_one(job, name, spec, at, context)
        except _Failed as failed:
            problems.append(failed.problem)
            continue
        values[name] = value
        sources[name] = source
    if problems:
        return Fetched({}, {}, tuple(problems))
    return Fetched(values, sources)


class _Failed(Exception):
    def __init__(self, problem: Problem) -> None:
        self.problem = problem


def _second(moment: datetime) -> datetime:
    if moment.tzinfo is None:
        raise ValueError("a fetch resolves windows at an aware (UTC) time")
    return moment.astimezone(UTC).replace(microsecond=0)


def _utc(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _fetch_one(
    job: Job, name: str, spec: InputSpec, at: datetime, context: FetchContext
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
    window = _window(job.name, name, operation, read.window, at, context)
    timeout, max_bytes = _limits(bound, operation_name)
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
        value = _call(bound, request, timeout)
    except ProviderError as e:
        raise fail(e.code, e.message, e.hint) from e
    size = _size(value, fail)
    if size > max_bytes:
        raise fail(
            HZ725,
            f"the answer is {size:,} bytes as JSON, more than the cap of {max_bytes:,}",
            f"narrow the input's arguments or window, or raise [providers.{provider_name}] "
            "max_bytes where the provider has it",
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


def _operation(bound: Bound, name: str, fail: Callable[..., _Failed]) -> Operation:
    try:
        offered = dict(bound.provider.operations())
    except HzError as e:
        raise fail(HZ721, e.message, e.hint) from e
    operation = offered.get(name)
    if operation is None:
        served = ", ".join(sorted(offered)) or "none"
        raise fail(
            HZ720,
            f"provider '{bound.name}' does not implement this operation",
            f"it implements: {served}; bind the capability to a provider that does",
        )
    return operation


def _window(
    job: str,
    name: str,
    operation: Operation,
    text: str | None,
    at: datetime,
    context: FetchContext,
) -> tuple[datetime, datetime, bool] | None:
    """``(since, until, fallback)`` of the input's window, or None without one."""
    if text is None or not operation.window:
        return None
    try:
        length = window_length(text)
    except WindowError:  # the packet's model refused it already; a job made by hand
        length = FALLBACK_WINDOW
    if text != SINCE_LAST_SUCCESS:
        assert length is not None
        return at - length, at, False
    last = context.last_success(job, name)
    if last is None:
        return at - FALLBACK_WINDOW, at, True
    # A last window ending after ``at`` (--at in the past): an empty window, not a negative one.
    return min(_second(last), at), at, False


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


def _call(bound: Bound, request: FetchRequest, timeout: float) -> Any:
    """``provider.fetch(request)`` in a thread of its own, waited for until the deadline (and
    a grace): a provider that hangs past it is left behind (a daemon thread), counted, and the
    fetch fails with HZ726; while ``MAX_ABANDONED`` of one provider's still run, its fetches
    are refused at once (HZ726). Anything but a ``ProviderError`` is the provider's bug, said."""
    _refuse_when_abandoned(bound)
    box: dict[str, Any] = {}
    done = threading.Event()

    def work() -> None:
        try:
            box["value"] = bound.provider.fetch(request)
        except BaseException as e:  # handed to the waiting thread
            box["error"] = e
        finally:
            done.set()

    thread = threading.Thread(target=work, name=f"hz-fetch-{bound.name}", daemon=True)
    threads.start(thread, f"fetching {request.operation.name}")
    if not done.wait(timeout + GRACE_SECONDS):
        with _abandoned_lock:
            _abandoned.setdefault(bound.name, []).append(thread)
        raise ProviderError(
            HZ726,
            f"no answer within {timeout:g} s; the fetch was stopped",
            hint=f"the service may be slow or down; raise [providers.{bound.name}] "
            "timeout_seconds where the provider has it",
        )
    error = box.get("error")
    if isinstance(error, ProviderError):
        raise error
    if error is not None:
        raise ProviderError(
            HZ722,
            f"the provider failed: {type(error).__name__}: {error}",
            hint=f"a bug in the provider '{bound.name}': report it to its authors",
        )
    return box.get("value")


def _size(value: Any, fail: Callable[..., _Failed]) -> int:
    try:
        text = json.dumps(value, sort_keys=True, separators=(",", ":"), allow_nan=False)
    except (TypeError, ValueError, RecursionError) as e:
        raise fail(HZ724, f"the answer is not JSON data: {e}") from e
    return len(text.encode("utf-8", "surrogatepass"))


def _check(schema: Any, value: Any, what: str, fail: Callable[..., _Failed]) -> None:
    from hz.runtime.jsonschema import SchemaProblem, errors

    try:
        found = errors(schema, value)
    except SchemaProblem as e:
        raise fail(HZ724, f"{what}: it cannot be checked: {e.message}") from e
    if not found:
        return
    found.sort(key=lambda e: (list(map(str, e.absolute_path)), e.message))
    shown = [
        f"at /{'/'.join(map(str, e.absolute_path))}: {_short(e.message)}"
        for e in found[:MAX_SCHEMA_ERRORS]
    ]
    more = len(found) - len(shown)
    tail = f" (and {more} more)" if more else ""
    raise fail(HZ724, f"{what}: {'; '.join(shown)}{tail}")


def _short(message: str, limit: int = 120) -> str:
    return message if len(message) <= limit else message[: limit - 1] + "…"
