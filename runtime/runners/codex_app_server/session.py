"""One conversation with ``codex app-server``: initialize, an ephemeral thread, one turn.

``initialize`` → ``initialized`` → ``thread/start`` (ephemeral, read-only sandbox, approval
policy never, the contract as the thread's base instructions) → ``turn/start`` (the prompt) →
notifications until ``turn/completed``. Between a request and its response the server's
notifications are read into the ``Turn`` and its requests answered: approval requests are
declined (never approved) and counted, a question to the user gets no answer, anything else is
refused with a JSON-RPC error.

How it ends is decided by what hz observed, with the phase it was in:

- ``starting`` (spawn, ``initialize``, ``thread/start``): an ephemeral thread runs no tool and
  writes no file, so a cancellation there is ``cancelled``.
- ``requested`` (``turn/start`` written, no turn id yet): the request may already be running
  and there is no id to interrupt, so a cancellation, a malformed line or the server's end is
  ``uncertain``.
- ``running`` (the turn id is known, from the response or ``turn/started``): a cancellation or
  hz's timeout sends ``turn/interrupt`` for that turn and waits for its ``turn/completed``
  (status ``interrupted``, with usage), both within the write ceiling; then the group is
  stopped. A malformed line or the server's end is ``uncertain``.

A cancellation is hz's cancel token, seen while hz waits on the server (``Interactive`` raises
``Cancelled`` at the read), or the first ``BaseException`` that is no ``Exception``
(``KeyboardInterrupt``) raised while it waits.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from hz import __version__
from hz.runtime.process.cancel import Cancelled
from hz.runtime.process.interactive import Interactive
from hz.runtime.runners.codex.fields import as_dict as _dict
from hz.runtime.runners.codex.fields import as_str as _str
from hz.runtime.runners.codex_app_server import rpc
from hz.runtime.runners.codex_app_server.turn import Turn

Phase = Literal["starting", "requested", "running"]
#: How the conversation ended, before it is mapped onto a result.
Ending = Literal[
    "completed",  # turn/completed arrived (whatever its status)
    "cancelled",
    "timeout",
    "protocol_error",  # a line that is no JSON-RPC message
    "exited",  # stdout ended before turn/completed
    "rpc_error",  # an error response to hz's request
    "unwritable",  # the server did not take a line within the write ceiling
]

#: Deltas hz does not read: the items they build arrive whole in ``item/completed``.
_OPTED_OUT = (
    "item/agentMessage/delta",
    "item/commandExecution/outputDelta",
    "item/fileChange/outputDelta",
    "item/reasoning/textDelta",
    "item/reasoning/summaryTextDelta",
    "item/reasoning/summaryPartAdded",
    "item/plan/delta",
)
#: Server requests that ask for more than the session has, and the answer that declines.
DECLINES: dict[str, dict[str, Any]] = {
    "item/commandExecution/requestApproval": {"decision": "decline"},
    "item/fileChange/requestApproval": {"decision": "decline"},
    "item/permissions/requestApproval": {"permissions": {}, "scope": "turn"},
    "execCommandApproval": {"decision": "denied"},
    "applyPatchApproval": {"decision": "denied"},
    "mcpServer/elicitation/request": {"action": "decline"},
    "item/tool/requestUserInput": {"answers": {}},
}
_METHOD_NOT_FOUND = -32601


@dataclass
class Conversation:
    """What happened; ``ending``, ``phase`` and ``detail`` decide the result."""

    turn: Turn = field(default_factory=Turn)
    phase: Phase = "starting"
    ending: Ending | None = None
    detail: str | None = None
    #: ``turn/interrupt`` was sent; ``interrupt_settled``: its ``turn/completed`` arrived.
    interrupted: bool = False
    interrupt_settled: bool = False
    #: The cancelling exception's name (``SIGINT``, ``SIGTERM``, ...).
    cancel_signal: str | None = None
    declined: Counter[str] = field(default_factory=Counter)
    malformed: int = 0
    #: Lines longer than the output cap: cut by ``Interactive``, skipped unread.
    long_lines: int = 0


class _End(Exception):
    def __init__(self, ending: Ending, detail: str) -> None:
        super().__init__(detail)
        self.ending: Ending = ending
        self.detail = detail


class _Deadline(Exception):
    pass


def _signal_name(e: BaseException) -> str:
    if isinstance(e, KeyboardInterrupt):
        return "SIGINT"
    name = getattr(e, "signal_name", None)
    return name if isinstance(name, str) else type(e).__name__


class Session:
    """Drives one ``Interactive`` child until ``turn/completed``, a cancellation or the
    deadline (``time.monotonic()``)."""

    def __init__(
        self,
        proc: Interactive,
        deadline: float,
        on_change: Callable[[Conversation], None] | None = None,
    ) -> None:
        self.proc = proc
        self.deadline = deadline
        self.on_change = on_change
        self.talk = Conversation()
        self._next_id = 0

    def run(self, thread_params: dict[str, Any], turn_params: dict[str, Any]) -> Conversation:
        talk = self.talk
        try:
            self._converse(thread_params, turn_params)
        except _Deadline:
            self._stop_turn("timeout")
        except _End as end:
            talk.ending, talk.detail = end.ending, end.detail
        except Cancelled as e:  # hz's cancel token, polled where it reads
            talk.cancel_signal = e.signal_name
            self._stop_turn("cancelled")
        except Exception:
            raise
        except BaseException as e:  # a cancellation raised into it (KeyboardInterrupt)
            talk.cancel_signal = _signal_name(e)
            self._stop_turn("cancelled")
        return talk

    def _converse(self, thread_params: dict[str, Any], turn_params: dict[str, Any]) -> None:
        talk = self.talk
        self._call(
            "initialize",
            {
                "clientInfo": {"name": "hz", "title": "hz", "version": __version__},
                "capabilities": {"experimentalApi": False, "optOutNotificationMethods": _OPTED_OUT},
            },
        )
        self._write(rpc.notification("initialized"))
        thread = self._call("thread/start", thread_params)
        thread_id = _str(_dict(thread.get("thread")).get("id"))
        if thread_id is None:
            raise _End("protocol_error", "thread/start answered without a thread id")
        talk.turn.thread_id = thread_id
        talk.phase = "requested"
        started = self._call("turn/start", {"threadId": thread_id, **turn_params})
        talk.turn.turn_id = talk.turn.turn_id or _str(_dict(started.get("turn")).get("id"))
        if talk.turn.turn_id is None:
            raise _End("protocol_error", "turn/start answered without a turn id")
        self._running()
        while not talk.turn.completed:
            self._read_one(self.deadline)
        talk.ending = "completed"

    def _running(self) -> None:
        if self.talk.phase != "running" and self.talk.turn.turn_id is not None:
            self.talk.phase = "running"
            self._changed()

    def _changed(self) -> None:
        if self.on_change is not None:
            self.on_change(self.talk)

    def _write(self, line: bytes) -> None:
        if not self.proc.write_line(line):
            raise _End(
                "unwritable",
                f"codex app-server did not take a request within {self.proc.ceilings.write:g} s",
            )

    def _call(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        self._next_id += 1
        ident = self._next_id
        self._write(rpc.request(ident, method, params))
        while True:
            message = self._read_one(self.deadline)
            if isinstance(message, rpc.Response) and message.id == ident:
                if message.error is not None:
                    raise _End("rpc_error", f"{method}: {rpc.error_message(message.error)}")
                return message.result or {}

    def _read_one(self, until: float) -> rpc.Message | None:
        """Read and handle one message; ``_Deadline`` at ``until`` (hz's deadline)."""
        line = self.proc.read_line(until)
        if line is None:
            if self.proc.eof:
                raise _End("exited", "codex app-server ended its output before turn/completed")
            raise _Deadline
        if self.proc.last_line_cut:
            self.talk.long_lines += 1  # not JSON once cut: whatever it said is lost
            return None
        if not line.strip():
            return None
        message = rpc.parse(line)
        if isinstance(message, rpc.Malformed):
            self.talk.malformed += 1
            raise _End("protocol_error", f"a malformed line from codex app-server: {message.why}")
        if isinstance(message, rpc.Notification):
            before = (len(self.talk.turn.kept), self.talk.turn.turn_id)
            self.talk.turn.feed(message)
            self._running()
            if (len(self.talk.turn.kept), self.talk.turn.turn_id) != before:
                self._changed()
        elif isinstance(message, rpc.ServerRequest):
            self._decline(message)
        return message

    def _decline(self, request: rpc.ServerRequest) -> None:
        self.talk.turn.kept.count(self.talk.declined, request.method)
        answer = DECLINES.get(request.method)
        if answer is not None:
            self._write(rpc.reply(request.id, answer))
        else:
            self._write(
                rpc.error_reply(
                    request.id, _METHOD_NOT_FOUND, f"hz does not serve {request.method}"
                )
            )

    def _stop_turn(self, why: Literal["cancelled", "timeout"]) -> None:
        """Cancellation or timeout: interrupt the turn when its id is known, within
        the write ceiling for the request and its ``turn/completed`` together."""
        talk = self.talk
        talk.ending = why
        if talk.phase != "running" or talk.turn.completed:
            return
        thread_id, turn_id = talk.turn.thread_id, talk.turn.turn_id
        until = time.monotonic() + self.proc.ceilings.write
        try:
            self._next_id += 1
            params = {"threadId": thread_id, "turnId": turn_id}
            talk.interrupted = self.proc.write_line(
                rpc.request(self._next_id, "turn/interrupt", params)
            )
            while talk.interrupted and not talk.turn.completed and time.monotonic() < until:
                self._read_one(until)
            talk.interrupt_settled = talk.turn.completed
        except (_End, _Deadline):
            return  # the group is stopped next either way
        except Exception:
            raise
        except BaseException:  # a further signal: stop waiting, the kill follows
            return
