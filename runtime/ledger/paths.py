"""Where the ledger lives: the operator's state directory, never the project's choice.

``HZ_STATE_DIR``, else ``[system] state_dir`` (operator layers only: a project ``hz.toml`` is
refused for ``[system]``), else the platform's user state directory (``platformdirs``).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import quote_from_bytes, unquote_to_bytes

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


#: How the ledger stores a path whose bytes are not UTF-8 (its database columns are text).
_URI = "file://"


def path_text(path: Path | str) -> str:
    """``path`` as the ledger stores it: its text, or, when its bytes are not UTF-8 (a
    checkout under ``/srv/caf\\xe9``, read as Latin-1 elsewhere), its ``file://`` URI with those
    bytes percent-encoded. No stored path starts so otherwise (hz stores absolute paths, and a
    path's text never holds ``//``), so ``read_path`` gives back the same bytes."""
    text = str(path)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return _URI + quote_from_bytes(os.fsencode(text), safe="/")
    return text


def read_path(stored: str) -> str:
    """The path's own text of what ``path_text`` stored: bytes that are not UTF-8 as
    ``os.fsdecode`` names them (``\\udcXX``, which ``Path`` turns back into those bytes and
    ``printable`` escapes). The one reader is ``hz.runtime.ledger.rows``."""
    if stored.startswith(_URI):
        return os.fsdecode(unquote_to_bytes(stored[len(_URI) :]))
    return stored
