"""The run ledger: every run a row before its agent starts, the record of truth for recovery.

``states`` (the one registry of run states), ``store`` (every record and its SQL: reading,
requests, claims, holds for spend ceilings, the owner's transitions), ``db`` and ``pg/`` (the
SQLite and PostgreSQL backends), ``rows`` (rows as typed values), ``host`` (proving a process is
the one a run started), ``handle`` (the fenced run handle an owner writes through), ``watcher``
(the thread that renews an owned run's lease and carries out a cancel), ``owner`` (running one
run through the ledger), ``reconcile`` (what a restart does with runs whose owner is gone),
``cancel``, ``worker`` (N runs at once). docs/runs.md describes the states and what
``uncertain`` means; docs/architecture.md maps the package.
"""
