"""A packet's ``sources`` are checked against its job and values as the packet is read: the
receipt certifies their digests, so a forged one (a digest of other data, a source for no
input, another operation, a read input without one) is refused, never run."""

from __future__ import annotations

import json
from typing import Any

import pytest

from hz.compiler.render.packet import make_packet
from hz.runtime.artifacts.canonical import canonical_json, digest_of
from hz.runtime.artifacts.errors import FormatError
from hz.runtime.artifacts.models import InputSource, Packet, ResolvedWindow, parse_artifact
from tests.helpers.providers import job_reading, merged

VALUE = [{"number": 1, "title": "t", "url": "u", "merged_at": None}]
NOTES = {"read": {"operation": "files.read", "args": {"path": "a.md"}}}


def fetched(value: Any = VALUE) -> InputSource:
    return InputSource(
        provider="github",
        operation="code-host.merged_pull_requests",
        args={"repository": "acme/app"},
        window=ResolvedWindow(
            spec="7d", since="2026-04-24T09:00:00Z", until="2026-05-01T09:00:00Z"
        ),
        fetched_at="2026-05-01T09:00:03Z",
        sha256=digest_of(value),
    )


def packet_text(sources: dict[str, Any]) -> str:
    """A real packet (made by hz) whose ``sources`` are then edited as a file."""
    job = job_reading({"merged": merged(), "notes": NOTES})
    values = {"merged": VALUE, "notes": {"path": "a.md", "text": "a\n"}}
    given = InputSource(given=True, sha256=digest_of(values["notes"]))
    data = make_packet(job, values, "prompt", {"merged": fetched(), "notes": given}).to_json_data()
    data["sources"] = {**data["sources"], **sources}
    return canonical_json({k: v for k, v in data.items() if v is not None})


def test_a_packet_made_by_hz_is_read_back() -> None:
    assert isinstance(parse_artifact(packet_text({}), "p.json"), Packet)


@pytest.mark.parametrize(
    ("edit", "said"),
    [
        (
            {"merged": {**fetched().to_json_data(), "sha256": "0" * 64}},
            "sources.merged: sha256 is not the digest of the input's value",
        ),
        (
            {"extra": {"given": True, "sha256": "1" * 64}},
            "sources.extra: the job reads no input 'extra'",
        ),
        (
            {"merged": {**fetched().to_json_data(), "operation": "tracker.issues_updated"}},
            "sources.merged: the operation, arguments or window differ from the job's read",
        ),
        (
            {"merged": {**fetched().to_json_data(), "args": {"repository": "evil/app"}}},
            "sources.merged: the operation, arguments or window differ from the job's read",
        ),
        (
            {"notes": {"given": True, "sha256": "2" * 64}},
            "sources.notes: sha256 is not the digest of the input's value",
        ),
    ],
)
def test_a_forged_source_is_refused(edit: dict[str, Any], said: str) -> None:
    with pytest.raises(FormatError) as refused:
        parse_artifact(packet_text(edit), "p.json")
    assert refused.value.message == f"p.json: invalid packet: (top level): {said}"


def test_a_read_input_without_a_source_is_refused() -> None:
    data = json.loads(packet_text({}))
    del data["sources"]["merged"]
    with pytest.raises(FormatError) as refused:
        parse_artifact(json.dumps(data), "p.json")
    assert refused.value.message == (
        "p.json: invalid packet: (top level): sources: input 'merged' is read, and the packet "
        "says not where from"
    )
