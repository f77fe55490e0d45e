"""JSON-RPC 2.0 lines of ``codex app-server`` (stdio transport): one JSON object a line.

The server omits ``"jsonrpc"`` in what it sends; hz accepts either. A line is one of:

- a response to hz's request: ``id`` and ``result`` or ``error`` (``code``, ``message``);
- a notification: ``method`` and ``params``, no ``id``;
- a request from the server (an approval, a question): ``id``, ``method`` and ``params``.

Anything else — not JSON, not an object, or an object that is none of these — is
``Malformed``: a protocol error, decided by the caller according to the phase it arrived in.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from hz.runtime.artifacts import strict_json

RequestId = int | str


@dataclass(frozen=True, slots=True)
class Response:
    id: RequestId
    result: dict[str, Any] | None
    #: The server's error object (``code``, ``message``), verbatim.
    error: dict[str, Any] | None


@dataclass(frozen=True, slots=True)
class Notification:
    method: str
    params: dict[str, Any]


@dataclass(frozen=True, slots=True)
class ServerRequest:
    id: RequestId
    method: str
    params: dict[str, Any]


@dataclass(frozen=True, slots=True)
class Malformed:
    why: str


Message = Response | Notification | ServerRequest | Malformed


def _id(value: object) -> RequestId | None:
    if isinstance(value, bool):
        return None
    return value if isinstance(value, int | str) else None


def _params(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def parse(line: bytes) -> Message:
    """One line from the server as a message; never raises."""
    try:
        data = strict_json.loads(line, lone_surrogates="replace")
    except strict_json.JsonError as e:
        return Malformed(f"not JSON: {e.msg}")
    if not isinstance(data, dict):
        return Malformed(f"not a JSON object: {type(data).__name__}")
    method, ident = data.get("method"), _id(data.get("id"))
    if isinstance(method, str):
        if "id" in data:
            if ident is None:
                return Malformed(f"request {method!r} with an invalid id")
            return ServerRequest(ident, method, _params(data.get("params")))
        return Notification(method, _params(data.get("params")))
    if ident is not None and ("result" in data or "error" in data):
        result, error = data.get("result"), data.get("error")
        if error is not None:
            return Response(ident, None, error if isinstance(error, dict) else {"message": error})
        if not isinstance(result, dict):
            return Malformed(f"response {ident!r} whose result is not an object")
        return Response(ident, result, None)
    return Malformed("neither a response, a notification nor a request")


def _line(message: dict[str, Any]) -> bytes:
    return json.dumps({"jsonrpc": "2.0", **message}, ensure_ascii=False).encode("utf-8")


def request(ident: int, method: str, params: dict[str, Any]) -> bytes:
    return _line({"id": ident, "method": method, "params": params})


def notification(method: str) -> bytes:
    return _line({"method": method})


def reply(ident: RequestId, result: dict[str, Any]) -> bytes:
    return _line({"id": ident, "result": result})


def error_reply(ident: RequestId, code: int, message: str) -> bytes:
    return _line({"id": ident, "error": {"code": code, "message": message}})


def error_message(error: dict[str, Any]) -> str:
    """The server's words for an error response, verbatim (with its code when it has one)."""
    message = error.get("message")
    text = message if isinstance(message, str) else json.dumps(error, ensure_ascii=False)
    code = error.get("code")
    return f"{text} (code {code})" if isinstance(code, int) else text
