"""One ``RunRequest`` for the tests that call a runner's ``plan`` or ``run`` directly, with
defaults for what a test does not look at."""

from __future__ import annotations

from pathlib import Path

from hz.runtime.models import Budget, OutputSpec, ToolProfile
from hz.runtime.protocol import ProgressCallback, RunRequest


def run_request(
    workdir: Path | str | None,
    *,
    prompt: str = "p",
    contract: str = "c",
    tools: tuple[str, ...] = (),
    timeout: float = 60,
    max_usd: float = 1,
    output: OutputSpec | None = None,
    progress: ProgressCallback | None = None,
) -> RunRequest:
    """The tools bound to ``workdir`` (left unbound when it is None)."""
    profile = ToolProfile(tools=tools)
    return RunRequest(
        prompt=prompt,
        contract=contract,
        tools=profile if workdir is None else profile.bind(workdir),
        timeout=timeout,
        budget=Budget(max_usd=max_usd),
        output=output or OutputSpec(),
        progress=progress,
    )
