"""A worker's idle watch: told once when the worker becomes idle, not once per look; a run that
ended between two looks ends the idle period; a ledger it cannot read tells nothing."""

from __future__ import annotations

from hz.runtime.ledger.db import LedgerUnavailable
from hz.runtime.ledger.serve import IdleWatch


class Looks:
    """A ledger whose ``activity`` answers from a script: (held, due) or an error."""

    def __init__(self, *answers: tuple[int, int] | Exception) -> None:
        self.answers = list(answers)

    def activity(self, owner: object, queues: tuple[str, ...]) -> tuple[int, int]:
        answer = self.answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer


def test_once_per_idle_period() -> None:
    told: list[None] = []
    failing = LedgerUnavailable("the ledger cannot be used now")
    looks = Looks((0, 0), (0, 0), failing, (1, 0), (0, 0), (0, 0), (0, 0))
    watch = IdleWatch(looks, (), lambda: told.append(None))
    shown = []
    for ran in (False, False, False, False, False, True, False):
        if ran:
            watch.ran()  # a run began and ended between two looks
        watch.look()
        shown.append(len(told))
    assert shown == [1, 1, 1, 1, 2, 3, 3]
