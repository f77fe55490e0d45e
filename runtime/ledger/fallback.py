"""Where a session's result goes when the ledger cannot take it (its disk full, its file
damaged, its database away past the owner's patience): a file of its own in the system's
temporary directory, readable by its owner only, named in the message the owner's caller
prints. The run's row stays as it was (``running``): reconciliation later calls it
``uncertain``, since nothing on record saw its end.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

from hz.runtime.artifacts.errors import HzError


def save_result(
    run_id: str, state: str, result: dict[str, Any], receipt: Path | None, why: str
) -> tuple[Path | None, str | None]:
    """Write the result object to a new file (0600, never an existing one); its path, or
    None and why it could not be written (that file system may be full too)."""
    document = {
        "kind": "unrecorded_result",
        "run_id": run_id,
        "state": state,
        "why": why,
        "receipt": None if receipt is None else str(receipt),
        "result": result,
    }
    # ASCII: a result's text may hold anything; the file is read by people and by tools.
    data = (json.dumps(document, indent=2, ensure_ascii=True) + "\n").encode("ascii")
    try:
        fd, name = tempfile.mkstemp(prefix=f"hz-result-{run_id}-", suffix=".json")
    except OSError as e:
        return None, e.strerror or str(e)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
    except OSError as e:
        Path(name).unlink(missing_ok=True)
        return None, e.strerror or str(e)
    return Path(name), None


def unrecorded(
    run_id: str, state: str, error: HzError, saved: Path | None, save_error: str | None
) -> HzError:
    """What to tell the user of a result the ledger could not take."""
    if saved is not None:
        where = f"its result is saved in {saved} (readable by you only)"
    else:
        where = f"its result could not be saved to a file either ({save_error})"
    return HzError(
        f"the run ledger could not record how run {run_id} ended ({state}): {error.message}",
        hint=f"{where}; once reconciled, the ledger calls the run uncertain, since nothing on "
        "record saw its end (see docs/runs.md, 'When the ledger cannot be written')",
    )
