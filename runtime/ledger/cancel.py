"""Cancelling a run from any process, classified by what hz can observe.

- ``queued`` or ``prepared``: ``cancelled`` at once; nothing was at stake (a would-be owner's
  ``dispatching`` write is fenced out, so it never spawns).
- ``dispatching`` or ``running``: the intent is committed first, then the group gets SIGTERM and
  SIGKILL a kill grace later (from the owner's watcher, and from here when the group is on this
  machine). The owner settles it: ``cancelled`` with the usage read so far when its runner saw
  the session end. When the owner is gone, or has not settled within the ceiling, this process
  settles it as ``uncertain``.

Every wait has a fixed ceiling: ``cancel`` returns within ``CEILING`` seconds whatever the agent
does (ignores SIGTERM, leaves a helper holding its output). The ceiling, the kill grace and the
clock are parameters, so a test can shorten them.
"""

from __future__ import annotations

from hz.runtime.artifacts.errors import HzError
from hz.runtime.ledger.reconcile import kill_group, owner_gone, settle_lost, take_over
from hz.runtime.ledger.rows import RunRow
from hz.runtime.ledger.states import TERMINAL, UNDISPATCHED
from hz.runtime.ledger.store import Ledger, Owner
from hz.runtime.process.clock import SYSTEM, Clock
from hz.runtime.process.group import KILL_GRACE

#: A cancel settles within this many seconds.
CEILING = 10.0
_POLL = 0.05


def cancel(
    ledger: Ledger,
    run_id: str,
    *,
    ceiling: float = CEILING,
    by: str | None = None,
    grace: float = KILL_GRACE,
    clock: Clock = SYSTEM,
) -> RunRow:
    """Cancel ``run_id``; the run's row once settled (or as it is, if already terminal). A
    row with a value that does not fit its column is refused (``HzError``): hz cannot tell
    what stopping it would touch. ``by`` says who asked (``hz runs cancel``: the user, host
    and database role), for the run's timeline."""
    deadline = clock.monotonic() + ceiling
    row = ledger.get(run_id)
    if row.state in TERMINAL:
        return row
    if row.malformed:
        raise HzError(
            f"run {run_id} has values hz cannot read: {row.bad_columns()}; it is left alone",
            hint="the row was edited by hand or damaged; hz runs show names them; fix the row",
        )
    asked = f" by {by}" if by else ""
    with ledger.tx() as c:
        row = ledger.held(c, run_id)
        if row.state in TERMINAL:
            return row
        if row.state in UNDISPATCHED:
            detail = f"cancelled while {row.state}{asked}: nothing ran"
            settled = ledger.cancel_unstarted(c, row, detail)
        else:
            settled = None
            ledger.request_cancel(c, run_id, f"cancel requested{asked}")
    # The intent is on record: now the dispatcher's side (its job out of the queue, or the
    # worker running it asked to abort).
    ledger.cancel_dispatch(row)
    if settled is not None:
        return settled
    # The owner's watcher signals the group within a tick; wait for it to settle the run,
    # leaving time to settle it here if it does not (two graces and a second).
    settle_by = deadline - 2 * grace - 1.0
    while clock.monotonic() < settle_by:
        row = ledger.get(run_id)
        if row.state in TERMINAL:
            return row
        if owner_gone(row, ledger.clock()):
            break
        clock.sleep(_POLL)
    row = ledger.get(run_id)
    if row.state in TERMINAL:
        return row
    taken = take_over(ledger, row, Owner.this_process())
    if taken is None:
        return _wait_terminal(ledger, run_id, deadline, clock)
    why = (
        f"cancelled; owner {row.owner} did not settle it within the ceiling"
        if not owner_gone(row, ledger.clock())
        else f"cancelled; owner {row.owner} is gone"
    )
    settle_lost(ledger, taken, generation=taken.generation, why=why, grace=grace, clock=clock)
    return ledger.get(run_id)


def _wait_terminal(ledger: Ledger, run_id: str, deadline: float, clock: Clock) -> RunRow:
    while clock.monotonic() < deadline:
        row = ledger.get(run_id)
        if row.state in TERMINAL:
            return row
        clock.sleep(_POLL)
    return ledger.get(run_id)


__all__ = ["CEILING", "cancel", "kill_group"]
