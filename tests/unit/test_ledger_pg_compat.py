"""``hz.runtime.ledger.pg.compat`` against the installed procrastinate: every private method it
overrides is still there, with the signature and the body it was written against, and is still
called where the hooks expect (procrastinate's in-memory connector, its public testing API);
every SQL object hz names is still in procrastinate's schema, as hz uses it."""

from __future__ import annotations

import asyncio
import importlib.resources
import inspect
import re
from pathlib import Path
from typing import Any

import pytest
from procrastinate import App
from procrastinate.manager import get_channel_for_queues
from procrastinate.testing import InMemoryConnector

from hz.runtime.ledger.pg import compat
from hz.runtime.ledger.pg.compat import SOURCES, UPSTREAM, SupervisedWorker
from tests.helpers.upstream import resolve, signature, source_digest

REPO = Path(__file__).resolve().parents[2]


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


def schema() -> str:
    return (importlib.resources.files("procrastinate.sql") / "schema.sql").read_text()


def block(text: str, opening: str) -> str:
    """The parenthesised body that follows ``opening`` in the schema."""
    start = text.index(opening) + len(opening)
    return text[start : text.index(");", start)]


def test_the_tables_and_columns_hz_reads_are_in_procrastinates_schema() -> None:
    def columns(table: str) -> dict[str, str]:
        lines = block(schema(), f"CREATE TABLE {table}").strip(" (\n").splitlines()
        return dict(line.strip().split(" ", 1) for line in lines if line.strip())

    jobs, workers = columns(compat.JOBS), columns(compat.WORKERS)
    assert [c for c in compat.JOB_COLUMNS if c not in jobs] == []
    assert [c for c in compat.WORKER_COLUMNS if c not in workers] == []
    # Compared with now() in hz's statements.
    assert jobs["scheduled_at"].startswith("timestamp with time zone")
    assert workers["last_heartbeat"].startswith("timestamp with time zone")
    statuses = re.findall(
        r"'(\w+)'", block(schema(), "CREATE TYPE procrastinate_job_status AS ENUM")
    )
    assert [s for s in compat.JOB_STATUSES if s not in statuses] == []


def test_the_function_hz_calls_takes_what_hz_passes() -> None:
    assert (
        f"CREATE FUNCTION {compat.FINISH_JOB}(job_id bigint, end_status procrastinate_job_status, "
        "delete_job boolean)"
    ) in schema()


def test_hz_notifies_as_procrastinates_triggers_do() -> None:
    text = schema()
    for kind in (compat.JOB_INSERTED, compat.ABORT_REQUESTED):
        assert f"SELECT json_build_object('type', '{kind}', 'job_id', NEW.id)::text" in text
    assert f"PERFORM pg_notify('{compat.QUEUE_CHANNEL_PREFIX}' || NEW.queue_name, payload);" in text
    assert f"PERFORM pg_notify('{compat.ANY_QUEUE_CHANNEL}', payload);" in text
    # ... and where procrastinate's listener listens.
    assert list(get_channel_for_queues(None)) == [compat.ANY_QUEUE_CHANNEL]
    assert list(get_channel_for_queues(["q"])) == [f"{compat.QUEUE_CHANNEL_PREFIX}q"]


def test_hz_names_procrastinates_sql_objects_only_through_compat() -> None:
    named = {
        value
        for value in vars(compat).values()
        if isinstance(value, str) and value.startswith("procrastinate_")
    }
    found = {
        (str(path.relative_to(REPO)), name)
        for folder in ("runtime", "hz")
        for path in (REPO / folder).rglob("*.py")
        if path.name != "compat.py"
        for name in re.findall(r"\bprocrastinate_\w+", path.read_text(encoding="utf-8"))
    }
    assert sorted((path, name) for path, name in found if name not in named) == []
