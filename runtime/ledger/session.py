"""Opening the operator's ledger from the effective configuration, reconciled.

``[system.queue] backend``: ``sqlite`` (the default: one file in the state directory) or
``postgres`` (hz's run table beside procrastinate's queue, ``hz.runtime.ledger.pg``).
"""

from __future__ import annotations

from typing import Any

from hz.runtime.config.tables import BudgetSettings, QueueSettings, SystemSettings
from hz.runtime.ledger.db import LedgerUnavailable as LedgerUnavailable
from hz.runtime.ledger.handle import patiently as patiently
from hz.runtime.ledger.owner import Policy
from hz.runtime.ledger.paths import DATABASE, state_dir
from hz.runtime.ledger.reconcile import Settled, reconcile
from hz.runtime.ledger.store import Ceilings, Ledger
from hz.runtime.settings.keys import QUEUE


def policy(config: Any, *, fail_over_ceiling: bool = True) -> Policy:
    budget = BudgetSettings.from_config(config)
    return Policy(
        ceilings=Ceilings(
            per_day=None if budget.max_usd_per_day is None else float(budget.max_usd_per_day),
            per_runner=tuple(sorted((k, float(v)) for k, v in budget.per_runner.items())),
            hold_wait=(float(budget.hold_wait_min_seconds), float(budget.hold_wait_max_seconds)),
        ),
        max_attempts=SystemSettings.from_config(config).max_attempts,
        fail_over_ceiling=fail_over_ceiling,
    )


def backend(config: Any) -> str:
    return QueueSettings.from_config(config).backend


def ledger_for(config: Any) -> Ledger:
    """The configured ledger, its schema migrated (PostgreSQL: under a lock, on first use)."""
    queue = config.table(QUEUE)
    settings = QueueSettings.from_config(config)
    lease, poll = settings.lease_seconds, settings.poll_seconds
    if backend(config) != "postgres":
        return Ledger(
            state_dir(SystemSettings.from_config(config)) / DATABASE,
            lease_seconds=lease,
            poll_seconds=poll,
        )
    from hz.runtime.ledger.pg import require

    require()
    from hz.runtime.ledger.pg.connect import target
    from hz.runtime.ledger.pg.db import PgDb
    from hz.runtime.ledger.pg.dispatch import Procrastinate

    where = target(queue)
    db = PgDb(where.conninfo, where=where.where)
    db.migrate()
    return Ledger(
        db, dispatcher=Procrastinate(where.conninfo), lease_seconds=lease, poll_seconds=poll
    )


def open_ledger(config: Any, *, reconciled: bool = True) -> tuple[Ledger, list[Settled]]:
    """The configured ledger; every run whose owner is gone settled first
    (``hz.runtime.ledger.reconcile``) unless ``reconciled`` is false."""
    ledger = ledger_for(config)
    settled = reconcile(ledger, max_attempts=policy(config).max_attempts) if reconciled else []
    return ledger, settled
