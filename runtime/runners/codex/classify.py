"""Maps how a ``codex exec --json`` run ended onto hz's statuses and failure kinds.

Success needs the CLI's ``turn.completed``; nothing else counts, not even exit code 0. A
failed turn is classified from the CLI's own error line, never from the model's text. The
pinned CLI (0.171.0) puts no typed code on ``turn.failed``, only a message it formats itself:
``exceeded retry limit, last status: 429 Too Many Requests`` or ``unexpected status 401
Unauthorized: …``; the HTTP status is read from exactly those two forms. A tool item the CLI
marks ``status: "declined"`` on a failed turn is a permission refusal. The table is documented
in docs/runners/codex.md.
"""

from __future__ import annotations

import re

from hz.runtime.artifacts.result import FailureKind
from hz.runtime.runners.codex.events import CodexStream
from hz.runtime.runners.outcome import RunEnd, Verdict

#: The two ways the CLI words an HTTP failure of the model API.
_HTTP_STATUS = re.compile(r"^(?:exceeded retry limit, last status: |unexpected status )(\d{3})\b")
#: What the CLI says for a 429 whose code is ``insufficient_quota`` (no status in the text).
_QUOTA = "Quota exceeded."
#: A retry notice: ``Reconnecting... 1/5 (exceeded retry limit, last status: 429 Too Many
#: Requests)``; the part in parentheses is the CLI's message of the failure it retries.
_NOTICE = re.compile(r"^Reconnecting\.\.\. [0-9]+/[0-9]+ \((.*)\)$")


def http_status(message: str) -> int | None:
    match = _HTTP_STATUS.match(message)
    return int(match.group(1)) if match else None


def _failure_kind(message: str, stream: CodexStream) -> FailureKind:
    if stream.declined:
        return "permission_denied"
    status = http_status(message)
    if status == 429 or message.startswith(_QUOTA):
        return "rate_limited"
    if status in (401, 403):
        return "auth_misconfigured"
    return "runtime_error"


def waiting_to_retry(notice: str, ending: str) -> tuple[FailureKind | None, str]:
    """A run that ended (``ending``: "timed out after 6 s") while the CLI waited to retry: its
    failure kind (``rate_limited`` after HTTP 429) and a reason that quotes the CLI's notice."""
    match = _NOTICE.match(notice)
    limited = match is not None and http_status(match.group(1)) == 429
    after = " after HTTP 429" if limited else ""
    reason = f"{ending} while the CLI waited to retry{after}; its last notice: {notice}"
    return ("rate_limited" if limited else None), reason


def classify(stream: CodexStream, end: RunEnd) -> Verdict:
    if end.launch_error is not None:
        return Verdict("failed", "launch_failed", f"codex did not start: {end.launch_error}")
    if stream.turn_failed is not None:
        return Verdict("failed", _failure_kind(stream.turn_failed, stream), stream.turn_failed)
    if stream.turn_completed:
        if end.exit_code not in (0, None) and not end.finished_after_done:
            return Verdict(
                "failed", "runtime_error", f"codex {end.describe_exit} after turn.completed"
            )
        if not stream.final_message:
            return Verdict("failed", "runtime_error", "the turn completed without an answer")
        return Verdict("completed")
    if end.timed_out and stream.retry_pending and stream.retry_notice:
        kind, reason = waiting_to_retry(
            stream.retry_notice, f"timed out after {end.timeout_seconds:g} s"
        )
        # Waiting out HTTP 429 is a rate-limited failure (as the claude runner says it); a
        # retry of anything else that hz's timeout cut short stays a timeout.
        return Verdict("failed" if kind == "rate_limited" else "timeout", kind, reason)
    if end.timed_out:
        return Verdict("timeout", None, f"timed out after {end.timeout_seconds:g} s")
    if end.output_truncated:
        return Verdict("failed", "output_limit", "codex output exceeded the capture limit")
    if stream.errors:
        last = stream.errors[-1]
        return Verdict("failed", _failure_kind(last, stream), last)
    return Verdict("failed", "runtime_error", f"codex {end.describe_exit} without turn.completed")
