"""Running one ledger run as its owner: prepare, dispatch, watch, settle.

The records are committed in order — ``prepared``, ``dispatching`` (before the runner may
spawn anything), ``running`` (as soon as the process chokepoint reports the group), one terminal
state — and the receipt is written before the terminal record, which is committed before the
caller reports anything. A watcher thread renews the lease while the agent runs and carries out
a cancel: SIGTERM to the group, SIGKILL two seconds later.

Faults of the database (``LedgerUnavailable``: a full disk, an I/O error, a lock held too long,
PostgreSQL away) never end a run by themselves: the records before the agent starts and the
terminal one are retried for ``COMMIT_PATIENCE`` seconds; ``running`` and the private directory
are recorded by the watcher once the database takes them, while the agent runs on; the watcher
keeps renewing at every tick. A result the ledger cannot take in the end is saved to a file
(``hz.runtime.ledger.fallback``) and named in the outcome. A ledger that cannot keep the run's
record at all (damaged) makes the watcher stop the run, saying why.
"""

from __future__ import annotations

import contextlib
import random
import signal
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

from hz.runtime.artifacts.canonical import digest_of
from hz.runtime.artifacts.errors import HzError
from hz.runtime.artifacts.models import Packet
from hz.runtime.artifacts.result import AgentResult
from hz.runtime.ledger import host
from hz.runtime.ledger.db import LedgerError, LedgerUnavailable
from hz.runtime.ledger.fallback import save_result
from hz.runtime.ledger.rows import RunRow
from hz.runtime.ledger.store import TERMINAL, Ceilings, Hold, Ledger, StaleOwner, read_packet
from hz.runtime.process import observe
from hz.runtime.process.group import signal_group
from hz.runtime.process.threads import start
from hz.runtime.runners.protocol import AgentRunner, Progress, ProgressCallback, RunRequest

#: SIGTERM, then SIGKILL this many seconds later (as at a timeout).
KILL_GRACE = 2.0
#: How often the watcher looks for a cancel request.
_TICK = 0.1
#: Why a run stopped when the cancel came from another process.
EXTERNAL_CANCEL = "cancelled (hz runs cancel)"
#: Automatic retries after a rate limit wait at most this long (plus jitter).
MAX_BACKOFF = 60.0
#: How long a finished session's owner keeps trying to commit its result to an unreachable
#: database before giving up (the run is then judged by its lease: uncertain).
COMMIT_PATIENCE = 60.0
#: How long an owner that finds its run taken over waits for the taker to settle it (a
#: reconciler kills the group first: up to two seconds).
SETTLE_WAIT = 10.0

T = TypeVar("T")


class Interrupted(BaseException):
    """The owner was told to stop (a signal to hz itself) while it ran no agent."""

    def __init__(self, signal_name: str) -> None:
        super().__init__(signal_name)
        self.signal_name = signal_name


class _CancelledBeforeStart(BaseException):
    """Raised from the spawn observer: a cancel was committed before the group existed."""


@dataclass(frozen=True, slots=True)
class Policy:
    """What the operator allows: spend ceilings and automatic attempts (``[system]``)."""

    ceilings: Ceilings = field(default_factory=Ceilings)
    max_attempts: int = 3
    #: With a ceiling in the way: True fails the run (foreground), False requeues it (worker).
    fail_over_ceiling: bool = True


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


@dataclass(slots=True)
class _Watch:
    """What the watcher and the observer share."""

    pgid: int | None = None
    pid: int | None = None
    cancel_reason: str | None = None
    cancel_at: float | None = None
    termed: bool = False
    killed: bool = False
    #: SIGKILL without the grace (a second signal to a stopping worker or batch).
    urgent: bool = False
    progress: Progress | None = None
    intent_committed: bool = False
    #: True while the runner runs: an interrupt may then be raised into it.
    in_runner: bool = False
    #: Records the database did not take when they happened (``running``, the private
    #: directory): the watcher writes them once it does, in order.
    pending: list[Callable[[], Any]] = field(default_factory=list)
    #: Why the watcher gave up on the ledger (it then stops the run), once.
    gave_up: str | None = None
    lock: threading.Lock = field(default_factory=threading.Lock)


class OwnedRun:
    """One run this process owns at ``generation``; also the process observer of its run."""

    def __init__(self, ledger: Ledger, run_id: str, generation: int) -> None:
        self.ledger = ledger
        self.run_id = run_id
        self.generation = generation
        self.watch = _Watch()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    # -- process observer ------------------------------------------------------------------

    def spawned(self, pid: int, pgid: int) -> None:
        with self.watch.lock:
            self.watch.pid, self.watch.pgid = pid, pgid

        def record() -> None:
            if self.ledger.spawned(self.run_id, self.generation, pid, pgid):
                self._note_cancel(EXTERNAL_CANCEL)

        try:
            self._record(record)
        except StaleOwner:
            # Settled by another process (a cancel) since ``dispatching``: never run on.
            raise _CancelledBeforeStart from None
        if self.watch.cancel_reason is not None:
            raise _CancelledBeforeStart

    def private_dir(self, path: Path) -> None:
        self._record(lambda: self.ledger.private_dir(self.run_id, self.generation, path))

    def _record(self, write: Callable[[], Any]) -> None:
        """``write`` now, or when the database cannot take it now (a full disk, a restart),
        by the watcher once it can: the agent runs already, and must not be held up or
        killed for a record. (Until then a crash of hz leaves no process group on record to
        kill: the window of docs/runs.md's first known limit, made longer.)"""
        with self.watch.lock:
            if self.watch.pending:  # after those already waiting, in order
                self.watch.pending.append(write)
                return
        try:
            write()
        except LedgerUnavailable:
            with self.watch.lock:
                self.watch.pending.append(write)

    def _write_pending(self) -> None:
        while True:
            with self.watch.lock:
                if not self.watch.pending:
                    return
                write = self.watch.pending[0]
            write()  # raises while the database cannot take it: tried at the next tick
            with self.watch.lock:
                self.watch.pending.pop(0)

    # -- cancel ----------------------------------------------------------------------------

    def interrupt(self, reason: str, *, now: bool = False) -> bool:
        """Cancel from inside this process (a signal handler may call it: it touches no
        database). The watcher thread commits the intent, then signals the group: SIGTERM,
        SIGKILL ``KILL_GRACE`` seconds later, or with ``now`` at once. False when no agent runs
        yet (it is killed as it starts)."""
        with self.watch.lock:
            if self.watch.cancel_reason is None:
                self.watch.cancel_reason = reason
            self.watch.urgent = self.watch.urgent or now
            return self.watch.pgid is not None

    def _commit_intent(self) -> None:
        with self.watch.lock:
            reason = self.watch.cancel_reason
            if reason is None or self.watch.intent_committed:
                return
        with (
            contextlib.suppress(StaleOwner, HzError),
            self.ledger.fenced(self.run_id, self.generation) as c,
        ):
            c.execute(
                "UPDATE runs SET cancel_requested_at = COALESCE(cancel_requested_at, ?) "
                "WHERE id = ?",
                (time.time(), self.run_id),
            )
            self.ledger.event(c, self.run_id, "cancel", reason)
        self.watch.intent_committed = True

    def _signal_now(self) -> None:
        with self.watch.lock:
            pgid, now = self.watch.pgid, time.monotonic()
            if pgid is None or self.watch.killed:
                return
            if not self.watch.termed:
                self.watch.termed, self.watch.cancel_at = True, now
                signal_group(pgid, signal.SIGTERM)
            if self.watch.urgent or (
                self.watch.cancel_at is not None and now - self.watch.cancel_at >= KILL_GRACE
            ):
                self.watch.killed = True
                signal_group(pgid, signal.SIGKILL)

    # -- the watcher thread ----------------------------------------------------------------

    def start_watch(self) -> None:
        """Start the watcher thread; ``HzError`` when the machine refuses one."""
        thread = threading.Thread(target=self._watch, name=f"hz-watch-{self.run_id}")
        thread.daemon = True
        start(thread, f"watching run {self.run_id}")
        self._thread = thread

    def stop_watch(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._commit_intent()  # an interrupt the watcher had no tick left to record

    def _watch(self) -> None:
        try:
            self._watch_until_stopped()
        finally:
            self.ledger.thread_done()  # this thread's connection: one per run otherwise

    def _watch_until_stopped(self) -> None:
        renew_every = self.ledger.lease_seconds / 3
        renewed = time.monotonic()
        reported: Progress | None = None
        while not self._stop.wait(_TICK):
            try:
                self._write_pending()
                if time.monotonic() - renewed >= renew_every:
                    cancelled = self.ledger.renew(self.run_id, self.generation)
                    # Only after it held: a renewal the database missed is tried at every
                    # tick until it returns, not a third of a lease later.
                    renewed = time.monotonic()
                    if cancelled:
                        self._note_cancel(EXTERNAL_CANCEL)
                    progress = self.watch.progress
                    if progress is not None and progress != reported:
                        reported = progress
                        self.ledger.set_observed(self.run_id, self.generation, _observed(progress))
                elif self.watch.cancel_reason is None and self.ledger.cancel_requested(self.run_id):
                    # Only the intent in the ledger cancels: never the dispatcher's word alone.
                    self._note_cancel(EXTERNAL_CANCEL)
            except StaleOwner:
                # Someone else settled the run (a canceller past its ceiling): stop the agent.
                self._note_cancel("the run was settled by another process")
            except LedgerUnavailable:
                pass  # a full disk, a busy or restarting database: again at the next tick
            except Exception as e:
                self._give_up(e)
            if self.watch.cancel_reason is not None:
                # Even while the database is away: a cancel is never held up by it.
                self._commit_intent()  # the intent is on record before any signal
                self._signal_now()

    def _give_up(self, error: Exception) -> None:
        """The ledger cannot keep this run's record (damaged, refused, a bug): nothing would
        renew its lease or record its end, so the run is stopped, and the reason says why."""
        if self.watch.gave_up is not None:
            return
        what = error.message if isinstance(error, HzError) else f"{type(error).__name__}: {error}"
        self.watch.gave_up = what
        self.interrupt(f"the run ledger cannot keep this run's record ({what}); it was stopped")

    def _note_cancel(self, reason: str) -> None:
        """A cancel this process did not start: its intent is on record already."""
        with self.watch.lock:
            if self.watch.cancel_reason is None:
                self.watch.cancel_reason = reason
            self.watch.intent_committed = True

    def record_progress(self, progress: Progress) -> None:
        self.watch.progress = progress


def _observed(progress: Progress) -> dict[str, Any]:
    return {
        "elapsed_seconds": round(progress.elapsed_seconds, 3),
        "turns": progress.turns,
        "tool_calls": progress.tool_calls,
        "last_tool": progress.last_tool,
    }


def settings_digest(settings: Mapping[str, Any]) -> str:
    return digest_of({k: settings[k] for k in sorted(settings)} if settings else {})


@dataclass(frozen=True, slots=True)
class Binding:
    """The bound runner a process runs its runs with, its name and its settings' digest."""

    runner: AgentRunner
    name: str
    settings_digest: str

    @classmethod
    def from_config(cls, config: Any) -> Binding:
        """``hz.runtime.execution.execute.bind``: ``ConfigError`` / ``RunnerError`` before
        anything runs."""
        from hz.runtime.execution.execute import bind
        from hz.runtime.settings.keys import RUNNER

        return cls(bind(config), config.agent_runner, settings_digest(config.table(RUNNER)))


def run_owned(
    ledger: Ledger,
    run_id: str,
    generation: int,
    *,
    binding: Binding,
    policy: Policy,
    progress: ProgressCallback | None = None,
    on_owned: Any = None,
    receipt_dir: Path | None = None,
) -> Outcome:
    """Take the owned run from ``queued`` to a committed terminal state (or back to the queue
    when a spend ceiling is in the way and ``policy.fail_over_ceiling`` is false), through the
    bound runner.

    ``on_owned(owned)`` is called once the run is dispatching, so a caller can route signals
    to ``owned.interrupt``. ``receipt_dir`` overrides the recorded (absolute) directory with
    the caller's spelling of it, for messages."""
    row = ledger.get(run_id)
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
        ledger.finish(
            run_id,
            generation,
            "failed",
            failure_kind="not_started",
            result=None,
            cost_usd=None,
            receipt=None,
            detail=f"not started: {e.message}",
        )
        raise
    # Retried across an outage, as every later record: a run claimed as the database went
    # away would otherwise be left claimed until its lease lapsed, and then tried again.
    _patiently(lambda: ledger.prepare(run_id, generation, binding.name, binding.settings_digest))
    over = _patiently(lambda: ledger.dispatch(run_id, generation, policy.ceilings))
    if over is not None:
        if not policy.fail_over_ceiling:
            beyond = policy.ceilings.alone(binding.name, row.max_usd)
            if beyond is None:
                until = ledger.release(run_id, generation, Hold(policy.ceilings, binding.name))
                return Outcome(run_id, "queued", reason=over, requeued=True, until=until)
            over = beyond  # no window will ever take it: it would wait for ever
        ledger.finish(
            run_id,
            generation,
            "failed",
            failure_kind="budget_ceiling",
            result=None,
            cost_usd=None,
            receipt=None,
            detail=f"not started: {over}",
        )
        return Outcome(run_id, "failed", failure_kind="budget_ceiling", reason=over)
    owned = OwnedRun(ledger, run_id, generation)
    if on_owned is not None:
        on_owned(owned)
    receipts = receipt_dir if receipt_dir is not None else row.receipt_dir
    return _dispatched(owned, packet, row, binding.runner, binding.name, policy, progress, receipts)


def _dispatched(
    owned: OwnedRun,
    packet: Packet,
    row: RunRow,
    runner: AgentRunner,
    runner_name: str,
    policy: Policy,
    progress: ProgressCallback | None,
    receipts: Path | str | None,
) -> Outcome:
    from hz.runtime.execution.execute import execute

    def on_progress(update: Progress) -> None:
        owned.record_progress(update)
        if progress is not None:
            progress(update)

    started_at, started = datetime.now(UTC), time.monotonic()
    result: AgentResult | None = None
    why: str | None = None
    try:
        owned.start_watch()
    except HzError as e:  # no thread to renew the lease: nothing is started
        refused = e.message
        _patiently(lambda: _not_started(owned, refused))
        raise
    try:
        owned.watch.in_runner = True
        with observe.observing(owned):
            request = RunRequest.for_packet(packet, workdir=Path(row.workdir), progress=on_progress)
            result = execute(runner, request)
    except _CancelledBeforeStart:
        why = "cancelled as the agent started; its group was killed"
    except KeyboardInterrupt:
        owned.interrupt("hz was interrupted (SIGINT)")
        why = "hz was interrupted (SIGINT); the run's processes were killed"
    except Interrupted as e:
        owned.interrupt(f"hz was interrupted ({e.signal_name})")
        why = f"hz was interrupted ({e.signal_name}); the run's processes were killed"
    finally:
        owned.watch.in_runner = False
        owned.stop_watch()
    cancel_reason = owned.watch.cancel_reason
    if cancel_reason is None:
        with contextlib.suppress(LedgerError):  # the ledger away: the watcher's word stands
            if _patiently(lambda: owned.ledger.cancel_requested(owned.run_id)):
                cancel_reason = EXTERNAL_CANCEL
    duration = time.monotonic() - started
    return _settle(
        receipts,
        owned,
        packet,
        row,
        runner_name,
        policy,
        result,
        cancel_reason,
        why,
        started_at,
        duration,
    )


def _not_started(owned: OwnedRun, why: str) -> None:
    owned.ledger.finish(
        owned.run_id,
        owned.generation,
        "failed",
        failure_kind="not_started",
        result=None,
        cost_usd=0.0,
        receipt=None,
        detail=f"not started: {why}",
    )


def _settle(
    receipts: Path | str | None,
    owned: OwnedRun,
    packet: Packet,
    row: RunRow,
    runner_name: str,
    policy: Policy,
    result: AgentResult | None,
    cancel_reason: str | None,
    why: str | None,
    started_at: datetime,
    duration: float,
) -> Outcome:
    """Classify, write the receipt, commit the terminal record."""
    seen = owned.watch.progress
    if result is not None and (result.status in ("cancelled", "uncertain") or not cancel_reason):
        # The runner's own verdict: a runner that handles a cancel classifies it itself.
        state = result.status
    elif result is not None:
        # Stopped by the cancel's signals, and the runner saw the session end: cancelled,
        # with what it read.
        state = "cancelled"
        result = result.model_copy(
            update={
                "status": "cancelled",
                "failure_kind": "aborted",
                "reason": why or f"{cancel_reason}; the run's processes were killed",
            }
        )
    else:
        # Interrupted inside the runner: the process chokepoint killed the group and reaped
        # its leader on the way out; what ran is known through the progress events read.
        state = "cancelled"
        result = AgentResult(
            runner=runner_name,
            status="cancelled",
            failure_kind="aborted",
            turns=None if seen is None else seen.turns,
            duration_seconds=duration,
            reason=why or "cancelled",
        )
    try:
        settled: RunRow | None = _patiently(lambda: owned.ledger.get(owned.run_id))
    except LedgerError:
        settled = None  # the ledger cannot be read: the terminal record says the rest
    if settled is not None and settled.generation != owned.generation:
        # Another process settled the run meanwhile (a canceller past its ceiling while this
        # owner was stalled, a reconciler while it was cut off or frozen): its record and
        # receipt stand; a second receipt would contradict them.
        return _settled_elsewhere(owned, result, why)
    receipt, receipt_error = _write_receipt(receipts, packet, result, state, started_at)
    retry = None
    if (
        state == "failed"
        and _rate_limited_before_tools(result)
        and row.attempt < policy.max_attempts
    ):
        with contextlib.suppress(LedgerError):  # no room for it: the run ends as it is
            retry = _queue_retry(owned.ledger, row, result)
    final = result
    try:
        _patiently(
            lambda: owned.ledger.finish(
                owned.run_id,
                owned.generation,
                state,
                failure_kind=final.failure_kind if state != "uncertain" else None,
                result=final.to_json_data(),
                cost_usd=final.cost_usd,
                # Absolute in the ledger: hz runs show may run from anywhere.
                receipt=None if receipt is None else receipt.absolute(),
                detail=None if retry is None else f"{state} (rate_limited); retry {retry}",
            )
        )
    except StaleOwner:
        return _settled_elsewhere(owned, result, why)
    except LedgerError as e:
        # The database did not take it within the patience (or cannot: damaged). The session
        # ran and its result is worth keeping: saved beside the run's row, named for the user.
        saved, save_error = save_result(
            owned.run_id, state, final.to_json_data(), receipt, e.message
        )
        return Outcome(
            owned.run_id,
            state,
            result,
            result.failure_kind if state != "uncertain" else None,
            result.reason,
            receipt,
            receipt_error,
            unrecorded=e,
            saved=saved,
            save_error=save_error,
        )
    return Outcome(
        owned.run_id,
        state,
        result,
        result.failure_kind if state != "uncertain" else None,
        result.reason,
        receipt,
        receipt_error,
        retry,
    )


def _settled_elsewhere(owned: OwnedRun, result: AgentResult | None, why: str | None) -> Outcome:
    """The run was taken over by another process (a canceller, a reconciler): its ending, once
    that process has committed it. A taker that has not within ``SETTLE_WAIT`` seconds is
    settling a run nothing observed to its end: ``uncertain``."""
    deadline = time.monotonic() + SETTLE_WAIT
    while True:
        try:
            row = owned.ledger.get(owned.run_id)
        except LedgerError:
            row = None
        if row is not None and row.state in TERMINAL:
            return Outcome(owned.run_id, row.state, result, row.failure_kind, why)
        if time.monotonic() >= deadline:
            return Outcome(owned.run_id, "uncertain", result, None, why)
        time.sleep(0.05)


def _patiently(write: Callable[[], T]) -> T:
    """``write`` tried again while the database cannot take it now (``LedgerUnavailable``: a
    restart, a cut link, a full disk, a lock held too long), for up to ``COMMIT_PATIENCE``
    seconds: a session that ended is worth its result, and fencing makes a late write safe
    (a run settled elsewhere meanwhile raises ``StaleOwner``). Any other ``LedgerError`` (a
    damaged ledger) is raised at once."""
    delay, deadline = 0.1, time.monotonic() + COMMIT_PATIENCE
    while True:
        try:
            return write()
        except LedgerUnavailable:
            if time.monotonic() > deadline:
                raise
            time.sleep(delay)
            delay = min(delay * 2, 2.0)


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
    receipts: Path | str | None,
    packet: Packet,
    result: AgentResult,
    state: str,
    started_at: datetime,
) -> tuple[Path | None, HzError | None]:
    if receipts is None:
        return None, None
    from hz.runtime.receipts.write import receipt_and_transcript, write_receipt

    body, transcript = receipt_and_transcript(
        packet, result, started_at=started_at, ended_at=datetime.now(UTC)
    )
    if state == "uncertain":
        body = body.model_copy(update={"status": "uncertain", "failure_kind": None})
    try:
        return write_receipt(Path(receipts), body, transcript), None
    except HzError as e:
        return None, e


def is_alive_here(row: RunRow) -> bool:
    """Whether the run's agent (its leader, by pid and start time) lives on this machine."""
    return host.is_this_host(row.host_id, row.boot_id) and host.is_same_process(
        row.pid, row.proc_start, row.boot_id
    )
