"""A scripted fake of the OpenAI Responses API, for driving the real ``codex`` CLI offline.

Each test scripts the model's replies, in order; the server answers ``POST /v1/responses``
with Server-Sent Events in the minimal sequence the CLI accepts (``response.created``,
``response.output_item.added``, ``response.output_text.delta``, ``response.output_item.done``,
``response.completed`` with usage) and records every request body, so a test can assert what
the CLI sent (e.g. the output of a shell command it ran for the model).

    with FakeResponses([message("hello")]) as api:
        provider = api.provider_config("FAKE_KEY")   # the `-c` overrides for codex
"""

from __future__ import annotations

import itertools
import json
import os
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import AGENT_CLIS
from tests.fakes.sse_server import JsonSseHandler, LoopbackServer, ScriptServer

_ids = itertools.count(1)
#: The model name the real-CLI tests ask for; the fake answers whatever is asked.
MODEL = "fake-model"


@dataclass(frozen=True)
class Reply:
    """One scripted answer. ``items`` are output items (``message`` / ``function_call``);
    ``status`` other than 200 answers with an API error instead; ``hang_after`` streams that
    many events and then stops sending without closing the connection."""

    items: tuple[dict[str, Any], ...] = ()
    input_tokens: int = 40
    cached_tokens: int = 8
    output_tokens: int = 9
    reasoning_tokens: int = 2
    status: int = 200
    error: dict[str, Any] = field(default_factory=dict)
    headers: tuple[tuple[str, str], ...] = ()
    hang_after: int | None = None


def message(answer: str, *, output_tokens: int = 9) -> Reply:
    item = {
        "type": "message",
        "id": f"msg_{next(_ids):04d}",
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": answer, "annotations": []}],
    }
    return Reply(items=(item,), output_tokens=output_tokens)


def shell(command: str) -> Reply:
    """The model asks the CLI to run ``command`` through its ``exec_command`` tool."""
    item = {
        "type": "function_call",
        "id": f"fc_{next(_ids):04d}",
        "call_id": f"call_{next(_ids):04d}",
        "name": "exec_command",
        "arguments": json.dumps({"cmd": command}),
        "status": "completed",
    }
    return Reply(items=(item,))


def api_error(status: int, code: str, text: str, headers: Sequence[tuple[str, str]] = ()) -> Reply:
    error = {"message": text, "type": code, "code": code, "param": None}
    return Reply(status=status, error=error, headers=tuple(headers))


def hang(after_events: int = 1) -> Reply:
    return Reply(items=message("thinking").items, hang_after=after_events)


@dataclass
class _State:
    replies: list[Reply]
    requests: list[dict[str, Any]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    release: threading.Event = field(default_factory=threading.Event)

    def next_reply(self, body: dict[str, Any]) -> Reply:
        # The last reply repeats: an error stays an error through the CLI's own retries.
        with self.lock:
            self.requests.append(body)
            return self.replies.pop(0) if len(self.replies) > 1 else self.replies[0]


def _events(reply: Reply) -> Iterator[tuple[str, dict[str, Any]]]:
    response_id = f"resp_{next(_ids):04d}"
    yield "response.created", {"response": {"id": response_id, "status": "in_progress"}}
    for index, item in enumerate(reply.items):
        opening = {**item, "content": []} if item["type"] == "message" else item
        yield "response.output_item.added", {"output_index": index, "item": opening}
        for part, content in enumerate(item.get("content", [])):
            yield (
                "response.output_text.delta",
                {
                    "output_index": index,
                    "item_id": item["id"],
                    "content_index": part,
                    "delta": content["text"],
                },
            )
        yield "response.output_item.done", {"output_index": index, "item": item}
    usage = {
        "input_tokens": reply.input_tokens,
        "input_tokens_details": {"cached_tokens": reply.cached_tokens},
        "output_tokens": reply.output_tokens,
        "output_tokens_details": {"reasoning_tokens": reply.reasoning_tokens},
        "total_tokens": reply.input_tokens + reply.output_tokens,
    }
    yield (
        "response.completed",
        {"response": {"id": response_id, "status": "completed", "usage": usage}},
    )


class _Handler(JsonSseHandler):
    server: ScriptServer[_State]

    def do_POST(self) -> None:
        body = self.read_json()
        if self.path.rstrip("/") != "/v1/responses":
            self.send_json(404, {"error": {"message": f"no route {self.path}"}})
            return
        reply = self.server.state.next_reply(body)
        if reply.status != 200:
            self.send_json(reply.status, {"error": reply.error}, reply.headers)
            return
        # The Responses API repeats each event's name as its "type".
        events = ((name, {"type": name, **data}) for name, data in _events(reply))
        self.send_events(events, hang_after=reply.hang_after)

    def do_GET(self) -> None:
        self.send_json(404, {"error": {"message": f"no route {self.path}"}})


class FakeResponses(LoopbackServer[_State]):
    """The server, on 127.0.0.1 and a free port, serving from a background thread.

    ``replies`` are used in order; the last one answers every later request.
    """

    def __init__(self, replies: Sequence[Reply]) -> None:
        if not replies:
            raise ValueError("script at least one reply")
        super().__init__(_Handler, _State(list(replies)))

    @property
    def base_url(self) -> str:
        return f"{self.origin}/v1"

    def provider_config(self, key_env: str, *, name: str = "fake", retries: int = 0) -> list[str]:
        """``codex_config`` entries that point the CLI at this server (key from ``key_env``).

        ``retries`` (default none) so that an error reaches the run at once.
        """
        table = (
            f'{{name="{name}",base_url="{self.base_url}",wire_api="responses",'
            f'env_key="{key_env}",request_max_retries={retries},stream_max_retries={retries}}}'
        )
        return [f'model_provider="{name}"', f"model_providers.{name}={table}"]

    def codex_settings(self, codex: Path | str, **extra: Any) -> dict[str, Any]:
        """The ``[system.runner]`` table that points the real ``codex`` at this server, with
        ``MODEL`` and the key in ``FAKE_KEY`` (passed by ``codex_env``)."""
        return {
            "codex_executable": str(codex),
            "codex_config": self.provider_config("FAKE_KEY"),
            "codex_env": ["FAKE_KEY"],
            "model": MODEL,
            **extra,
        }

    def codex_operator_file(self, runner: str, codex: Path | str) -> str:
        """An operator configuration binding ``runner`` with ``codex_settings``."""
        lines = [
            f"{key} = {json.dumps(value)}" for key, value in self.codex_settings(codex).items()
        ]
        return f'[capabilities]\nagent_runner = "{runner}"\n\n[system.runner]\n' + "\n".join(
            [*lines, ""]
        )

    def __enter__(self) -> FakeResponses:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def function_outputs(requests: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every ``function_call_output`` input item the CLI sent back, from any request."""
    found: list[dict[str, Any]] = []
    for body in requests:
        found.extend(
            item
            for item in body.get("input", [])
            if isinstance(item, dict) and item.get("type") == "function_call_output"
        )
    return found


INSTALL_HINT = (
    "the pinned codex CLI is not installed: run `make agent-clis` "
    "(or .ci/install-agent-clis DIR and set HZ_AGENT_CLIS=DIR)"
)


def codex_binary() -> Path:
    """The pinned ``codex`` this fake is written for; a loud failure in CI when it is
    missing, a skip elsewhere."""
    path = AGENT_CLIS / "node_modules" / ".bin" / "codex"
    if path.is_file() and os.access(path, os.X_OK):
        return path
    if os.environ.get("CI"):
        pytest.fail(f"{INSTALL_HINT} (looked for {path})")
    pytest.skip(f"{INSTALL_HINT} (looked for {path})")
