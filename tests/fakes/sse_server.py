"""What the fake model APIs share: a threaded HTTP server on 127.0.0.1 and a free port that
records request bodies and streams scripted Server-Sent Events.

Each fake (``anthropic_server``, ``responses_server``) supplies its own handler: which path it
serves, which reply comes next, and how a reply becomes events.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterable, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Generic, Protocol, TypeVar


class Recorder(Protocol):
    lock: threading.Lock
    requests: list[dict[str, Any]]
    #: Set when the server closes: a reply that hangs mid-stream waits on it.
    release: threading.Event


StateT = TypeVar("StateT", bound=Recorder)


class ScriptServer(ThreadingHTTPServer, Generic[StateT]):
    daemon_threads = True
    state: StateT


class JsonSseHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: ScriptServer[Any]

    def log_message(self, format: str, *args: Any) -> None:  # the CLI's traffic is not news
        pass

    def read_json(self) -> dict[str, Any]:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length)
        try:
            body = json.loads(raw or b"{}")
        except json.JSONDecodeError:
            return {"_unparsed": raw.decode("utf-8", "replace")}
        return body if isinstance(body, dict) else {"_unparsed": body}

    def send_json(
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

    def send_events(
        self,
        events: Iterable[tuple[str, dict[str, Any]]],
        *,
        hang_after: int | None = None,
        headers: Sequence[tuple[str, str]] = (),
    ) -> None:
        """An event stream; with ``hang_after`` it stops sending after that many events and
        holds the connection open until the server closes (an API hanging mid-stream)."""
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        for name, value in headers:
            self.send_header(name, value)
        self.end_headers()
        self.close_connection = True
        for count, (name, data) in enumerate(events):
            if hang_after is not None and count >= hang_after:
                self.wfile.flush()
                self.server.state.release.wait()
                return
            self.wfile.write(f"event: {name}\ndata: {json.dumps(data)}\n\n".encode())
            self.wfile.flush()


class LoopbackServer(Generic[StateT]):
    """Serves ``handler`` with ``state`` from a background thread while in a ``with`` block."""

    def __init__(self, handler: type[JsonSseHandler], state: StateT) -> None:
        self._server: ScriptServer[StateT] = ScriptServer(("127.0.0.1", 0), handler)
        self._server.state = state
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def origin(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    @property
    def state(self) -> StateT:
        return self._server.state

    @property
    def requests(self) -> list[dict[str, Any]]:
        with self._server.state.lock:
            return list(self._server.state.requests)

    def start(self) -> None:
        self._thread.start()

    def close(self) -> None:
        self._server.state.release.set()
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=10)
