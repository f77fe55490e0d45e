"""The clocks hz waits by, as one value a test can replace to skip time."""

from __future__ import annotations

import time
from typing import Protocol


class Clock(Protocol):
    """Monotonic time for waits and graces, wall time for records, and sleeping."""

    def monotonic(self) -> float: ...

    def time(self) -> float: ...

    def sleep(self, seconds: float) -> None: ...


class SystemClock:
    """The machine's clocks."""

    def monotonic(self) -> float:
        return time.monotonic()

    def time(self) -> float:
        return time.time()

    def sleep(self, seconds: float) -> None:
        time.sleep(seconds)


SYSTEM: Clock = SystemClock()
