"""Maps how a ``claude`` run ended onto hz's statuses and failure kinds.

Decided from typed fields only (result subtype, ``is_error``, ``api_error_status``, the CLI's
own ``error`` code on synthetic messages, permission denials, ``apiKeySource``), never from
the model's text. The table is documented in docs/runners/claude-code.md.
"""

from __future__ import annotations

from dataclasses import replace

from hz.runtime.artifacts.result import FailureKind, Status
from hz.runtime.runners.claude_code.stream import StreamSummary
from hz.runtime.runners.outcome import RunEnd, Verdict

#: ``apiKeySource`` values meaning a key came from the environment, not a subscription login.
ENV_KEY_SOURCES = frozenset({"ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "apiKeyHelper"})

_SUBTYPES: dict[str, tuple[Status, FailureKind]] = {
    "error_max_budget_usd": ("budget", "budget_exceeded"),
    "error_max_turns": ("failed", "max_turns"),
    "error_max_structured_output_retries": ("failed", "schema_invalid"),
}


def classify(
    summary: StreamSummary, end: RunEnd, *, allow_api_key_billing: bool, now: float
) -> Verdict:
    if end.launch_error is not None:
        return Verdict("failed", "launch_failed", end.launch_error)
    if summary.api_key_source in ENV_KEY_SOURCES and not allow_api_key_billing:
        return Verdict(
            "failed",
            "auth_misconfigured",
            f"the CLI authenticated with {summary.api_key_source} although "
            "allow_api_key_billing is off",
        )
    result = summary.result
    if result is None:
        if end.timed_out and summary.rate_limit_retry_pending:
            # The time went to waiting out the API's rate limit: the run failed for that
            # (retried as any rate limit before a tool call), hz's timeout only ended the wait.
            return Verdict(
                "failed",
                "rate_limited",
                f"timed out after {end.timeout_seconds:g} s while the CLI waited to retry "
                "after HTTP 429",
                summary.rate_limit_retry_delay,
            )
        if end.timed_out:
            return Verdict("timeout", None, f"timed out after {end.timeout_seconds:g} s")
        if end.output_truncated:
            return Verdict("failed", "output_limit", "output cap reached before a result")
        code = "no exit code" if end.exit_code is None else f"exit code {end.exit_code}"
        return Verdict("failed", "runtime_error", f"ended without result ({code})")
    if result.subtype in _SUBTYPES:
        status, kind = _SUBTYPES[result.subtype]
        return Verdict(status, kind, _errors(result.errors) or result.subtype)
    if not result.is_error and result.subtype == "success":
        return Verdict("completed")
    return _api_failure(summary, now)


def over_budget(verdict: Verdict, cost_usd: float | None, max_usd: float) -> Verdict:
    """A budget stop that spent more than the budget says by how much: the CLI checks its
    budget between turns, so the turn that crosses it is paid in full."""
    if verdict.status != "budget" or cost_usd is None or cost_usd <= max_usd + 1e-9:
        return verdict
    spent = f"spent ${cost_usd:.4f} against ${max_usd:.2f}: the CLI checks between turns"
    return replace(verdict, reason=f"{verdict.reason}; {spent}" if verdict.reason else spent)


def _api_failure(summary: StreamSummary, now: float) -> Verdict:
    result = summary.result
    assert result is not None
    status = result.api_error_status
    codes = set(summary.assistant_errors)
    if status == 429 or (status is None and "rate_limit" in codes):
        retry_after = summary.rate_limit_retry_delay
        if summary.rate_limit_resets_at is not None:
            retry_after = max(0.0, summary.rate_limit_resets_at - now)
        return Verdict("failed", "rate_limited", "the API answered HTTP 429", retry_after)
    if status in (401, 403):
        return Verdict("failed", "auth_misconfigured", f"the API answered HTTP {status}")
    if "authentication_failed" in codes:
        return Verdict("failed", "auth_misconfigured", "the CLI is not logged in")
    if result.permission_denials:
        tools = ", ".join(sorted(set(result.permission_denials)))
        return Verdict("failed", "permission_denied", f"permission denied for {tools}")
    if status is not None:
        return Verdict("failed", "runtime_error", f"the API answered HTTP {status}")
    detail = _errors(result.errors) or result.terminal_reason or result.subtype or "unknown"
    return Verdict("failed", "runtime_error", f"the CLI reported an error: {detail}")


def _errors(errors: tuple[str, ...]) -> str | None:
    return "; ".join(errors) if errors else None
