"""Starting a thread where the machine may refuse one, and how many runs a pool may hold.

A system out of threads (``ulimit -u``, a container's ``pids.max``, memory) makes
``Thread.start`` raise ``RuntimeError``; that is the operator's limit, said as an ``HzError``
that names what needed the thread, never a traceback.
"""

from __future__ import annotations

import threading

from hz.runtime.artifacts.errors import HzError

#: Runs one pool takes at once (``hz run -j``, ``hz worker -j``, ``[system] max_parallel``):
#: each holds two threads (its slot and the watcher that renews its lease) and an agent.
MAX_PARALLEL = 256

HINT = (
    "the system's limit on threads is reached (ulimit -u, a container's pids.max, memory): "
    "run fewer at once (-j, [system] max_parallel) or raise the limit"
)


def start(thread: threading.Thread, what: str) -> None:
    """``thread.start()``; ``HzError`` naming ``what`` when no thread can be started."""
    try:
        thread.start()
    except RuntimeError as e:
        raise HzError(f"cannot start a thread for {what}: {e}", hint=HINT) from e
