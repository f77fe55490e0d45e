"""A clock for tests that skip time: ``sleep`` advances it at once."""

from __future__ import annotations


class FakeClock:
    """``hz.runtime.process.clock.Clock`` whose time moves only when slept: a wait of minutes
    takes no real time. ``slept`` records each sleep."""

    def __init__(self, start: float = 1000.0) -> None:
        self.now = start
        self.slept: list[float] = []

    def monotonic(self) -> float:
        return self.now

    def time(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += max(seconds, 0.0)
