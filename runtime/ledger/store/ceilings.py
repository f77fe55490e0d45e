"""Spend ceilings (``[system.budget]``) and how long a run they hold waits between looks."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from hz.runtime.ledger.backend import Connection

#: A run held for a spend ceiling is looked at again after a wait that grows with how long it
#: has been held (half of it), from ``HOLD_FIRST`` up to ``HOLD_MAX`` seconds (``[system.budget]
#: hold_wait_min_seconds`` and ``hold_wait_max_seconds`` set others), and no later than the next
#: UTC day; a run that ends below its reservation wakes the held runs at once.
HOLD_FIRST, HOLD_MAX = 1.0, 30.0
#: Seconds in a day: a per-day ceiling's window is the current UTC day, by the database's clock.
DAY = 86400


@dataclass(frozen=True, slots=True)
class Ceilings:
    """``[system.budget]``: the spend a day's runs may reserve, in total and per runner, and
    the shortest and longest wait between two looks at a run they hold (``hold_delay``)."""

    per_day: float | None = None
    per_runner: tuple[tuple[str, float], ...] = ()
    hold_wait: tuple[float, float] = (HOLD_FIRST, HOLD_MAX)

    @property
    def active(self) -> bool:
        return self.per_day is not None or bool(self.per_runner)

    def refusal(
        self, c: Connection, runner: str | None, amount: float, *, now: float
    ) -> str | None:
        crossed = self.crossed(c, runner, amount, now=now)
        return None if crossed is None else crossed[1]

    def _limits(self, runner: str | None) -> list[tuple[str, str | None, float | None]]:
        """Each ceiling that applies to ``runner``: its key, the runner it counts (None: all),
        its amount."""
        limits: list[tuple[str, str | None, float | None]] = [
            ("max_usd_per_day", None, self.per_day)
        ]
        limits += [(f"per_runner.{n}", n, value) for n, value in self.per_runner if n == runner]
        return limits

    def alone(self, runner: str | None, amount: float) -> str | None:
        """Why ``amount`` is over a ceiling on its own, so that no day can take it."""
        for label, _, limit in self._limits(runner):
            if limit is not None and amount > limit + 1e-9:
                return (
                    f"its budget of ${amount:.2f} is over [system.budget] {label} of "
                    f"${limit:.2f} on its own"
                )
        return None

    def crossed(
        self, c: Connection, runner: str | None, amount: float, *, now: float
    ) -> tuple[str, str] | None:
        """The ceiling reserving ``amount`` at ``now`` (the database's time:
        ``Ledger.now``) would cross (its key) and why, or None."""
        if not self.active:
            return None
        day_start = now - now % DAY  # the current UTC day, by the database's clock
        for label, only, limit in self._limits(runner):
            if limit is None:
                continue
            spent = reserved_since(c, day_start, only)
            if spent + amount > limit + 1e-9:
                return label, (
                    f"reserving ${amount:.2f} would cross [system.budget] {label} of "
                    f"${limit:.2f} (${spent:.2f} reserved or spent today)"
                )
        return None


def reserved_since(c: Connection, since: float, runner: str | None) -> float:
    """What the runs dispatched since ``since`` (of ``runner``, or all) reserved or spent."""
    query = "SELECT COALESCE(SUM(reserved_usd), 0) AS total FROM runs WHERE dispatched_at >= ?"
    params: tuple[float | str, ...] = (since,)
    if runner is not None:
        query += " AND runner = ?"
        params += (runner,)
    return float(c.execute(query, params).fetchone()["total"])


@dataclass(frozen=True, slots=True)
class Hold:
    """A worker's ceilings and the runner its runs would reserve under: a run they leave no
    room for waits in the queue (``Ledger.hold``)."""

    ceilings: Ceilings
    runner: str
    #: The runner of a job by its name, when jobs tables bind another (``Binding.runner_of``).
    per_job: Callable[[str], str] | None = None

    def runner_of(self, job: str) -> str:
        return self.runner if self.per_job is None else self.per_job(job)


def hold_delay(
    held_for: float, now: float, wait: tuple[float, float] = (HOLD_FIRST, HOLD_MAX)
) -> float:
    """How long a run held for ``held_for`` seconds waits before it is looked at again: half
    that, within ``wait`` (the shortest and the longest wait)."""
    shortest, longest = wait
    delay = min(longest, max(shortest, held_for / 2))
    next_day = now - now % DAY + DAY  # a per-day ceiling's window opens again
    return min(delay, next_day - now + 0.1)
