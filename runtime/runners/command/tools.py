"""The tools the ``command`` runner accepts by default, without pydantic (read through
``hz.runtime.runners.registry`` by ``hz validate``): none. hz knows nothing of an arbitrary agent's
tools; the operator lists them in ``[system.runner] command_read_only_tools``.
"""

from __future__ import annotations

DEFAULT_READ_ONLY_TOOLS: tuple[str, ...] = ()
