"""The connection to the PostgreSQL ledger, the libpq way, read from hostile places.

``[system.queue] dsn_env = "NAME"``: the environment variable NAME holds the DSN (libpq
``key=value`` or a ``postgresql://`` URI); without it, libpq's own ``PG*`` variables
(``PGHOST``, ``PGDATABASE``, ``PGUSER``, ``PGPASSWORD``, ``~/.pgpass``…). The DSN is bounded and
parsed before use, and never printed: it may hold a password.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from hz.runtime.artifacts.errors import ConfigError
from hz.runtime.artifacts.printable import printable

#: A longer DSN is refused (libpq has no limit; a real one is a few hundred characters).
MAX_DSN = 4096
#: Seconds to wait for the server before a connection attempt fails (when the DSN says none).
CONNECT_TIMEOUT = 10


@dataclass(frozen=True, slots=True)
class Target:
    """Where the ledger is: the conninfo to connect with (secret) and a name for messages."""

    conninfo: str
    where: str

    def __repr__(self) -> str:  # never the conninfo: it may hold a password
        return f"Target(where={self.where!r})"


def target(queue: Mapping[str, Any], environ: Mapping[str, str] | None = None) -> Target:
    from psycopg.conninfo import conninfo_to_dict, make_conninfo

    env = os.environ if environ is None else environ
    name = queue.get("dsn_env")
    raw = ""
    if name:
        raw = env.get(str(name), "")
        if not raw:
            raise ConfigError(
                f"[system.queue] dsn_env names the environment variable {name}, which is not "
                "set or empty",
                hint=f"export {name}='host=… dbname=… user=…' (the password in ~/.pgpass or "
                "PGPASSWORD)",
            )
        if len(raw) > MAX_DSN or "\x00" in raw:
            raise ConfigError(
                f"environment variable {name}: a DSN of at most {MAX_DSN} characters without "
                "NUL is expected"
            )
    try:
        parsed = conninfo_to_dict(raw)
    except Exception:  # psycopg.ProgrammingError, whose text may quote the DSN
        source = f"environment variable {name}" if name else "the PG* environment variables"
        # Not chained: a traceback (--debug) must not show the DSN either.
        raise ConfigError(
            f"{source}: not a PostgreSQL connection string (libpq key=value pairs or a "
            "postgresql:// URI)"
        ) from None
    if "connect_timeout" not in parsed and "PGCONNECT_TIMEOUT" not in env:
        parsed["connect_timeout"] = CONNECT_TIMEOUT
    database = parsed.get("dbname") or env.get("PGDATABASE") or "(default database)"
    server = parsed.get("host") or env.get("PGHOST") or "(default host)"
    port = parsed.get("port") or env.get("PGPORT")
    where = f"postgresql database {database} on {server}" + (f" port {port}" if port else "")
    return Target(make_conninfo("", **parsed), printable(where[:300]))
