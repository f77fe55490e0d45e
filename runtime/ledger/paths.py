"""Where the ledger lives: the operator's state directory, never the project's choice.

``HZ_STATE_DIR``, else ``[system] state_dir`` (operator layers only: a project ``hz.toml`` is
refused for ``[system]``), else the platform's user state directory (``platformdirs``).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from hz.runtime.config.tables import SystemSettings

DATABASE = "ledger.sqlite3"


def state_dir(system: SystemSettings, environ: Mapping[str, str] | None = None) -> Path:
    env = os.environ if environ is None else environ
    explicit = env.get("HZ_STATE_DIR", "")
    if explicit:
        return Path(explicit).expanduser()
    if system.state_dir:
        return Path(system.state_dir).expanduser()
    import platformdirs

    return Path(platformdirs.user_state_dir("hz", appauthor=False))
