"""``hz.runtime.ledger.pg.compat`` against the installed procrastinate: every private method it
overrides is still there, with the signature and the body it was written against, and is still
called where the hooks expect (procrastinate's in-memory connector, its public testing API)."""

from __future__ import annotations

import asyncio
import inspect
from typing import Any

import pytest
from procrastinate import App
from procrastinate.testing import InMemoryConnector

from hz.runtime.ledger.pg.compat import SOURCES, UPSTREAM, SupervisedWorker
from tests.helpers.upstream import resolve, signature, source_digest


@pytest.mark.parametrize("name", sorted(UPSTREAM))
def test_what_compat_overrides_has_the_signature_it_was_written_against(name: str) -> None:
    assert signature(name) == UPSTREAM[name], (
        f"procrastinate changed {name}: re-read it, adjust hz.runtime.ledger.pg.compat, then "
        "update the pin and the upstream link"
    )


@pytest.mark.parametrize("name", sorted(SOURCES))
def test_what_compat_overrides_has_the_body_it_was_written_against(name: str) -> None:
    assert source_digest(name) == SOURCES[name], (
        f"procrastinate changed the body of {name}: re-read it (has the fix hz works around "
        "landed?), adjust hz.runtime.ledger.pg.compat, then update the digest"
    )


@pytest.mark.parametrize("name", sorted(SOURCES))
def test_each_override_takes_what_procrastinate_passes(name: str) -> None:
    def shape(method: Any) -> list[tuple[str, Any]]:
        return [(p.name, p.kind) for p in inspect.signature(method).parameters.values()]

    ours = getattr(SupervisedWorker, name.rsplit(".", 1)[1])
    assert ours is not resolve(name)  # overridden
    assert shape(ours) == shape(resolve(name))


class Recording(SupervisedWorker):
    def __init__(self, app: App, deleted: set[int], **kwargs: Any) -> None:
        super().__init__(app, install_signal_handlers=False, **kwargs)
        self.deleted = deleted
        self.asked: list[int] = []
        self.started: list[str] = []
        self.ended: list[tuple[str, BaseException | None]] = []

    def delete_when_succeeded(self, job_id: int) -> bool:
        self.asked.append(job_id)
        return job_id in self.deleted

    def side_task_ended(self, name: str, failure: BaseException | None) -> None:
        self.ended.append((name, failure))

    async def _monitor_side_tasks(self, side_tasks: list[asyncio.Task[Any]]) -> None:
        self.started = [t.get_name() for t in side_tasks]
        await super()._monitor_side_tasks(side_tasks)


def in_memory() -> App:
    app = App(connector=InMemoryConnector())

    @app.task(name="t")
    def t(n: int) -> None:
        if n == 3:
            raise RuntimeError("three")

    return app


def test_a_job_the_hook_names_is_deleted_as_it_succeeds() -> None:
    app = in_memory()

    async def scenario() -> Recording:
        async with app.open_async():
            ids = [await app.configure_task("t").defer_async(n=n) for n in (1, 2, 3)]
            assert ids == [1, 2, 3]
            worker = Recording(app, {1, 3}, wait=False, listen_notify=False)
            await asyncio.wait_for(worker.run(), timeout=10)  # type: ignore[no-untyped-call]
            return worker

    worker = asyncio.run(scenario())
    assert isinstance(app.connector, InMemoryConnector)
    # Asked only about the jobs that succeeded; a failed one is kept whatever the hook says.
    assert sorted(worker.asked) == [1, 2]
    assert {i: j["status"] for i, j in app.connector.jobs.items()} == {
        2: "succeeded",
        3: "failed",
    }


def test_the_worker_stops_when_a_side_task_other_than_the_deferrer_ends() -> None:
    """In memory, the listener returns at once (as the deferrer does without periodic tasks):
    the hook hears of the listener, not of the deferrer, and the worker stops by itself."""
    app = in_memory()

    async def scenario() -> Recording:
        async with app.open_async():
            worker = Recording(app, set(), listen_notify=True)
            await asyncio.wait_for(worker.run(), timeout=10)  # type: ignore[no-untyped-call]
            return worker

    worker = asyncio.run(scenario())
    assert worker.started == ["update_heartbeats", "deferrer", "poll_jobs_to_abort", "listener"]
    assert worker.ended == [("listener", None)]
