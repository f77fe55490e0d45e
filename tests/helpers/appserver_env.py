"""The scripted fake ``codex app-server`` (tests/fakes/fake_appserver.py) as the tests drive
it: an executable that runs a script of lines, and the messages the scripts are made of."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

FAKE = Path(__file__).resolve().parent.parent / "fakes" / "fake_appserver.py"
THREAD = "thr_1"
TURN = "turn_1"

INITIALIZE = [{"id": "$id", "result": {"userAgent": "fake"}}]
THREAD_START = [{"id": "$id", "result": {"thread": {"id": THREAD}}}]


def turn(status: str, error: dict[str, Any] | None = None) -> dict[str, Any]:
    return {
        "method": "turn/completed",
        "params": {"threadId": THREAD, "turn": {"id": TURN, "status": status, "error": error}},
    }


def answer(text: str) -> dict[str, Any]:
    item = {"type": "agentMessage", "id": "msg_1", "text": text}
    return {"method": "item/completed", "params": {"threadId": THREAD, "item": item}}


USAGE = {
    "method": "thread/tokenUsage/updated",
    "params": {
        "threadId": THREAD,
        "turnId": TURN,
        "tokenUsage": {
            "total": {
                "inputTokens": 100,
                "cachedInputTokens": 30,
                "outputTokens": 7,
                "reasoningOutputTokens": 2,
                "totalTokens": 107,
            },
            "last": {},
        },
    },
}
TURN_STARTED = [{"id": "$id", "result": {"turn": {"id": TURN, "status": "inProgress"}}}]


def fake(tmp_path: Path, turn_start: list[Any], **more: list[Any]) -> tuple[Path, Path]:
    """An executable fake server with this script for ``turn/start``, and its record."""
    script = tmp_path / "script.json"
    script.write_text(
        json.dumps(
            {
                "initialize": INITIALIZE,
                "thread/start": THREAD_START,
                "turn/start": turn_start,
                **{k.replace("_", "/"): v for k, v in more.items()},
            }
        )
    )
    record = tmp_path / "record.jsonl"
    program = tmp_path / "codex"
    program.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{FAKE}" "{script}" "{record}"\n')
    program.chmod(0o755)
    return program, record


def flood(count: int, line: dict[str, Any], pad: int = 0) -> dict[str, Any]:
    return {"@repeat": count, "line": line, "pad": pad}


def command_item(ident: str, command: str) -> dict[str, Any]:
    item = {"type": "commandExecution", "id": ident, "command": command, "status": "completed"}
    return {"method": "item/completed", "params": {"threadId": THREAD, "item": item}}
