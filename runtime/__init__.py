"""hz runtime: job, packet and result models, the AgentRunner protocol, bounded processes.

The runtime never imports the compiler: a packet compiled in CI runs on a machine that has
only this package.
"""

from __future__ import annotations
