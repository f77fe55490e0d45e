"""The run ledger: every run a row before its agent starts, the record of truth for recovery.

``store`` (SQLite, schema migrations, fenced writes), ``host`` (proving a process is the one a
run started), ``reconcile`` (what a restart does with runs whose owner is gone), ``owner``
(running one run through the ledger), ``cancel``, ``budget`` (spend ceilings) and ``worker``.
docs/runs.md describes the states and what ``uncertain`` means.
"""
