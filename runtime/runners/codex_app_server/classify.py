"""Maps how a conversation with ``codex app-server`` ended onto hz's statuses.

Decided from what hz observed and from the server's typed fields, never from text:

- ``turn/completed`` with ``status: "completed"`` and an answer: ``completed``.
- ``status: "failed"``: ``permission_denied`` only with ``codexErrorInfo: "sandboxError"``;
  ``rate_limited`` / ``auth_misconfigured`` from the typed ``rateLimitExceeded`` /
  ``usageLimitExceeded`` / ``unauthorized`` (or an HTTP status in ``httpConnectionFailed`` and
  its kin); anything else ``runtime_error``. The reason is the server's message, verbatim.
- A cancellation: ``cancelled`` before ``turn/start`` was written and once the turn id was
  known (the turn is interrupted); ``uncertain`` in between.
- hz's timeout: ``timeout`` (the turn interrupted when its id was known); ``timeout`` /
  ``rate_limited`` when the server was waiting to retry after HTTP 429 (its last ``error``
  notification with ``willRetry``, typed), its notice quoted in the reason.
- A line longer than the output cap is skipped (counted); a turn that completed without an
  answer after one: ``failed`` / ``output_limit``.
- A malformed line, or the server's end before ``turn/completed``: ``failed`` /
  ``protocol_error`` while starting, ``uncertain`` / ``protocol_error`` once the turn may run.
"""

from __future__ import annotations

from typing import Any

from hz.runtime.artifacts.result import FailureKind
from hz.runtime.process.limits import MAX_OUTPUT
from hz.runtime.runners.codex_app_server.session import Conversation
from hz.runtime.runners.outcome import Verdict

#: The note (and the words of a reason) for lines cut at the output cap, skipped unread.
LONG_LINES = f"lines over the output cap ({MAX_OUTPUT // (1024 * 1024)} MiB), skipped"
_RATE = frozenset({"rateLimitExceeded", "usageLimitExceeded"})
_AUTH = frozenset({"unauthorized"})
_HTTP_KEYS = (
    "httpConnectionFailed",
    "responseStreamConnectionFailed",
    "responseStreamDisconnected",
    "responseTooManyFailedAttempts",
)


def _typed_kind(info: Any) -> FailureKind:
    if isinstance(info, str):
        if info == "sandboxError":
            return "permission_denied"
        if info in _RATE:
            return "rate_limited"
        return "auth_misconfigured" if info in _AUTH else "runtime_error"
    for key in _HTTP_KEYS:
        details = info.get(key) if isinstance(info, dict) else None
        status = details.get("httpStatusCode") if isinstance(details, dict) else None
        if status == 429:
            return "rate_limited"
        if status in (401, 403):
            return "auth_misconfigured"
    return "runtime_error"


def _waiting_to_retry(turn: Any, ending: str) -> Verdict:
    """Timed out while the server waited to retry: a ``rate_limited`` failure when its typed
    ``codexErrorInfo`` says HTTP 429 (as the other runners say it), else a timeout; the reason
    quotes its notice."""
    limited = _typed_kind(turn.retry_info) == "rate_limited"
    after = " after HTTP 429" if limited else ""
    reason = f"{ending} while the CLI waited to retry{after}; its last notice: {turn.retry_notice}"
    if limited:
        return Verdict("failed", "rate_limited", reason)
    return Verdict("timeout", None, reason)


def _failed_turn(talk: Conversation) -> Verdict:
    info = talk.turn.error.get("codexErrorInfo")
    message = talk.turn.error_message() or (talk.turn.errors[-1] if talk.turn.errors else None)
    return Verdict("failed", _typed_kind(info), message or "the turn failed without a message")


def _cancelled(talk: Conversation, what: str) -> Verdict:
    if talk.phase == "requested":
        return Verdict(
            "uncertain",
            "aborted",
            f"{what} while turn/start was outstanding: the turn may have started, and there "
            "was no turn id to interrupt",
        )
    if talk.phase == "starting":
        return Verdict("cancelled", "aborted", f"{what} before the turn started")
    settled = "interrupted" if talk.interrupt_settled else "interrupt not confirmed, killed"
    return Verdict("cancelled", "aborted", f"{what} during the turn ({settled})")


def classify(talk: Conversation, *, timeout_seconds: float) -> Verdict:
    turn = talk.turn
    if talk.ending == "cancelled":
        return _cancelled(talk, f"cancelled ({talk.cancel_signal or 'interrupt'})")
    if talk.ending == "timeout":
        verdict = _cancelled(talk, f"timed out after {timeout_seconds:g} s")
        if verdict.status == "uncertain":
            return verdict
        if turn.retry_pending and turn.retry_notice:
            return _waiting_to_retry(turn, verdict.reason or "timed out")
        return Verdict("timeout", None, verdict.reason)
    if talk.ending == "completed":
        if turn.status == "failed":
            return _failed_turn(talk)
        if turn.status != "completed":
            return Verdict("failed", "runtime_error", f"the turn ended {turn.status}")
        if not turn.final_message and talk.long_lines:
            return Verdict(
                "failed",
                "output_limit",
                f"the turn completed without an answer hz could read; {LONG_LINES}: "
                f"{talk.long_lines}",
            )
        if not turn.final_message:
            return Verdict("failed", "runtime_error", "the turn completed without an answer")
        return Verdict("completed")
    detail = talk.detail or "codex app-server stopped answering"
    if talk.ending == "rpc_error":
        return Verdict("failed", "runtime_error", detail)
    if talk.phase == "starting":
        kind: FailureKind = "protocol_error" if talk.ending == "protocol_error" else "runtime_error"
        return Verdict("failed", kind, detail)
    return Verdict("uncertain", "protocol_error", detail)
