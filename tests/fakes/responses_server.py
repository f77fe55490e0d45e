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
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import AGENT_CLIS

_ids = itertools.count(1)


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


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:  # the CLI's traffic is not news
        pass

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length)
        try:
            body = json.loads(raw or b"{}")
        except json.JSONDecodeError:
            body = {"_unparsed": raw.decode("utf-8", "replace")}
        if self.path.rstrip("/") != "/v1/responses":
            self._send_json(404, {"error": {"message": f"no route {self.path}"}})
            return
        reply = self.server.state.next_reply(body)
        if reply.status != 200:
            self._send_json(reply.status, {"error": reply.error}, reply.headers)
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True
        for count, (name, data) in enumerate(_events(reply)):
            if reply.hang_after is not None and count >= reply.hang_after:
                self.wfile.flush()
                self.server.state.release.wait()  # until the test's server closes
                return
            payload = json.dumps({"type": name, **data})
            self.wfile.write(f"event: {name}\ndata: {payload}\n\n".encode())
            self.wfile.flush()

    def do_GET(self) -> None:
        self._send_json(404, {"error": {"message": f"no route {self.path}"}})

    def _send_json(
        self, status: int, data: dict[str, Any], headers: Sequence[tuple[str, str]] = ()
    ) -> None:
        payload = json.dumps(data).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        for name, value in headers:
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(payload)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    state: _State


class FakeResponses:
    """The server, on 127.0.0.1 and a free port, serving from a background thread.

    ``replies`` are used in order; the last one answers every later request.
    """

    def __init__(self, replies: Sequence[Reply]) -> None:
        if not replies:
            raise ValueError("script at least one reply")
        self._server = _Server(("127.0.0.1", 0), _Handler)
        self._server.state = _State(list(replies))
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    @property
    def requests(self) -> list[dict[str, Any]]:
        with self._server.state.lock:
            return list(self._server.state.requests)

    def provider_config(self, key_env: str, *, name: str = "fake", retries: int = 0) -> list[str]:
        """``codex_config`` entries that point the CLI at this server (key from ``key_env``).

        ``retries`` (default none) so that an error reaches the run at once.
        """
        table = (
            f'{{name="{name}",base_url="{self.base_url}",wire_api="responses",'
            f'env_key="{key_env}",request_max_retries={retries},stream_max_retries={retries}}}'
        )
        return [f'model_provider="{name}"', f"model_providers.{name}={table}"]

    def __enter__(self) -> FakeResponses:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.state.release.set()
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=10)


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
