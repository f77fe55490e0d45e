"""The ledger's records and every write to them: one ``Ledger`` over one database, its
statements grouped by concept.

- ``base``: reading rows and the timeline, the database's clock, fencing, and the statements
  several concepts share (taking a run over, a cancel intent);
- ``holds`` and ``ceilings``: spend ceilings, and runs held in the queue for them;
- ``claims``: claiming queued runs (a batch's, a worker's, a dispatcher's job's);
- ``requests``: a request becoming a run (request keys), a retry;
- ``transitions``: a run's records from ``prepared`` to its end, and settling by another
  process;
- ``publishes``: a run's publish steps, fenced like runs;
- ``identity``: the owner a run records and its lease's clock; ``errors``: what they raise.

Every SQL statement of the ledger lives in this package (and the backends' adapters); states
are spelled by ``hz.runtime.ledger.states``.
"""

from __future__ import annotations

from hz.runtime.ledger.states import LIVE, STATES, TERMINAL
from hz.runtime.ledger.store.base import read_packet
from hz.runtime.ledger.store.ceilings import HOLD_FIRST, HOLD_MAX, Ceilings, Hold, hold_delay
from hz.runtime.ledger.store.errors import (
    KeyHeld,
    KeyReused,
    RunVanished,
    StaleOwner,
    UnknownRun,
    UnknownState,
)
from hz.runtime.ledger.store.identity import (
    LEASE_SECONDS,
    RUN_ID,
    LeaseClock,
    Owner,
    new_run_id,
)
from hz.runtime.ledger.store.publishes import PublishSteps, Step, Taken
from hz.runtime.ledger.store.requests import DEFAULT_QUEUE, Requests
from hz.runtime.ledger.store.schedules import Schedules, ScheduleState
from hz.runtime.ledger.store.transitions import Ending, NotTerminal, Transitions


class Ledger(Requests, Transitions, Schedules, PublishSteps):
    """The run ledger on one database (a SQLite file, or a PostgreSQL database with a
    ``dispatcher`` that hands queued runs to workers)."""


__all__ = [
    "DEFAULT_QUEUE",
    "HOLD_FIRST",
    "HOLD_MAX",
    "LEASE_SECONDS",
    "LIVE",
    "RUN_ID",
    "STATES",
    "TERMINAL",
    "Ceilings",
    "Ending",
    "Hold",
    "KeyHeld",
    "KeyReused",
    "LeaseClock",
    "Ledger",
    "NotTerminal",
    "Owner",
    "RunVanished",
    "ScheduleState",
    "Schedules",
    "StaleOwner",
    "Step",
    "Taken",
    "UnknownRun",
    "UnknownState",
    "hold_delay",
    "new_run_id",
    "read_packet",
]
