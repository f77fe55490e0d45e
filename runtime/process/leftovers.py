"""The private directories alive in this process, for the watchdog to remove if hz dies.

``private_directory`` adds each directory while it exists; ``run_bounded`` hands the current
set to the watchdog it starts, which removes them only when hz ends without dismissing it
(SIGKILL, a crash). A module of its own so the chokepoint needs nothing else of the private
files.
"""

from __future__ import annotations

import threading

_LIVE: set[str] = set()
_LOCK = threading.Lock()


def add(path: str) -> None:
    with _LOCK:
        _LIVE.add(path)


def discard(path: str) -> None:
    with _LOCK:
        _LIVE.discard(path)


def live_private_dirs() -> tuple[str, ...]:
    with _LOCK:
        return tuple(sorted(_LIVE))
