"""Running queued runs, N at once: ``hz worker`` and the foreground batch ``hz run -j N``.

Each slot is a thread that owns one run at a time (the runs' agents are processes; a thread
only supervises one). ``stop()`` stops claiming new runs and cancels the running ones through
the same path as ``hz runs cancel``; every slot settles within the cancel ceiling.

A slot survives what the database does: a claim that fails because it cannot be written now
(``LedgerUnavailable``: a full disk, a lock held too long) is tried again after a growing wait,
said once on ``on_error``; a run settled by another process before it started (a cancel racing
the claim: ``StaleOwner``) is let go. What a slot cannot go on from (a damaged ledger, a bug)
stops the pool: every slot ends, and ``run()`` raises it, so ``hz worker`` exits non-zero with
one line saying why. So does a SQLite ledger moved, removed or replaced at its path since the
pool opened it (``LedgerReplaced``): a slot looks before every claim, and the main thread as
the ledger's files change (inotify rings the bell) and every ``WAIT_SLICE``, for when every
slot is busy with a long run. Its runs are cancelled and recorded in the file they belong to;
no run is claimed from a file nobody submits to any more, nor from two files.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from hz.runtime.artifacts.errors import HzError
from hz.runtime.ledger.db import LedgerDamaged, LedgerReplaced, LedgerUnavailable, SqliteDb
from hz.runtime.ledger.owner import Slots, Told, run_owned
from hz.runtime.ledger.store import Hold, Ledger, Owner, StaleOwner
from hz.runtime.ledger.wakeup import Bell, LedgerWatch
from hz.runtime.ledger.watcher import Watcher
from hz.runtime.process.signals import routed
from hz.runtime.process.threads import start

#: How long an idle slot sleeps before looking at the queue again, unless woken sooner (on
#: SQLite by a change of the ledger: ``hz.runtime.ledger.wakeup``).
IDLE_POLL = 0.2
#: The longest wait between two claims while the database cannot be written.
TROUBLE_WAIT = 15.0
#: How long the main thread waits for the slots before it looks at the ledger's file again,
#: unless a slot's end or a change of the ledger (the bell) wakes it sooner.
WAIT_SLICE = 0.2


class Running:
    """The runs a worker owns now: ``stop`` interrupts each, and one that starts after it as
    it starts."""

    def __init__(self) -> None:
        self.stopping = threading.Event()
        self._runs: dict[str, Watcher] = {}
        self._lock = threading.Lock()

    def track(self, run: Watcher) -> None:
        with self._lock:
            self._runs[run.run_id] = run
        if self.stopping.is_set():
            run.interrupt("the worker is stopping")

    def untrack(self, run_id: str) -> None:
        with self._lock:
            self._runs.pop(run_id, None)

    def stop(self, reason: str, *, now: bool = False) -> None:
        """Interrupt every run (intent committed, then signals: SIGTERM and SIGKILL a kill
        grace later, or with ``now`` SIGKILL at once)."""
        self.stopping.set()
        with self._lock:
            runs = list(self._runs.values())
        for run in runs:
            run.interrupt(reason, now=now)


class Pool:
    """``slots.jobs`` slots taking runs from ``claim`` until it returns None (a batch) or
    until ``stop()`` (a worker: ``claim`` then waits for new runs); how each ended is
    ``told``."""

    def __init__(
        self,
        ledger: Ledger,
        slots: Slots,
        claim: Callable[[Ledger, Owner], tuple[str, int] | bool | None],
        told: Told,
        *,
        on_trouble: Callable[[HzError | None], None] | None = None,
    ) -> None:
        self.ledger = ledger
        self.slots = slots
        self.claim = claim
        self.told = told
        #: Told when claims start failing because the database cannot be written now, and
        #: (with None) when they work again.
        self.on_trouble = on_trouble
        self.owner = Owner.this_process()
        self.running = Running()
        self.stopping = self.running.stopping
        #: What stopped the pool that a slot could not go on from; ``run()`` raises it.
        self.failure: BaseException | None = None
        #: Wakes idle slots: rung by a change of the SQLite ledger, and by ``stop()``.
        self.bell = Bell()
        self._troubled = False
        self._lock = threading.Lock()
        #: Slots that ended (each rings the bell as it ends).
        self._ended = 0

    def run(self) -> None:
        """Run the slots until the source is done or ``stop()``; raises what stopped a slot
        that could not go on (``failure``) once every slot has ended. The slots claim nothing
        until all of them started: when the machine refuses one, those started end at once and
        ``HzError`` says why, with no run taken."""
        go = threading.Event()
        threads: list[threading.Thread] = []
        watch = self._watch()
        try:
            for n in range(self.slots.jobs):
                thread = threading.Thread(
                    target=self._guarded_slot, args=(go,), name=f"hz-slot-{n}"
                )
                thread.daemon = True
                start(thread, f"run slot {n + 1} of {self.slots.jobs}")
                threads.append(thread)
        except HzError:
            self.stopping.set()
            raise
        finally:
            go.set()
            self._wait_for(threads)
            if watch is not None:
                watch.close()
        if self.failure is not None:
            raise self.failure

    def _wait_for(self, threads: list[threading.Thread]) -> None:
        """Until every slot ended, waiting in slices so signals reach the main thread. At each
        slice, and as the bell rings (a slot ended, the ledger's files changed), a SQLite
        ledger replaced at its path stops the pool: with every slot busy with a long run, no
        claim would look for hours."""
        while True:
            seen = self.bell.seen()
            self._look_at_file()
            with self._lock:
                ended = self._ended
            if ended >= len(threads) or not any(t.is_alive() for t in threads):
                break
            self.bell.wait(seen, WAIT_SLICE)
        for thread in threads:
            while thread.is_alive():  # ending: its last act was to say so
                thread.join(timeout=WAIT_SLICE)

    def _look_at_file(self) -> None:
        if self.stopping.is_set():
            return
        try:
            self._same_file()
        except LedgerReplaced as e:
            self._fail(e)

    def _fail(self, error: BaseException) -> None:
        """What a slot cannot go on from: the pool stops, and ``run()`` raises it."""
        with self._lock:
            if self.failure is None:
                self.failure = error
        self.stop("the worker cannot go on")

    def _watch(self) -> LedgerWatch | None:
        """On SQLite, what rings the bell when the ledger changes (None elsewhere, and where
        the system cannot watch it: the slots poll)."""
        db = self.ledger.db
        return LedgerWatch.start(db.path, self.bell) if isinstance(db, SqliteDb) else None

    def _guarded_slot(self, go: threading.Event) -> None:
        try:
            go.wait()
            self._slot()
        except BaseException as e:  # a damaged ledger, a bug: the pool stops, run() says why
            self._fail(e)
        finally:
            try:
                self.ledger.thread_done()
            finally:
                with self._lock:
                    self._ended += 1
                self.bell.ring()  # the main thread waits for it

    def stop(self, reason: str, *, now: bool = False) -> None:
        """Claim nothing more; cancel what runs (intent committed, then signals: SIGTERM and
        SIGKILL a kill grace later, or with ``now`` SIGKILL at once)."""
        self.running.stop(reason, now=now)
        self.bell.ring()

    def _poll(self) -> float:
        """How long an idle slot waits unless woken: ``[system.queue] poll_seconds``, or
        ``IDLE_POLL``."""
        poll = self.ledger.poll_seconds
        return IDLE_POLL if poll is None else poll

    def _idle(self, seen: int) -> None:
        """Until the bell rings after ``seen`` (the ledger changed, or ``stop()``), or the
        poll passes."""
        if not self.stopping.is_set():
            self.bell.wait(seen, self._poll())

    def _slot(self) -> None:
        ledger = self.ledger  # a connection per thread, or one per statement from a pool
        wait = IDLE_POLL
        while not self.stopping.is_set():
            seen = self.bell.seen()  # a change after this wakes the wait below at once
            self._same_file()
            try:
                claimed = self.claim(ledger, self.owner)
            except LedgerUnavailable as e:
                self._trouble(e)
                self.stopping.wait(wait)
                wait = min(wait * 2, TROUBLE_WAIT)
                continue
            wait = IDLE_POLL
            self._trouble(None)
            if claimed is None:
                return
            if claimed is False or claimed is True:
                self._idle(seen)
                continue
            run_id, generation = claimed
            try:
                outcome = run_owned(
                    ledger,
                    run_id,
                    generation,
                    binding=self.slots.binding,
                    policy=self.slots.policy,
                    on_owned=self.running.track,
                )
            except StaleOwner:
                continue  # settled by another process before it started (a cancel): let go
            except (LedgerDamaged, LedgerReplaced):
                raise  # no run's record can be kept: the pool stops, and run() says why
            except HzError as e:  # the run could not be started, or its record kept
                self.told.error(run_id, e)
                continue
            finally:
                self.running.untrack(run_id)
            error = outcome.unrecorded_error()
            if error is not None:
                self.told.error(run_id, error)
            elif outcome.requeued:
                self.stopping.wait(self._poll())
            else:
                try:
                    self.told.done(outcome)
                except LedgerUnavailable as e:  # its report could not be read: said instead
                    self.told.error(run_id, e)

    def _same_file(self) -> None:
        """``LedgerReplaced`` when the SQLite ledger's file is no longer the one at its path:
        the pool stops (``run()`` raises it) rather than claim from a file nobody submits to."""
        db = self.ledger.db
        if isinstance(db, SqliteDb):
            db.check_file()

    def _trouble(self, error: LedgerUnavailable | None) -> None:
        """A spell of trouble said once as it starts (every slot meets it) and once as it
        ends, not at every look."""
        with self._lock:
            if self._troubled == (error is not None):
                return
            self._troubled = error is not None
        if self.on_trouble is not None:
            self.on_trouble(error)


def from_queue(
    queues: tuple[str, ...] = (), *, hold: Hold | None = None, drain: bool = False
) -> Callable[[Ledger, Owner], tuple[str, int] | bool | None]:
    """A worker's source: the next queued run (of ``queues`` when given), or False (nothing
    now; look again later). With ``hold``, runs a spend ceiling leaves no room for wait in
    the queue, unclaimed (``Ledger.hold_here``). With ``drain``, None once nothing is
    runnable now (a run held for a ceiling until later does not count): the pool ends."""

    def claim(ledger: Ledger, owner: Owner) -> tuple[str, int] | bool | None:
        claimed = ledger.claim_next(owner, queues=queues, hold=hold)
        if claimed is not None:
            return claimed
        if drain and not ledger.runnable_now():
            return None
        return False

    return claim


def run_pool(pool: Pool, why: str) -> None:
    """Run a pool of runs (a batch, a worker) until it ends, hz's cancel signals routed to it
    (``hz.runtime.process.signals``): the first stops it (claim nothing more, cancel what
    runs), the second stops its runs at once. ``why`` is the reason each gives, formatted
    with ``signal`` (its name) and ``again`` ("" or " again")."""

    def first(name: str) -> None:
        pool.stop(why.format(signal=name, again=""))

    def second(name: str) -> None:
        pool.stop(why.format(signal=name, again=" again"), now=True)

    with routed(first, second):
        pool.run()
