"""A scripted fake of the Anthropic Messages API, for driving the real ``claude`` CLI offline.

Each test scripts the model's replies, in order; the server answers ``POST /v1/messages`` with
Server-Sent Events exactly as the real API streams them and records every request body, so a
test can assert what the CLI sent (e.g. that a ``tool_result`` carried a file's text).

    with FakeAnthropic([text("hello")]) as api:
        env = {"ANTHROPIC_BASE_URL": api.url, "ANTHROPIC_API_KEY": "test-key"}
"""

from __future__ import annotations

import itertools
import json
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from tests.fakes.sse_server import JsonSseHandler, LoopbackServer, ScriptServer

MODEL = "claude-fake-1"


@dataclass(frozen=True)
class Reply:
    """One scripted answer. ``blocks`` are content blocks (``text`` / ``tool_use``);
    ``status`` other than 200 answers with an API error instead; ``hang_after`` streams that
    many events and then stops sending without closing the connection."""

    blocks: tuple[dict[str, Any], ...] = ()
    stop_reason: str = "end_turn"
    input_tokens: int = 12
    output_tokens: int = 7
    status: int = 200
    error_type: str = ""
    error_message: str = ""
    headers: tuple[tuple[str, str], ...] = ()
    hang_after: int | None = None


def text(answer: str, *, output_tokens: int = 7) -> Reply:
    return Reply(blocks=({"type": "text", "text": answer},), output_tokens=output_tokens)


_ids = itertools.count(1)


def tool_use(name: str, tool_input: dict[str, Any], *, output_tokens: int = 7) -> Reply:
    block = {"type": "tool_use", "id": f"toolu_{next(_ids):04d}", "name": name, "input": tool_input}
    return Reply(blocks=(block,), stop_reason="tool_use", output_tokens=output_tokens)


def api_error(
    status: int, error_type: str, message: str, headers: Sequence[tuple[str, str]] = ()
) -> Reply:
    return Reply(
        status=status, error_type=error_type, error_message=message, headers=tuple(headers)
    )


def hang(after_events: int = 2) -> Reply:
    return Reply(blocks=({"type": "text", "text": "thinking"},), hang_after=after_events)


@dataclass
class _State:
    replies: list[Reply]
    repeat_last: bool
    requests: list[dict[str, Any]] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    release: threading.Event = field(default_factory=threading.Event)

    def next_reply(self, body: dict[str, Any], path: str) -> Reply:
        with self.lock:
            self.requests.append(body)
            self.paths.append(path)
            if self.repeat_last and len(self.replies) == 1:
                return self.replies[0]
            if not self.replies:
                return api_error(500, "api_error", "the fake model's script is exhausted")
            return self.replies.pop(0)


def _events(reply: Reply) -> Iterator[tuple[str, dict[str, Any]]]:
    message = {
        "id": f"msg_{next(_ids):04d}",
        "type": "message",
        "role": "assistant",
        "model": MODEL,
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {"input_tokens": reply.input_tokens, "output_tokens": 1},
    }
    yield "message_start", {"type": "message_start", "message": message}
    for index, block in enumerate(reply.blocks):
        if block["type"] == "tool_use":
            start = {**block, "input": {}}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
        else:
            start = {"type": "text", "text": ""}
            delta = {"type": "text_delta", "text": block["text"]}
        yield (
            "content_block_start",
            {
                "type": "content_block_start",
                "index": index,
                "content_block": start,
            },
        )
        yield "content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta}
        yield "content_block_stop", {"type": "content_block_stop", "index": index}
    yield (
        "message_delta",
        {
            "type": "message_delta",
            "delta": {"stop_reason": reply.stop_reason, "stop_sequence": None},
            "usage": {"output_tokens": reply.output_tokens},
        },
    )
    yield "message_stop", {"type": "message_stop"}


class _Handler(JsonSseHandler):
    server: ScriptServer[_State]

    def do_POST(self) -> None:
        body = self.read_json()
        if not self.path.startswith("/v1/messages") or self.path.startswith("/v1/messages/"):
            # count_tokens and friends: not part of any script.
            self.send_json(404, {"type": "error", "error": {"type": "not_found_error"}})
            return
        reply = self.server.state.next_reply(body, self.path)
        if reply.status != 200:
            error = {"type": reply.error_type, "message": reply.error_message}
            self.send_json(reply.status, {"type": "error", "error": error}, reply.headers)
            return
        self.send_events(_events(reply), hang_after=reply.hang_after, headers=reply.headers)

    def do_GET(self) -> None:
        self.send_json(404, {"type": "error", "error": {"type": "not_found_error"}})


class FakeAnthropic(LoopbackServer[_State]):
    """The server, on 127.0.0.1 and a free port, serving from a background thread.

    ``replies`` are used in order; with ``repeat_last`` the last one answers forever (a model
    that never stops calling tools). A request past the script gets an HTTP 500.
    """

    def __init__(self, replies: Sequence[Reply], *, repeat_last: bool = False) -> None:
        super().__init__(_Handler, _State(list(replies), repeat_last))

    @property
    def url(self) -> str:
        return self.origin

    def __enter__(self) -> FakeAnthropic:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def tool_results(requests: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every ``tool_result`` block the CLI sent, from any message of any request."""
    found: list[dict[str, Any]] = []
    for body in requests:
        for message in body.get("messages", []):
            content = message.get("content")
            if isinstance(content, list):
                found.extend(
                    b for b in content if isinstance(b, dict) and b.get("type") == "tool_result"
                )
    return found
