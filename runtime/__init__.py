"""hz runtime: everything a machine that only runs packets needs, in packages that are layers.

From the bottom: ``artifacts`` (the file formats and leaf utilities); ``jsonschema``,
``process`` (the child-process chokepoint) and ``settings`` (how a table's keys are declared);
``transcript``; ``runners`` (the protocol, the registry, the runners) and ``receipts``;
``config``; ``execution`` (one run); ``ledger`` and ``testing``. A package imports only the
layers below it (``[tool.importlinter]`` in pyproject.toml, docs/architecture.md).

The runtime never imports the compiler: a packet compiled in CI runs on a machine that has
only this package.
"""

from __future__ import annotations
