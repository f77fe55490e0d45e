"""Packets and receipt bodies built directly (no contract, no render) for the tests of the
stages after rendering: execution, the ledger, receipts, transcripts."""

from __future__ import annotations

from datetime import UTC, datetime

from hz.runtime.artifacts.canonical import sha256_hex
from hz.runtime.artifacts.models import (
    Budget,
    Job,
    OutputSpec,
    Packet,
    PublishSpec,
    SourceRef,
    ToolProfile,
)
from hz.runtime.artifacts.result import AgentResult, ToolCall, Usage
from hz.runtime.receipts.write import receipt_body

#: When the sample receipt's run started and ended.
START = datetime(2026, 11, 29, 12, 0, 0, 123456, tzinfo=UTC)
END = datetime(2026, 11, 29, 12, 0, 5, tzinfo=UTC)


def make_packet(
    prompt: str = "Say hi.",
    output: OutputSpec | None = None,
    *,
    max_usd: float = 0.5,
    publishes: tuple[PublishSpec, ...] = (),
) -> Packet:
    job = Job(
        name="greet",
        source=SourceRef(path="greet.yaml", sha256="0" * 64),
        timeout_seconds=30,
        tools=ToolProfile(tools=("Read",)),
        budget=Budget(max_usd=max_usd),
        output=output or OutputSpec(),
        contract="Be brief.",
        template=prompt,
        hz_version="0.1.0",
        publishes=list(publishes),
    ).sealed()
    return Packet(
        job=job,
        prompt=prompt,
        contract="Be brief.",
        inputs_sha256="1" * 64,
        job_digest=job.digest,
        prompt_sha256=sha256_hex(prompt),
        publishes=list(publishes),
    )


def receipt_sample() -> dict[str, object]:
    """The body of a receipt for a completed echo run of ``make_packet()``."""
    result = AgentResult(
        runner="echo",
        model="m",
        status="completed",
        draft="hi",
        tool_calls=(ToolCall(name="Read"), ToolCall(name="Grep"), ToolCall(name="Read")),
        turns=2,
        usage=Usage(input_tokens=10, output_tokens=5),
        cost_usd=0.01,
        duration_seconds=5.0004,
        limits_unenforced=("budget",),
    )
    return receipt_body(make_packet(), result, started_at=START, ended_at=END)
