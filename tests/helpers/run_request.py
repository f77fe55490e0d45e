"""What the tests that bind or call a runner directly build: a ``RunRequest`` with defaults for
what a test does not look at, an effective configuration binding a runner, and the output
schema the structured-output tests ask for."""

from __future__ import annotations

from pathlib import Path

from hz.runtime.artifacts.models import Budget, OutputSpec, ToolProfile
from hz.runtime.config.layers import Config, Origin, Setting
from hz.runtime.runners.protocol import ProgressCallback, RunRequest
from hz.runtime.settings.keys import CAPABILITIES, RUNNER

#: The output schema of the structured-output tests: an object with an integer ``n``.
SCHEMA = {
    "type": "object",
    "properties": {"n": {"type": "integer"}},
    "required": ["n"],
    "additionalProperties": False,
}


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


def runner_config(runner: str, settings: dict[str, object]) -> Config:
    """A configuration binding ``runner`` with these ``[system.runner]`` settings."""
    values = [(CAPABILITIES, "agent_runner", runner)]
    values += [(RUNNER, key, value) for key, value in settings.items()]
    return Config(tuple(Setting(t, k, v, Origin("default")) for t, k, v in values), ())
