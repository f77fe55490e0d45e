"""What the ledger's records raise besides the database's own errors (``hz.runtime.ledger.db``:
``LedgerError``, ``LedgerUnavailable``, ``LedgerDamaged``)."""

from __future__ import annotations

from hz.runtime.artifacts.errors import HzError
from hz.runtime.ledger.db import LedgerError


class StaleOwner(Exception):
    """This process no longer owns the run: another moved it on (cancel, reconcile)."""


class KeyHeld(HzError):
    """A run with this request key exists; nothing was started."""


class KeyReused(KeyHeld):
    """The request key's run is of another request (``Ledger.create``); nothing was started."""


class UnknownRun(HzError):
    pass


class UnknownState(HzError):
    """A run's row says a state this hz does not know (edited by hand, or a newer hz)."""


class RunVanished(LedgerError):
    """A run's row is gone inside a transaction that held it: runs are never deleted, so the
    ledger was edited by hand."""

    def __init__(self, run_id: str) -> None:
        super().__init__(
            f"run {run_id} is no longer in the run ledger (its row was deleted by hand?)"
        )
