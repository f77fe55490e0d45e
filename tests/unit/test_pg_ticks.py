"""The tick task and its queue (``hz.runtime.ledger.pg.ticks``), without a database: what a
tick takes, which deployment a set of jobs is."""

from __future__ import annotations

import pytest

from hz.runtime.artifacts.schedule import Schedule
from hz.runtime.ledger.pg.ticks import TICK_TASK, ForeignTick, Ticks, deployment, tick_app
from tests.helpers.scheduled import job

MINUTELY = job("minutely", Schedule(cron="* * * * *"))
HOURLY = job("hourly", Schedule(cron="0 * * * *"))
CHAINED = job("chained", after=("minutely",))


def test_a_tick_looks_and_a_tick_deferred_by_hand_with_other_arguments_fires_nothing() -> None:
    looked: list[str] = []
    app = tick_app(Ticks("postgresql:///nowhere", "d", lambda: looked.append("look")))
    task = app.tasks[TICK_TASK]
    assert task.queue == "hz:schedules:d"
    [periodic] = app.periodic_registry.periodic_tasks.values()
    assert (periodic.cron, periodic.periodic_id) == ("* * * * *", "d")
    task.func(timestamp=1796177747)
    for wrong in ({"timestamp": "1796177747"}, {"timestamp": True}, {"timestamp": 1, "run_id": 2}):
        with pytest.raises(ForeignTick) as caught:
            task.func(**wrong)
        assert str(caught.value) == (
            "hz.schedules.tick takes one argument, timestamp; nothing was fired"
        )
    assert looked == ["look"]


def test_the_deployment_names_the_scheduled_jobs_only() -> None:
    assert deployment((MINUTELY, HOURLY)) == deployment((HOURLY, MINUTELY, CHAINED))
    assert deployment((MINUTELY,)) != deployment((MINUTELY, HOURLY))
    assert len(deployment((MINUTELY,))) == 16
