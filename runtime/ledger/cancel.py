"""Cancelling a run from any process, classified by what hz can observe.

- ``queued`` or ``prepared``: ``cancelled`` at once; nothing was at stake (a would-be owner's
  ``dispatching`` write is fenced out, so it never spawns).
- ``dispatching`` or ``running``: the intent is committed first, then the group gets SIGTERM and
  SIGKILL two seconds later (from the owner's watcher, and from here when the group is on this
  machine). The owner settles it: ``cancelled`` with the usage read so far when its runner saw
  the session end. When the owner is gone, or has not settled within the ceiling, this process
  settles it as ``uncertain``.

Every wait has a fixed ceiling: ``cancel`` returns within ``CEILING`` seconds whatever the agent
does (ignores SIGTERM, leaves a helper holding its output).
"""

from __future__ import annotations

import time

from hz.runtime.artifacts.errors import HzError
from hz.runtime.ledger.reconcile import kill_group, owner_gone, settle_lost, take_over
from hz.runtime.ledger.rows import RunRow
from hz.runtime.ledger.store import TERMINAL, Ledger, Owner

#: A cancel settles within this many seconds.
CEILING = 10.0
_POLL = 0.05


def cancel(
    ledger: Ledger, run_id: str, *, ceiling: float = CEILING, by: str | None = None
) -> RunRow:
    """Cancel ``run_id``; the run's row once settled (or as it is, if already terminal). A
    row with a value that does not fit its column is refused (``HzError``): hz cannot tell
    what stopping it would touch. ``by`` says who asked (``hz runs cancel``: the user, host
    and database role), for the run's timeline."""
    deadline = time.monotonic() + ceiling
    row = ledger.get(run_id)
    if row.state in TERMINAL:
        return row
    if row.malformed:
        raise HzError(
            f"run {run_id} has values hz cannot read: {row.bad_columns()}; it is left alone",
            hint="the row was edited by hand or damaged; hz runs show names them; fix the row",
        )
    with ledger.tx() as c:
        locked = ledger.locked(c, run_id)
        assert locked is not None  # runs are never deleted
        row = locked
        if row.state in TERMINAL:
            return row
        nothing_ran = row.state in ("queued", "prepared")
        if nothing_ran:
            settled = c.execute(
                "UPDATE runs SET generation = generation + 1, state = 'cancelled', "
                "failure_kind = 'aborted', cancel_requested_at = ?, ended_at = ?, "
                "lease_until = NULL WHERE id = ? RETURNING *",
                (time.time(), time.time(), run_id),
            ).fetchone()
            asked = f" by {by}" if by else ""
            ledger.event(c, run_id, "cancelled", f"cancelled while {row.state}{asked}: nothing ran")
        else:
            c.execute(
                "UPDATE runs SET cancel_requested_at = COALESCE(cancel_requested_at, ?) "
                "WHERE id = ?",
                (time.time(), run_id),
            )
            ledger.event(
                c, run_id, "cancel", f"cancel requested by {by}" if by else "cancel requested"
            )
    # The intent is on record: now the dispatcher's side (its job out of the queue, or the
    # worker running it asked to abort).
    ledger.cancel_dispatch(row)
    if nothing_ran:
        return RunRow.read(settled)
    # The owner's watcher signals the group within a tick; wait for it to settle the run,
    # leaving time to settle it here if it does not.
    settle_by = deadline - 2 * 2.0 - 1.0
    while time.monotonic() < settle_by:
        row = ledger.get(run_id)
        if row.state in TERMINAL:
            return row
        if owner_gone(row, ledger.clock()):
            break
        time.sleep(_POLL)
    row = ledger.get(run_id)
    if row.state in TERMINAL:
        return row
    taken = take_over(ledger, row, Owner.this_process())
    if taken is None:
        return _wait_terminal(ledger, run_id, deadline)
    why = (
        f"cancelled; owner {row.owner} did not settle it within the ceiling"
        if not owner_gone(row, ledger.clock())
        else f"cancelled; owner {row.owner} is gone"
    )
    settle_lost(ledger, taken, generation=taken.generation, why=why)
    return ledger.get(run_id)


def _wait_terminal(ledger: Ledger, run_id: str, deadline: float) -> RunRow:
    while time.monotonic() < deadline:
        row = ledger.get(run_id)
        if row.state in TERMINAL:
            return row
        time.sleep(_POLL)
    return ledger.get(run_id)


__all__ = ["CEILING", "cancel", "kill_group"]
