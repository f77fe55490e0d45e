"""The watcher of one owned run: a thread that renews the lease while the agent runs and
carries out a cancel, and the process observer that learns the agent's group as it starts.

A cancel reaches the agent as values, never as an exception in the runner's frames:

- from another process (``hz runs cancel``), the intent in the ledger, read at a renewal or a
  tick: SIGTERM to the group, SIGKILL ``grace`` seconds later (``Termination``);
- from this process (a stopping worker or batch: ``interrupt``), the same, or with ``now``
  SIGKILL at once;
- hz itself told to stop (a signal to it: ``stop_now``): the intent on record, and the
  run's ``CancelToken`` set, which the process chokepoint polls: the group is killed at once;
- a cancel on record before the group existed: the token is set as the agent starts, and the
  chokepoint kills it at once (``at_spawn``).

The intent is committed before any signal, even while the database is away: a cancel is never
held up by it. Records the database did not take when they happened (``running``, the private
directory) are written by the watcher once it does, in order.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hz.runtime.artifacts.errors import HzError
from hz.runtime.ledger.db import LedgerUnavailable
from hz.runtime.ledger.handle import OwnedRun
from hz.runtime.ledger.store import StaleOwner
from hz.runtime.process.cancel import CancelToken
from hz.runtime.process.group import KILL_GRACE, Termination
from hz.runtime.process.threads import start
from hz.runtime.runners.protocol import Progress

#: How often the watcher looks for a cancel request.
TICK = 0.1
#: Why a run stopped when the cancel came from another process.
EXTERNAL_CANCEL = "cancelled (hz runs cancel)"


@dataclass(slots=True)
class _Seen:
    """What the watcher thread, the observer and the signal handlers share (under ``lock``)."""

    #: The agent's process group, once it exists.
    pgid: int | None = None
    cancel_reason: str | None = None
    #: SIGKILL without the grace (a second signal to a stopping worker or batch).
    urgent: bool = False
    ending: Termination | None = None
    intent_committed: bool = False
    progress: Progress | None = None
    #: The cancel was on record as the agent started: killed at once, said so.
    at_spawn: bool = False
    #: The signal that told hz itself to stop while it ran this run (``stop_now``).
    signalled: str | None = None
    #: Records the database did not take when they happened: written once it does, in order.
    pending: list[Callable[[], Any]] = field(default_factory=list)
    #: Why the watcher gave up on the ledger (it then stops the run), once.
    gave_up: str | None = None
    lock: threading.Lock = field(default_factory=threading.Lock)


class Watcher:
    """The watcher thread and process observer of ``run``."""

    def __init__(self, run: OwnedRun, *, grace: float = KILL_GRACE) -> None:
        self.run = run
        self.run_id = run.run_id
        self.grace = grace
        self.seen = _Seen()
        #: Set when the agent's group is to be killed at once; the chokepoint polls it.
        self.token = CancelToken()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    # -- process observer ------------------------------------------------------------------

    def spawned(self, pid: int, pgid: int) -> None:
        with self.seen.lock:
            self.seen.pgid = pgid

        def record() -> None:
            if self.run.spawned(pid, pgid):
                self._note_cancel(EXTERNAL_CANCEL)

        try:
            self._record(record)
        except StaleOwner:
            # Settled by another process (a cancel) since ``dispatching``: never run on.
            self._note_cancel("the run was settled by another process")
        with self.seen.lock:
            if self.seen.cancel_reason is not None and not self.token.cancelled:
                self.seen.at_spawn = True
                self.token.cancel("cancelled as the agent started")

    def private_dir(self, path: Path) -> None:
        self._record(lambda: self.run.private_dir(path))

    def _record(self, write: Callable[[], Any]) -> None:
        """``write`` now, or when the database cannot take it now (a full disk, a restart),
        by the watcher once it can: the agent runs already, and must not be held up or
        killed for a record. (Until then a crash of hz leaves no process group on record to
        kill: the window of docs/runs.md's first known limit, made longer.)"""
        with self.seen.lock:
            if self.seen.pending:  # after those already waiting, in order
                self.seen.pending.append(write)
                return
        try:
            write()
        except LedgerUnavailable:
            with self.seen.lock:
                self.seen.pending.append(write)

    def _write_pending(self) -> None:
        while True:
            with self.seen.lock:
                if not self.seen.pending:
                    return
                write = self.seen.pending[0]
            write()  # raises while the database cannot take it: tried at the next tick
            with self.seen.lock:
                self.seen.pending.pop(0)

    def record_progress(self, progress: Progress) -> None:
        self.seen.progress = progress

    # -- cancel ----------------------------------------------------------------------------

    @property
    def cancel_reason(self) -> str | None:
        return self.seen.cancel_reason

    def interrupt(self, reason: str, *, now: bool = False) -> bool:
        """Cancel from inside this process (a signal handler may call it: it touches no
        database). The watcher thread commits the intent, then signals the group: SIGTERM,
        SIGKILL ``grace`` seconds later, or with ``now`` at once. False when no agent runs
        yet (it is killed as it starts)."""
        with self.seen.lock:
            if self.seen.cancel_reason is None:
                self.seen.cancel_reason = reason
            self.seen.urgent = self.seen.urgent or now
            return self.seen.pgid is not None

    def stop_now(self, signal_name: str) -> None:
        """hz itself was told to stop (``signal_name``): the cancel on record, the group
        killed at once by the process chokepoint, which polls ``token``."""
        self.interrupt(f"hz was interrupted ({signal_name})")
        with self.seen.lock:
            if self.seen.signalled is None and not self.seen.at_spawn:
                self.seen.signalled = signal_name
        self.token.cancel(signal_name)

    def _note_cancel(self, reason: str) -> None:
        """A cancel this process did not start: its intent is on record already."""
        with self.seen.lock:
            if self.seen.cancel_reason is None:
                self.seen.cancel_reason = reason
            self.seen.intent_committed = True

    def _commit_intent(self) -> None:
        with self.seen.lock:
            reason = self.seen.cancel_reason
            if reason is None or self.seen.intent_committed:
                return
        # Settled elsewhere, or the database away: the signals go out regardless.
        with contextlib.suppress(StaleOwner, HzError):
            self.run.cancel_intent(reason)
        self.seen.intent_committed = True

    def _signal_now(self) -> None:
        with self.seen.lock:
            pgid = self.seen.pgid
            if pgid is None:
                return
            if self.seen.ending is None:
                self.seen.ending = Termination(pgid, self.grace)
            self.seen.ending.step(self.run.clock.monotonic(), urgent=self.seen.urgent)

    # -- the thread ------------------------------------------------------------------------

    def start(self) -> None:
        """Start the watcher thread; ``HzError`` when the machine refuses one."""
        thread = threading.Thread(target=self._watch, name=f"hz-watch-{self.run_id}")
        thread.daemon = True
        start(thread, f"watching run {self.run_id}")
        self._thread = thread

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._commit_intent()  # an interrupt the watcher had no tick left to record

    def _watch(self) -> None:
        try:
            self._watch_until_stopped()
        finally:
            self.run.ledger.thread_done()  # this thread's connection: one per run otherwise

    def _watch_until_stopped(self) -> None:
        clock = self.run.clock
        renew_every = self.run.ledger.lease_seconds / 3
        renewed = clock.monotonic()
        reported: Progress | None = None
        while not self._stop.wait(TICK):
            try:
                self._write_pending()
                if clock.monotonic() - renewed >= renew_every:
                    cancelled = self.run.renew()
                    # Only after it held: a renewal the database missed is tried at every
                    # tick until it returns, not a third of a lease later.
                    renewed = clock.monotonic()
                    if cancelled:
                        self._note_cancel(EXTERNAL_CANCEL)
                    progress = self.seen.progress
                    if progress is not None and progress != reported:
                        reported = progress
                        self.run.observed(_observed(progress))
                elif self.seen.cancel_reason is None and self.run.ledger.cancel_requested(
                    self.run_id
                ):
                    # Only the intent in the ledger cancels: never the dispatcher's word alone.
                    self._note_cancel(EXTERNAL_CANCEL)
            except StaleOwner:
                # Someone else settled the run (a canceller past its ceiling): stop the agent.
                self._note_cancel("the run was settled by another process")
            except LedgerUnavailable:
                pass  # a full disk, a busy or restarting database: again at the next tick
            except Exception as e:
                self._give_up(e)
            if self.seen.cancel_reason is not None:
                # Even while the database is away: a cancel is never held up by it.
                self._commit_intent()  # the intent is on record before any signal
                self._signal_now()

    def _give_up(self, error: Exception) -> None:
        """The ledger cannot keep this run's record (damaged, refused, a bug): nothing would
        renew its lease or record its end, so the run is stopped, and the reason says why."""
        if self.seen.gave_up is not None:
            return
        what = error.message if isinstance(error, HzError) else f"{type(error).__name__}: {error}"
        self.seen.gave_up = what
        self.interrupt(f"the run ledger cannot keep this run's record ({what}); it was stopped")


def _observed(progress: Progress) -> dict[str, Any]:
    return {
        "elapsed_seconds": round(progress.elapsed_seconds, 3),
        "turns": progress.turns,
        "tool_calls": progress.tool_calls,
        "last_tool": progress.last_tool,
    }
