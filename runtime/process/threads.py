"""Starting a thread where the machine may refuse one, calling a function in one with a
deadline, and how many runs a pool may hold.

A system out of threads (``ulimit -u``, a container's ``pids.max``, memory) makes
``Thread.start`` raise ``RuntimeError``; that is the operator's limit, said as an ``HzError``
that names what needed the thread, never a traceback.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

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


@dataclass(frozen=True, slots=True)
class Waited:
    """How a ``call_within`` ended: ``done`` with what the function returned (``value``) or
    raised (``error``), or not done by the deadline (``thread`` still runs it)."""

    thread: threading.Thread
    done: bool
    value: Any = None
    error: BaseException | None = None


def call_within(work: Callable[[], Any], seconds: float, *, name: str, what: str) -> Waited:
    """``work()`` in a daemon thread of its own named ``name``, waited for at most ``seconds``:
    code that may hang (a plugin's) is left behind rather than waited for. Whatever it raises
    is handed back, never raised here; ``HzError`` naming ``what`` when no thread can be
    started."""
    box: dict[str, Any] = {}
    done = threading.Event()

    def run() -> None:
        try:
            box["value"] = work()
        except BaseException as e:  # handed to the waiting thread
            box["error"] = e
        finally:
            done.set()

    thread = threading.Thread(target=run, name=name, daemon=True)
    start(thread, what)
    if not done.wait(seconds):
        return Waited(thread, False)
    return Waited(thread, True, box.get("value"), box.get("error"))
