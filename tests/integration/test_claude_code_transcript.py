"""The real ``claude`` CLI against the scripted fake model: the run's transcript holds what
the agent did, and a secret of hz's environment that was never passed appears nowhere, even
when the agent reads its own environment."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.fakes.anthropic_server import FakeAnthropic, text, tool_results, tool_use
from tests.fakes.claude_hz import Workspace, hz_run, workspace

pytestmark = pytest.mark.real_cli

PLANTED = "planted-secret-c0ffee42d00d"


@pytest.fixture
def space(tmp_path: Path) -> Workspace:
    return workspace(tmp_path)


def test_an_agent_reading_its_environment_leaks_no_secret_of_hz(
    hz_argv: list[str], space: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GITHUB_TOKEN", PLANTED)
    monkeypatch.setenv("PLAIN_VALUE", PLANTED)
    replies = [tool_use("Read", {"file_path": "/proc/self/environ"}), text(f"env: {PLANTED}?")]
    with FakeAnthropic(replies) as api:
        run = hz_run(hz_argv, space, api)
    assert run.result["status"] == "completed", run.stderr
    receipts = space.tmp / "receipts"
    [transcript] = receipts.glob("*.transcript.jsonl")
    header, *events = (json.loads(line) for line in transcript.read_text().splitlines())
    assert header["runner"] == "claude-code"
    assert [(e["type"], e.get("name")) for e in events[:2]] == [
        ("tool_call", "Read"),
        ("tool_result", "Read"),
    ]
    # The CLI refuses to read a process file; either way the planted value never reached it.
    assert events[1]["is_error"] is True
    assert "/proc/self/environ" in events[1]["text"]
    [sent] = tool_results(api.requests)
    assert PLANTED not in json.dumps(sent)
    # The model itself wrote the planted value (it is scripted to): redacted by name.
    message = next(e for e in events if e["type"] == "message")
    assert message["text"] == "env: [redacted GITHUB_TOKEN]?"
    assert [e["type"] for e in events].count("usage") == 2
    for path in receipts.iterdir():
        if path.is_file():
            assert PLANTED not in path.read_text(), path.name
