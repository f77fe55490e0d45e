"""The PostgreSQL backend of the run ledger: hz's run table beside procrastinate's queue.

``connect`` (the DSN the libpq way, validated), ``db`` (the adapter: connections, row locks,
named locks on rows of ``hz.locks``, migrations under a lock), ``schema`` (hz's tables),
``dispatch`` (procrastinate as the dispatcher: defer in the run's transaction, cancel/abort,
abandon) and ``worker`` (a supervised procrastinate worker that runs each job through the
shared owner machinery).
docs/decisions/0009-postgres-ledger.md says why the split is what it is.

Everything here imports psycopg or procrastinate: ``require()`` turns their absence into one
clear error naming the extra to install.
"""

from __future__ import annotations

from hz.runtime.artifacts.distribution import extra_command
from hz.runtime.artifacts.errors import ConfigError


def require() -> None:
    """``ConfigError`` unless psycopg and procrastinate can be imported."""
    try:
        import procrastinate  # noqa: F401
        import psycopg  # noqa: F401
    except ImportError as e:
        raise ConfigError(
            f'[system.queue] backend = "postgres" needs psycopg and procrastinate ({e.name} is '
            "not installed)",
            hint=f"install the extra into hz's environment: {extra_command('postgres')}",
        ) from e
