"""Running one ledger run as its owner: prepare, dispatch, watch, settle.

The records are committed in order — ``prepared``, ``dispatching`` (before the runner may
spawn anything), ``running`` (as soon as the process chokepoint reports the group), one terminal
state — and the receipt is written before the terminal record, which is committed before the
caller reports anything. Every record goes through the fenced run handle
(``hz.runtime.ledger.handle.OwnedRun``), which retries it across an outage of the database; the
watcher (``hz.runtime.ledger.watcher``) renews the lease while the agent runs and carries out a
cancel. A result the ledger cannot take in the end is saved to a file
(``hz.runtime.ledger.fallback``) and named in the outcome. A ledger that cannot keep the run's
record at all (damaged) makes the watcher stop the run, saying why.
"""

from __future__ import annotations

import contextlib
import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from hz.runtime.artifacts.canonical import digest_of
from hz.runtime.artifacts.errors import HzError
from hz.runtime.artifacts.models import Packet
from hz.runtime.artifacts.result import AgentResult
from hz.runtime.ledger.db import LedgerError
from hz.runtime.ledger.fallback import save_result, unrecorded
from hz.runtime.ledger.handle import COMMIT_PATIENCE, OwnedRun
from hz.runtime.ledger.rows import RunRow
from hz.runtime.ledger.states import TERMINAL, RunState
from hz.runtime.ledger.store import Ceilings, Ending, Hold, Ledger, StaleOwner, read_packet
from hz.runtime.ledger.watcher import EXTERNAL_CANCEL, Watcher
from hz.runtime.process import cancel, observe
from hz.runtime.process.cancel import CancelToken
from hz.runtime.process.clock import SYSTEM, Clock
from hz.runtime.process.group import KILL_GRACE
from hz.runtime.runners.protocol import AgentRunner, Progress, ProgressCallback, RunRequest

#: Automatic retries after a rate limit wait at most this long (plus jitter).
MAX_BACKOFF = 60.0
#: How long an owner that finds its run taken over waits for the taker to settle it (a
#: reconciler kills the group first: up to one kill grace).
SETTLE_WAIT = 10.0
#: How often it looks meanwhile.
_SETTLE_POLL = 0.05

__all__ = [
    "COMMIT_PATIENCE",
    "EXTERNAL_CANCEL",
    "MAX_BACKOFF",
    "Binding",
    "NotStarted",
    "Outcome",
    "Policy",
    "Slots",
    "Told",
    "backoff",
    "run_owned",
]


class NotStarted(Exception):
    """hz itself was told to stop (its cancel token) before the run was dispatched: nothing of
    it ran. ``signal_name`` says which signal."""

    def __init__(self, signal_name: str) -> None:
        super().__init__(signal_name)
        self.signal_name = signal_name


@dataclass(frozen=True, slots=True)
class Policy:
    """What the operator allows: spend ceilings and automatic attempts (``[system]``), and
    the waits a test may shorten: the kill grace of a cancel and the patience with a
    database that cannot take a record now."""

    ceilings: Ceilings = field(default_factory=Ceilings)
    max_attempts: int = 3
    #: With a ceiling in the way: True fails the run (foreground), False requeues it (worker).
    fail_over_ceiling: bool = True
    kill_grace: float = KILL_GRACE
    #: None: ``handle.COMMIT_PATIENCE``.
    patience: float | None = None


@dataclass(slots=True)
class Outcome:
    """How a run ended, as committed."""

    run_id: str
    state: str
    result: AgentResult | None = None
    failure_kind: str | None = None
    reason: str | None = None
    receipt: Path | None = None
    receipt_error: HzError | None = None
    retry: str | None = None
    requeued: bool = False
    #: A requeued run is held until then (seconds since the epoch).
    until: float | None = None
    #: Why the ledger could not record this ending (the row stays live; reconciliation calls
    #: it uncertain), and where the result was saved instead (``fallback.save_result``).
    unrecorded: HzError | None = None
    saved: Path | None = None
    save_error: str | None = None

    def unrecorded_error(self) -> HzError | None:
        """Why this ending is not in the ledger, and where its result was saved
        (``fallback.unrecorded``); None when it is recorded."""
        if self.unrecorded is None:
            return None
        return unrecorded(self.run_id, self.state, self.unrecorded, self.saved, self.save_error)


def settings_digest(settings: Mapping[str, Any]) -> str:
    return digest_of({k: settings[k] for k in sorted(settings)} if settings else {})


@dataclass(frozen=True, slots=True)
class Binding:
    """The bound runner a process runs its runs with, its name and its settings' digest, and
    the jobs table it was bound by (``[jobs."review-*"]`` with where it was set; None: the
    base tables). ``jobs``: the binding of each jobs table, by pattern, for ``for_job``."""

    runner: AgentRunner
    name: str
    settings_digest: str
    table: str | None = None
    config: Any = field(default=None, compare=False, repr=False)
    jobs: Mapping[str, Binding] = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def from_config(cls, config: Any) -> Binding:
        """``hz.runtime.execution.execute.bind``, of the base tables and of every jobs table:
        ``ConfigError`` / ``RunnerError`` before anything runs; one of a jobs table's
        configuration names the table (the key at fault may be its own or a base one)."""
        from hz.runtime.artifacts.errors import ConfigError, RunnerError

        base = cls._bound(config)
        jobs: dict[str, Binding] = {}
        for t in config.jobs:
            try:
                jobs[t.pattern] = cls._bound(config.for_job_table(t))
            except (ConfigError, RunnerError) as e:
                raise type(e)(f"{t.header} ({t.where}): {e.message}", hint=e.hint) from e
        return replace(base, config=config, jobs=jobs)

    @classmethod
    def _bound(cls, config: Any) -> Binding:
        from hz.runtime.execution.execute import bind
        from hz.runtime.settings.keys import RUNNER

        applied = config.applied
        table = None if applied is None else f"{applied.header} ({applied.where})"
        digest = settings_digest(config.table(RUNNER))
        return cls(bind(config), config.agent_runner, digest, table)

    def for_job(self, job: str) -> Binding:
        """The binding of the job named ``job``: the one resolver every run goes through
        (``hz.runtime.config.jobs.applying`` picks the table)."""
        if self.config is None:
            return self
        from hz.runtime.config.jobs import applying

        table = applying(self.config.jobs, job)
        chosen = self if table is None else self.jobs[table.pattern]
        return replace(chosen, config=self.config, jobs=self.jobs)

    def runner_of(self, job: str) -> str:
        """The name of the runner the job named ``job`` runs through."""
        return self.for_job(job).name


@dataclass(frozen=True, slots=True)
class Slots:
    """How a worker runs its runs: ``jobs`` at once, through ``binding``, under ``policy``."""

    jobs: int
    binding: Binding
    policy: Policy


@dataclass(frozen=True, slots=True)
class Told:
    """Where a worker says how each run it took ended: its outcome (``on_done``), or why it
    could not be started or kept, or its ending recorded (``on_error``). None: not said."""

    on_done: Callable[[Outcome], None] | None = None
    on_error: Callable[[str, Exception], None] | None = None

    def done(self, outcome: Outcome) -> None:
        if self.on_done is not None:
            self.on_done(outcome)

    def error(self, run_id: str, error: Exception) -> None:
        if self.on_error is not None:
            self.on_error(run_id, error)


@dataclass(frozen=True, slots=True)
class _Run:
    """One dispatched run, what settling it needs."""

    handle: OwnedRun
    watcher: Watcher
    packet: Packet
    row: RunRow
    runner: str
    policy: Policy
    receipts: Path | str | None


@dataclass(frozen=True, slots=True)
class _Ran:
    """How the runner's part ended: its result (None when it raised), the cancel, the
    reason given for stopping it, when it started and how long it took."""

    result: AgentResult | None
    cancel_reason: str | None
    why: str | None
    forced: bool
    started_at: datetime
    duration: float


def run_owned(
    ledger: Ledger,
    run_id: str,
    generation: int,
    *,
    binding: Binding,
    policy: Policy,
    progress: ProgressCallback | None = None,
    on_owned: Callable[[Watcher], None] | None = None,
    receipt_dir: Path | None = None,
    token: CancelToken | None = None,
    clock: Clock = SYSTEM,
) -> Outcome:
    """Take the owned run from ``queued`` to a committed terminal state (or back to the queue
    when a spend ceiling is in the way and ``policy.fail_over_ceiling`` is false), through the
    bound runner.

    ``on_owned(watcher)`` is called once the run is dispatching, so a caller can route signals
    to ``watcher.interrupt`` or ``watcher.stop_now``. ``token`` is hz's own cancel token (a
    signal to it): polled before the run is dispatched (``NotStarted``), then handed to the
    watcher. ``receipt_dir`` overrides the recorded (absolute) directory with the caller's
    spelling of it, for messages."""
    handle = OwnedRun(ledger, run_id, generation, clock=clock, patience=policy.patience)
    # Read patiently as every record up to dispatching is: the run is claimed, so a database
    # away for a moment here would leave it to its lease, failed and retried as another run.
    row = handle.row()
    try:
        if row.malformed:
            raise LedgerError(
                f"its row in the ledger has values hz cannot read: {row.bad_columns()} (the "
                "row was edited by hand?)"
            )
        packet = read_packet(row)
        if packet is None:
            raise LedgerError(
                "its packet in the ledger is missing or unreadable (the row was edited by hand?)"
            )
        RunRequest.for_packet(packet, workdir=Path(row.workdir))  # the workdir must exist
    except HzError as e:
        handle.finish(Ending.not_started(e.message))
        raise
    _check(token)
    binding = binding.for_job(row.job_name)
    handle.prepare(binding.name, binding.settings_digest, binding.table)
    _check(token)
    over = handle.dispatch(policy.ceilings)
    if over is not None:
        if not policy.fail_over_ceiling:
            beyond = policy.ceilings.alone(binding.name, row.max_usd)
            if beyond is None:
                until = handle.release(Hold(policy.ceilings, binding.name))
                return Outcome(run_id, RunState.QUEUED, reason=over, requeued=True, until=until)
            over = beyond  # no window will ever take it: it would wait for ever
        handle.finish(Ending(RunState.FAILED, "budget_ceiling", detail=f"not started: {over}"))
        return Outcome(run_id, RunState.FAILED, failure_kind="budget_ceiling", reason=over)
    watcher = Watcher(handle, grace=policy.kill_grace)
    if on_owned is not None:
        on_owned(watcher)
    if token is not None and token.cancelled:  # a signal before the handler knew the watcher
        watcher.stop_now(token.reason or "a signal")
    receipts = receipt_dir if receipt_dir is not None else row.receipt_dir
    run = _Run(handle, watcher, packet, row, binding.name, policy, receipts)
    return _settle(run, _run_agent(run, binding.runner, progress))


def _check(token: CancelToken | None) -> None:
    if token is not None and token.cancelled:
        raise NotStarted(token.reason or "a signal")


def _run_agent(run: _Run, runner: AgentRunner, progress: ProgressCallback | None) -> _Ran:
    """Run the agent under the watcher; how it ended."""
    from hz.runtime.execution.execute import execute

    watcher, clock = run.watcher, run.handle.clock

    def on_progress(update: Progress) -> None:
        watcher.record_progress(update)
        if progress is not None:
            progress(update)

    started_at, started = datetime.now(UTC), clock.monotonic()
    result: AgentResult | None = None
    why: str | None = None
    try:
        watcher.start()
    except HzError as e:  # no thread to renew the lease: nothing is started
        run.handle.finish(Ending.not_started(e.message, cost_usd=0.0))
        raise
    try:
        with observe.observing(watcher), cancel.cancelling(watcher.token):
            request = RunRequest.for_packet(
                run.packet, workdir=Path(run.row.workdir), progress=on_progress
            )
            result = execute(runner, request)
    except KeyboardInterrupt:  # raised by a runner itself (Python's default handler)
        watcher.interrupt("hz was interrupted (SIGINT)")
        why = "hz was interrupted (SIGINT); the run's processes were killed"
    finally:
        watcher.stop()
    seen = watcher.seen
    forced = False
    if seen.at_spawn:
        why, forced = "cancelled as the agent started; its group was killed", True
    elif seen.signalled is not None:
        why = f"hz was interrupted ({seen.signalled}); the run's processes were killed"
        # Killed by the chokepoint at once, as an interrupt did: what the runner made of the
        # killed process is not a verdict, unless it handles a cancel itself.
        forced = result is not None and result.status not in ("cancelled", "uncertain")
    cancel_reason = seen.cancel_reason
    if cancel_reason is None:
        with contextlib.suppress(LedgerError):  # the ledger away: the watcher's word stands
            if run.handle.cancel_requested():
                cancel_reason = EXTERNAL_CANCEL
    return _Ran(result, cancel_reason, why, forced, started_at, clock.monotonic() - started)


def _verdict(run: _Run, ran: _Ran) -> tuple[str, AgentResult]:
    """The run's terminal state and result, from the runner's result and the cancel."""
    result, why = ran.result, ran.why
    if result is not None and not ran.forced:
        if result.status in ("cancelled", "uncertain") or not ran.cancel_reason:
            # The runner's own verdict: a runner that handles a cancel classifies it itself.
            return result.status, result
        # Stopped by the cancel's signals, and the runner saw the session end: cancelled,
        # with what it read.
        return RunState.CANCELLED, result.model_copy(
            update={
                "status": "cancelled",
                "failure_kind": "aborted",
                "reason": why or f"{ran.cancel_reason}; the run's processes were killed",
            }
        )
    # Killed at once (hz interrupted, a cancel on record as it started) or interrupted inside
    # the runner: what ran is known through the progress events read.
    seen = run.watcher.seen.progress
    return RunState.CANCELLED, AgentResult(
        runner=run.runner,
        status="cancelled",
        failure_kind="aborted",
        turns=None if seen is None else seen.turns,
        duration_seconds=ran.duration,
        reason=why or "cancelled",
    )


def _settle(run: _Run, ran: _Ran) -> Outcome:
    """Classify, write the receipt, commit the terminal record."""
    handle = run.handle
    state, result = _verdict(run, ran)
    try:
        settled: RunRow | None = handle.row()
    except LedgerError:
        settled = None  # the ledger cannot be read: the terminal record says the rest
    if settled is not None and settled.generation != handle.generation:
        # Another process settled the run meanwhile (a canceller past its ceiling while this
        # owner was stalled, a reconciler while it was cut off or frozen): its record and
        # receipt stand; a second receipt would contradict them.
        return _settled_elsewhere(handle, result, ran.why)
    receipt, receipt_error = _write_receipt(run, result, state, ran.started_at)
    retry = None
    retryable = state == RunState.FAILED and _rate_limited_before_tools(result)
    if retryable and run.row.attempt < run.policy.max_attempts:
        with contextlib.suppress(LedgerError):  # no room for it: the run ends as it is
            retry = _queue_retry(handle.ledger, run.row, result)
    failure_kind = result.failure_kind if state != RunState.UNCERTAIN else None
    ending = Ending(
        state,
        failure_kind,
        result.to_json_data(),
        result.cost_usd,
        None if receipt is None else receipt.absolute(),
        None if retry is None else f"{state} (rate_limited); retry {retry}",
    )
    try:
        handle.finish(ending)
    except StaleOwner:
        return _settled_elsewhere(handle, result, ran.why)
    except LedgerError as e:
        # The database did not take it within the patience (or cannot: damaged). The session
        # ran and its result is worth keeping: saved beside the run's row, named for the user.
        saved, save_error = save_result(
            handle.run_id, state, result.to_json_data(), receipt, e.message
        )
        return Outcome(
            handle.run_id,
            state,
            result,
            failure_kind,
            result.reason,
            receipt,
            receipt_error,
            unrecorded=e,
            saved=saved,
            save_error=save_error,
        )
    return Outcome(
        handle.run_id, state, result, failure_kind, result.reason, receipt, receipt_error, retry
    )


def _settled_elsewhere(handle: OwnedRun, result: AgentResult | None, why: str | None) -> Outcome:
    """The run was taken over by another process (a canceller, a reconciler): its ending, once
    that process has committed it. A taker that has not within ``SETTLE_WAIT`` seconds is
    settling a run nothing observed to its end: ``uncertain``."""
    clock = handle.clock
    deadline = clock.monotonic() + SETTLE_WAIT
    while True:
        try:
            row = handle.ledger.get(handle.run_id)
        except LedgerError:
            row = None
        if row is not None and row.state in TERMINAL:
            return Outcome(handle.run_id, row.state, result, row.failure_kind, why)
        if clock.monotonic() >= deadline:
            return Outcome(handle.run_id, RunState.UNCERTAIN, result, None, why)
        clock.sleep(_SETTLE_POLL)


def _rate_limited_before_tools(result: AgentResult) -> bool:
    return result.failure_kind == "rate_limited" and not result.tool_calls


def backoff(attempt: int, retry_after: float | None) -> float:
    """Seconds before attempt ``attempt + 1``: what the runner was told, else exponential;
    capped, with up to 10 % jitter so a batch does not come back at one instant."""
    base = retry_after if retry_after is not None else 2.0 * 2 ** (attempt - 1)
    delay = min(max(base, 0.0), MAX_BACKOFF)
    return delay + random.uniform(0, delay * 0.1)  # noqa: S311 -- jitter, not a secret


def _queue_retry(ledger: Ledger, row: RunRow, result: AgentResult) -> str:
    with ledger.tx() as c:
        return ledger.insert_run(
            c,
            row,
            attempt=row.attempt + 1,
            retry_of=row.id,
            not_before=ledger.now(c) + backoff(row.attempt, result.retry_after_seconds),
        )


def _write_receipt(
    run: _Run, result: AgentResult, state: str, started_at: datetime
) -> tuple[Path | None, HzError | None]:
    if run.receipts is None:
        return None, None
    from hz.runtime.receipts.write import receipt_and_transcript, write_receipt

    body, transcript = receipt_and_transcript(
        run.packet, result, started_at=started_at, ended_at=datetime.now(UTC)
    )
    if state == RunState.UNCERTAIN:
        body = body.model_copy(update={"status": "uncertain", "failure_kind": None})
    try:
        return write_receipt(Path(run.receipts), body, transcript), None
    except HzError as e:
        return None, e
