"""Running one packet: bind, check capabilities, call the runner, check the draft.

The capability check comes before the adapter: a limit the operator requires to be enforced
(``[system.runner] require_enforced_budget = true``) that the bound runner cannot enforce
refuses the run with a ``RunnerError`` before any process starts.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from hz.runtime import registry
from hz.runtime.errors import RunnerError
from hz.runtime.models import Packet, ToolProfile
from hz.runtime.output_check import check_output
from hz.runtime.protocol import AgentRunner, ProgressCallback, RunnerClass, RunPlan
from hz.runtime.result import AgentResult


def bind(
    packet: Packet, *, runner_name: str, settings: Mapping[str, Any], workdir: Path | str
) -> tuple[AgentRunner, ToolProfile]:
    """The configured runner and the job's tool profile bound to ``workdir`` (which must
    exist), after the capability check."""
    runner_class = registry.resolve(runner_name)
    check_capabilities(runner_class, settings)
    tools = packet.job.tools.bind(workdir)
    return runner_class.from_settings(settings), tools


def check_capabilities(runner_class: RunnerClass, settings: Mapping[str, Any]) -> None:
    enforcement = runner_class.capabilities.budget
    if settings.get("require_enforced_budget") is True and enforcement != "hard":
        raise RunnerError(
            f"runner '{runner_class.name}' cannot enforce a budget ({enforcement}) and "
            "[system.runner] require_enforced_budget is true; nothing was started",
            hint="bind a runner that enforces budgets, or set require_enforced_budget = false",
        )


def plan(
    packet: Packet, *, runner_name: str, settings: Mapping[str, Any], workdir: Path | str
) -> RunPlan:
    """What ``execute`` would start, for ``hz run --dry-run``; nothing is started."""
    runner, tools = bind(packet, runner_name=runner_name, settings=settings, workdir=workdir)
    job = packet.job
    return runner.plan(
        packet.prompt,
        contract=packet.contract,
        tools=tools,
        timeout=float(job.timeout_seconds),
        budget=job.budget,
        output=job.output,
    )


def execute(
    packet: Packet,
    *,
    runner_name: str,
    settings: Mapping[str, Any],
    workdir: Path | str,
    progress: ProgressCallback | None = None,
) -> AgentResult:
    """Run the packet once through the named runner; every outcome of the run is a result."""
    runner, tools = bind(packet, runner_name=runner_name, settings=settings, workdir=workdir)
    job = packet.job
    result = runner.run(
        packet.prompt,
        contract=packet.contract,
        tools=tools,
        timeout=float(job.timeout_seconds),
        budget=job.budget,
        output=job.output,
        progress=progress,
    )
    return check_output(result, job.output)
