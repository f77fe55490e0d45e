"""What a restart does with runs whose owner is gone.

- Owner gone before ``dispatching`` was committed: ``failed`` / ``not_started``. The ledger
  proves the agent was never started, so a new attempt is queued (``[system] max_attempts``).
- Owner gone after: ``uncertain``. If the run's process group still lives on this machine (same
  boot, the leader's pid *and* start time), it is killed (SIGTERM, SIGKILL a kill grace later), its
  private directory removed, a receipt written. Never relaunched: the agent may have done
  anything up to its death, and the workdir's real state must be looked at first.

An owner on this host, boot and pid namespace is gone when its process no longer exists (pid
and start time), whatever the clocks say: a clock that jumps, an owner stopped (SIGSTOP,
Ctrl-Z) past its lease, never make a live local owner look gone. An owner of this host on an
earlier boot is gone. An owner on another machine, in another pid namespace (a container, a
sandbox), or hidden by a /proc mounted ``hidepid``, is gone when its lease has expired, by the
database's clock.

A row with a value that does not fit its column (``RunRow.bad``) is left alone: hz cannot judge
it safely; ``hz runs list`` marks it. A database that cannot be written now (a full disk) ends
the pass early; the next command settles what is left. Settling a
run first takes it over (a new generation, this process as owner) in one transaction, so two
reconcilers never both settle one run and a late original owner is fenced out.

On a dispatcher (PostgreSQL), queued runs whose job ended unrun are handed to it again, and
jobs a silent worker left taken after their run ended are ended (``Ledger.end_leftover_jobs``).
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from hz.runtime.artifacts.errors import HzError
from hz.runtime.artifacts.result import AgentResult
from hz.runtime.ledger import host
from hz.runtime.ledger.db import LedgerUnavailable
from hz.runtime.ledger.rows import RunRow
from hz.runtime.ledger.sight import HostView, owner_verdict
from hz.runtime.ledger.states import LIVE, UNDISPATCHED, RunState, sql_list
from hz.runtime.ledger.store import Ending, LeaseClock, Ledger, Owner, StaleOwner, read_packet
from hz.runtime.process.clock import SYSTEM, Clock
from hz.runtime.process.group import KILL_GRACE, UnsafeGroupError, terminate_group
from hz.runtime.process.privatefiles import remove_tree

#: A process that settles a run holds it this long (its lease) while it kills what is left,
#: removes the private files and writes the receipt.
TAKE_OVER_LEASE = 60.0


@dataclass(frozen=True, slots=True)
class Settled:
    run_id: str
    was: str
    state: str
    detail: str


def owner_gone(row: RunRow, clock: LeaseClock, view: HostView | None = None) -> bool:
    """Whether the run's owner is gone: on this host, boot and pid namespace by its process
    alone (pid and start time; clocks say nothing about a process that exists), on an earlier
    boot of this host always, elsewhere — or when its process cannot be seen for certain — by
    its lease (``hz.runtime.ledger.sight``)."""
    if row.owner is None:
        return False
    verdict = owner_verdict(
        row.owner_host,
        row.owner_boot,
        row.owner_pidns,
        row.owner_pid,
        row.owner_start,
        view or HostView.here(),
    )
    return clock.expired(row.lease_until) if verdict is None else verdict


def reconcile(
    ledger: Ledger, *, max_attempts: int = 3, grace: float = KILL_GRACE, clock: Clock = SYSTEM
) -> list[Settled]:
    """Settle every run whose owner is gone; idempotent, safe from several processes. A
    database that cannot be written now ends the pass: what is left is settled by the next.
    ``grace``: between SIGTERM and SIGKILL to what is left of a run's group."""
    leases = ledger.clock()
    candidates = ledger.select(f"state IN {sql_list(LIVE)} AND owner IS NOT NULL")
    settled: list[Settled] = []
    me = Owner.this_process()
    try:
        for row in candidates:
            if row.malformed or not owner_gone(row, leases):
                continue
            taken = take_over(ledger, row, me)
            if taken is None:
                continue  # another process got there first
            if row.state in UNDISPATCHED:
                settled.append(_not_started(ledger, row, taken, max_attempts))
            else:
                detail = f"owner {row.owner} is gone; the agent may have run"
                settled.append(
                    settle_lost(
                        ledger,
                        taken,
                        generation=taken.generation,
                        why=detail,
                        grace=grace,
                        clock=clock,
                    )
                )
        sweep_orphans(ledger, grace=grace, clock=clock)
        ledger.redispatch_stranded()
        ledger.end_leftover_jobs()
    except LedgerUnavailable:
        pass  # a full disk, a database away: the next command settles what is left
    return settled


def sweep_orphans(ledger: Ledger, *, grace: float = KILL_GRACE, clock: Clock = SYSTEM) -> int:
    """Kill what is left of this host's runs that another host settled: a run another
    machine turned ``uncertain`` (its lease expired) may still have its process group here,
    which only this host can see and signal. Each run is swept once; the number killed."""
    rows = ledger.orphans_here(host.host_id(), host.boot_id())
    killed = 0
    for row in rows:
        if row.malformed:
            continue  # hz cannot tell what its values mean: it is left alone
        # Killed first, then marked: a sweeper that dies in between leaves it to the next
        # (signalling a group twice is harmless; never signalling it is not).
        was_killed = kill_group(row, grace=grace, clock=clock)
        remove_private_dir(row)
        with ledger.tx() as c:
            if ledger.mark_swept(c, row.id, only_once=True) and was_killed:
                killed += 1
                ledger.event(c, row.id, RunState.UNCERTAIN, "its orphaned process group was killed")
    return killed


def take_over(ledger: Ledger, row: RunRow, me: Owner) -> RunRow | None:
    """The run's row with this process as its owner at a new generation, or None when it
    changed since ``row`` was read."""
    with ledger.tx() as c:
        current = ledger.locked(c, row.id)
        if current is None or current.generation != row.generation:
            return None
        if current.state != row.state:
            return None
        return ledger.take(c, row.id, me, lease=TAKE_OVER_LEASE)


def _not_started(ledger: Ledger, row: RunRow, taken: RunRow, max_attempts: int) -> Settled:
    detail = f"owner {row.owner} is gone and the run never reached dispatching"
    retry = None
    try:
        with ledger.fenced(row.id, taken.generation) as c:
            if row.attempt < max_attempts and not taken.malformed:
                retry = ledger.insert_run(
                    c, taken, attempt=row.attempt + 1, retry_of=row.id, not_before=0.0
                )
                detail += f"; retried as {retry}"
            ledger.fail_unstarted(c, row.id, detail)
            ledger.abandon(c, taken)
    except StaleOwner:
        return Settled(row.id, row.state, "unchanged", "settled by another process")
    return Settled(row.id, row.state, RunState.FAILED, detail)


def kill_group(row: RunRow, *, grace: float = KILL_GRACE, clock: Clock = SYSTEM) -> bool:
    """Kill the run's process group when it provably is the run's (this boot; the leader's
    pid and start time, or a leaderless group whose id no new process can have taken);
    True when something was killed."""
    pgid = row.pgid
    if pgid is None or not HostView.here().sees(row.host_id, row.boot_id, row.pidns):
        return False  # not provably this pid namespace's group: another's by that number
    # When the leader is gone: a pid is never reused as a group id while that group has
    # members, so members of this group are still the run's.
    leader = host.is_same_process(row.pid, row.proc_start, row.boot_id)
    if not leader and not host.group_members(pgid):
        return False
    try:
        terminate_group(pgid, grace=grace, clock=clock)
    except UnsafeGroupError:
        return False
    return True


def remove_private_dir(row: RunRow) -> bool:
    """Remove the run's private directory: only a temporary directory hz made (``hz-…``)."""
    if not row.private_dir or not host.is_this_host(row.host_id, row.boot_id):
        return False
    path = Path(row.private_dir)
    if path.parent != Path(tempfile.gettempdir()) or not path.name.startswith("hz-"):
        return False
    if not path.exists():
        return False
    remove_tree(path)
    return True


def settle_lost(
    ledger: Ledger,
    row: RunRow,
    *,
    generation: int,
    why: str,
    state: str = RunState.UNCERTAIN,
    grace: float = KILL_GRACE,
    clock: Clock = SYSTEM,
) -> Settled:
    """Settle a dispatched run whose session nobody observed to its end: kill what is left
    (SIGTERM, SIGKILL ``grace`` seconds later), remove its private files, write its receipt,
    commit ``state`` (``uncertain``)."""
    killed = kill_group(row, grace=grace, clock=clock)
    removed = remove_private_dir(row)
    observed = row.observed or {}
    detail = why + ("; its process group was killed" if killed else "")
    if removed:
        detail += "; its private directory was removed"
    result = AgentResult(
        runner=row.runner or "unknown",
        status="cancelled",
        failure_kind="aborted",
        turns=observed.get("turns"),
        reason=detail,
    )
    receipt = None
    if row.receipt_dir is not None:
        from hz.runtime.receipts.write import receipt_and_transcript, write_receipt

        packet = read_packet(row)
        if packet is None:
            detail += "; no receipt: its packet in the ledger is unreadable"
        else:
            started = datetime.fromtimestamp(row.dispatched_at or row.created_at, UTC)
            body, transcript = receipt_and_transcript(
                packet, result, started_at=started, ended_at=datetime.now(UTC)
            )
            body = body.model_copy(update={"status": state, "failure_kind": None})
            try:
                receipt = write_receipt(Path(row.receipt_dir), body, transcript)
            except HzError as e:
                detail += f"; no receipt: {e.message}"
    try:
        ledger.finish(row.id, generation, Ending(state, receipt=receipt, detail=detail))
    except StaleOwner:
        return Settled(row.id, row.state, "unchanged", "settled by another process")
    with ledger.tx() as c:
        ledger.abandon(c, row)
    if killed:
        with ledger.tx() as c:
            ledger.mark_swept(c, row.id, only_once=False)
    return Settled(row.id, row.state, state, detail)
