"""Running one session: bind the configured runner, check capabilities, run, check the draft.

The capability check comes before the adapter: a limit the operator requires to be enforced
(``[system.runner] require_enforced_budget = true``) that the bound runner cannot enforce
refuses the run with a ``RunnerError`` before any process starts.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hz.runtime import registry
from hz.runtime.errors import RunnerError
from hz.runtime.output_check import check_output
from hz.runtime.protocol import AgentRunner, RunnerClass, RunRequest
from hz.runtime.result import AgentResult


def bind(runner_name: str, settings: Mapping[str, Any]) -> AgentRunner:
    """The configured runner, after the capability check; nothing is started."""
    runner_class = registry.resolve(runner_name)
    check_capabilities(runner_class, settings)
    return runner_class.from_settings(settings)


def check_capabilities(runner_class: RunnerClass, settings: Mapping[str, Any]) -> None:
    enforcement = runner_class.capabilities.budget
    if settings.get("require_enforced_budget") is True and enforcement != "hard":
        raise RunnerError(
            f"runner '{runner_class.name}' cannot enforce a budget ({enforcement}) and "
            "[system.runner] require_enforced_budget is true; nothing was started",
            hint="bind a runner that enforces budgets, or set require_enforced_budget = false",
        )


def execute(runner: AgentRunner, request: RunRequest) -> AgentResult:
    """Run the request once through the bound runner; every outcome of the run is a result."""
    return check_output(runner.run(request), request.output)
