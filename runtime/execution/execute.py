"""Running one session: bind the configured runner, check capabilities, run, check the draft.

The capability check comes before the adapter: a limit the operator requires to be enforced
(``[system.runner] require_enforced_budget = true``) that the bound runner cannot enforce
with its settings refuses the run with a ``RunnerError`` before any process starts.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from pydantic import JsonValue

from hz.runtime.artifacts.errors import RunnerError
from hz.runtime.artifacts.models import OutputSpec
from hz.runtime.artifacts.result import AgentResult
from hz.runtime.execution.output_check import check_output
from hz.runtime.execution.policy import Policy, gate
from hz.runtime.runners import registry
from hz.runtime.runners.capabilities import Descriptor
from hz.runtime.runners.output_cap import bounded
from hz.runtime.runners.protocol import (
    AgentRunner,
    Capabilities,
    Progress,
    ProgressCallback,
    RunPlan,
    RunRequest,
)
from hz.runtime.runners.settings import SharedSettings
from hz.runtime.transcript.record import redact, secret_values

if TYPE_CHECKING:
    from hz.runtime.config.layers import Config


def bind(config: Config) -> AgentRunner:
    """The configured runner built from its validated settings, after the capability check,
    behind the pre-run gate (``Gated``); nothing is started. ``ConfigError`` for invalid
    settings, ``RunnerError`` when refused."""
    from hz.runtime.runners.capabilities import descriptor_of

    runner_class = registry.resolve(config.agent_runner)
    settings = runner_class.settings_model.from_config(config)
    capabilities = runner_class.capabilities(settings)
    shared = SharedSettings.from_config(config)
    check_capabilities(runner_class.name, capabilities, shared)
    return Gated(
        runner_class.name,
        runner_class(settings),
        descriptor_of(runner_class, settings),
        Policy.from_config(config),
        shared.max_turns,
    )


@dataclass(slots=True)
class Gated:
    """A bound runner behind the pre-run gate (``hz.runtime.execution.policy``): every ``plan`` and
    ``run`` is checked against the descriptor and ``[system.policy]`` first (``RunnerError``,
    nothing started), and names what the run needs and does not get in
    ``limits_unenforced``. Whatever path runs a job (``hz run``, the ledger's worker) gets it."""

    name: str
    inner: AgentRunner
    descriptor: Descriptor
    policy: Policy
    max_turns: int | None

    def admit(self, request: RunRequest) -> tuple[str, ...]:
        return gate(self.descriptor, self.policy, request, max_turns=self.max_turns)

    def plan(self, request: RunRequest) -> RunPlan:
        unenforced = self.admit(request)
        plan = self.inner.plan(request)
        names = tuple(dict.fromkeys((*plan.limits_unenforced, *unenforced)))
        return replace(plan, limits_unenforced=names)

    def run(self, request: RunRequest) -> AgentResult:
        unenforced = self.admit(request)
        return with_unenforced(self.inner.run(request), unenforced)


def check_capabilities(runner: str, capabilities: Capabilities, shared: SharedSettings) -> None:
    enforcement = capabilities.budget
    if shared.require_enforced_budget and enforcement != "hard":
        raise RunnerError(
            f"runner '{runner}' cannot enforce a budget ({enforcement}) and "
            "[system.runner] require_enforced_budget is true; nothing was started",
            hint="bind a runner that enforces budgets, or set require_enforced_budget = false",
        )


def admit(config: Config, request: RunRequest) -> tuple[str, ...]:
    """The pre-run gate (``hz.runtime.execution.policy``): the job's needs and ``[system.policy]``
    against the bound runner's capability descriptor. Returns what the run needs and will not
    get (for ``limits_unenforced``); ``RunnerError`` when the policy refuses the run."""
    from hz.runtime.runners.capabilities import descriptor_of

    runner_class = registry.resolve(config.agent_runner)
    settings = runner_class.settings_model.from_config(config)
    max_turns = SharedSettings.from_config(config).max_turns
    return gate(
        descriptor_of(runner_class, settings),
        Policy.from_config(config),
        request,
        max_turns=max_turns,
    )


def with_unenforced(result: AgentResult, unenforced: tuple[str, ...]) -> AgentResult:
    """``result`` naming ``unenforced`` too in its ``limits_unenforced``."""
    names = tuple(dict.fromkeys((*result.limits_unenforced, *unenforced)))
    return (
        result
        if names == result.limits_unenforced
        else result.model_copy(update={"limits_unenforced": names})
    )


def execute(runner: AgentRunner, request: RunRequest) -> AgentResult:
    """Run the request once through the bound runner; every outcome of the run is a result.
    Its progress reaches the caller (the ledger's observations, the live line) as the result
    does: a tool's name redacted and cut (``redacting``)."""
    if request.progress is not None:
        request = replace(request, progress=redacting(request.progress, os.environ))
    return finished(runner.run(request), request.output, os.environ)


#: The longest tool name a run's progress carries (what ``hz runs show`` keeps of it).
MAX_PROGRESS_NAME = 200


def redacting(sink: ProgressCallback, environ: Mapping[str, str]) -> ProgressCallback:
    """``sink`` fed each progress with its last tool's name as the result's names are: a
    secret value of ``environ`` written ``[redacted NAME]`` (a model, an MCP server, names its
    own tools: one may echo a key it was given), and cut to ``MAX_PROGRESS_NAME``."""
    secrets = secret_values(environ)

    def report(progress: Progress) -> None:
        name = progress.last_tool
        if name is not None:
            shown = (redact(name, secrets)[0] if secrets else name)[:MAX_PROGRESS_NAME]
            if shown != name:
                progress = replace(progress, last_tool=shown)
        sink(progress)

    return report


def finished(result: AgentResult, output: OutputSpec, environ: Mapping[str, str]) -> AgentResult:
    """A runner's result as hz shows and keeps it — the one place every result passes before
    the run's summary, ``--format json``, the ledger and the receipt: its secrets redacted
    (``without_secrets``), its draft checked against the job's output spec, then held to the
    output cap (``hz.runtime.runners.output_cap``)."""
    return bounded(check_output(without_secrets(result, environ), output))


def without_secrets(result: AgentResult, environ: Mapping[str, str]) -> AgentResult:
    """``result`` with a secret value of ``environ`` (a key the agent was given on purpose)
    written ``[redacted NAME]`` in every string the agent wrote, as its transcript writes it:
    the draft and its structured output, the tool calls (names, inputs, keys too), the model,
    the reason, the stderr tail and the names counted in ``protocol_notes``. A value is found
    within one string, and in part at an edge where hz cut the text; one the agent split
    across strings or encoded is not (docs/security.md)."""
    secrets = secret_values(environ)
    if not secrets:
        return result

    replaced = 0

    def text(value: str, *, cut_start: bool = False, cut_end: bool = False) -> str:
        nonlocal replaced
        value, count = redact(value, secrets, cut_start=cut_start, cut_end=cut_end)
        replaced += count
        return value

    # A stderr tail was cut from a stream at both ends (its start, and the cap on what is
    # kept); a draft of a truncated output at its end: a part of a secret may be left there.
    tail = text(result.stderr_tail, cut_start=True, cut_end=True)
    draft = result.draft
    if draft is not None:
        draft = text(draft, cut_end=result.output_truncated)
    update: dict[str, Any] = {
        "draft": draft,
        "structured_output": _redacted(result.structured_output, text),
        "tool_calls": tuple(
            call.model_copy(update={"name": text(call.name), "input": _redacted(call.input, text)})
            for call in result.tool_calls
        ),
        "model": None if result.model is None else text(result.model),
        "reason": None if result.reason is None else text(result.reason),
        "stderr_tail": tail,
        "protocol_notes": _redacted_counts(result.protocol_notes, text),
    }
    changed = {field: value for field, value in update.items() if value != getattr(result, field)}
    if not changed:
        return result
    # The transcript counts what was replaced before it, too.
    counts = dict(result.transcript_counts)
    counts["redacted"] = counts.get("redacted", 0) + replaced
    return result.model_copy(update={**changed, "transcript_counts": counts})


def _redacted(value: JsonValue, text: Callable[[str], str]) -> JsonValue:
    if isinstance(value, str):
        return text(value)
    if isinstance(value, list):
        return [_redacted(v, text) for v in value]
    if isinstance(value, dict):
        return {text(k): _redacted(v, text) for k, v in value.items()}
    return value


def _redacted_counts(counts: dict[str, int], text: Callable[[str], str]) -> dict[str, int]:
    redacted: Counter[str] = Counter()
    for name, n in counts.items():
        redacted[text(name)] += n
    return dict(sorted(redacted.items()))
