"""Running one session: bind the configured runner, check capabilities, run, check the draft.

The capability check comes before the adapter: a limit the operator requires to be enforced
(``[system.runner] require_enforced_budget = true``) that the bound runner cannot enforce
with its settings refuses the run with a ``RunnerError`` before any process starts.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from hz.runtime import registry
from hz.runtime.capabilities import Descriptor
from hz.runtime.errors import RunnerError
from hz.runtime.output_check import check_output
from hz.runtime.policy import Policy, gate
from hz.runtime.protocol import AgentRunner, Capabilities, RunPlan, RunRequest
from hz.runtime.result import AgentResult
from hz.runtime.runners.settings import SharedSettings
from hz.runtime.transcript.record import redact, secret_values

if TYPE_CHECKING:
    from hz.runtime.config.layers import Config


def bind(config: Config) -> AgentRunner:
    """The configured runner built from its validated settings, after the capability check,
    behind the pre-run gate (``Gated``); nothing is started. ``ConfigError`` for invalid
    settings, ``RunnerError`` when refused."""
    from hz.runtime.capabilities import descriptor_of

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
    """A bound runner behind the pre-run gate (``hz.runtime.policy``): every ``plan`` and
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
    """The pre-run gate (``hz.runtime.policy``): the job's needs and ``[system.policy]``
    against the bound runner's capability descriptor. Returns what the run needs and will not
    get (for ``limits_unenforced``); ``RunnerError`` when the policy refuses the run."""
    from hz.runtime.capabilities import descriptor_of

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
    """Run the request once through the bound runner; every outcome of the run is a result."""
    return without_secrets(check_output(runner.run(request), request.output), os.environ)


def without_secrets(result: AgentResult, environ: Mapping[str, str]) -> AgentResult:
    """``result`` with a secret value of ``environ`` (a key the agent was given on purpose)
    written ``[redacted NAME]`` in the agent's stderr tail and the reason, as its transcript
    writes it: both are shown to people (the run's summary, ``hz runs show``, a CI log) and kept
    in the ledger. The draft is the agent's answer, kept as written."""
    secrets = secret_values(environ)
    update = {
        field: redact(text, secrets)[0]
        for field, text in (("stderr_tail", result.stderr_tail), ("reason", result.reason))
        if text
    }
    changed = {field: text for field, text in update.items() if text != getattr(result, field)}
    return result.model_copy(update=changed) if changed else result
