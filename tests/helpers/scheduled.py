"""Scheduled jobs as a worker fires them, without compiling contracts: a sealed ``Job`` with a
schedule, the packet a firing worker makes of an occasion, and a wall clock a test sets."""

from __future__ import annotations

from datetime import datetime

from hz.runtime.artifacts.canonical import digest_of, sha256_hex
from hz.runtime.artifacts.models import Budget, Job, Packet, SourceRef, ToolProfile
from hz.runtime.artifacts.schedule import Schedule
from hz.runtime.ledger.schedules import Occasion


def job(name: str, schedule: Schedule | None = None, after: tuple[str, ...] = ()) -> Job:
    return Job(
        name=name,
        source=SourceRef(path=f"{name}.yaml", sha256="0" * 64),
        timeout_seconds=30,
        tools=ToolProfile(),
        budget=Budget(max_usd=0.5),
        schedule=schedule,
        after=after,
        contract="Be brief.",
        template="Say hi.",
        hz_version="0.1.0",
    ).sealed()


def packet(occasion: Occasion) -> Packet:
    return Packet(
        job=occasion.job,
        prompt="Say hi.",
        contract=occasion.job.contract,
        inputs={},
        inputs_sha256=digest_of({}),
        job_digest=occasion.job.digest,
        prompt_sha256=sha256_hex("Say hi."),
    )


class Clock:
    """A firing worker's clock (``Firing(clock=...)``): ``now`` until the test moves it."""

    def __init__(self, start: datetime) -> None:
        self.now = start

    def __call__(self) -> datetime:
        return self.now
