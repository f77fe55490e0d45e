"""Opening the operator's ledger from the effective configuration, reconciled."""

from __future__ import annotations

from typing import Any

from hz.runtime.config.keys import BUDGET, SYSTEM
from hz.runtime.ledger.owner import Policy
from hz.runtime.ledger.paths import DATABASE, state_dir
from hz.runtime.ledger.reconcile import Settled, reconcile
from hz.runtime.ledger.store import Ceilings, Ledger


def policy(config: Any, *, fail_over_ceiling: bool = True) -> Policy:
    budget = config.table(BUDGET)
    per_runner = budget.get("per_runner") or {}
    return Policy(
        ceilings=Ceilings(
            per_day=budget.get("max_usd_per_day"),
            per_runner=tuple(sorted((str(k), float(v)) for k, v in per_runner.items())),
        ),
        max_attempts=int(config.get(SYSTEM, "max_attempts", 3)),
        fail_over_ceiling=fail_over_ceiling,
    )


def open_ledger(config: Any, *, reconciled: bool = True) -> tuple[Ledger, list[Settled]]:
    """The ledger in the operator's state directory; every run whose owner is gone settled
    first (``hz.runtime.ledger.reconcile``) unless ``reconciled`` is false."""
    ledger = Ledger(state_dir(config.table(SYSTEM)) / DATABASE)
    settled = reconcile(ledger, max_attempts=policy(config).max_attempts) if reconciled else []
    return ledger, settled
