"""The command runner's settings, validated once at configuration time (``ConfigError``)."""

from __future__ import annotations

import string
from collections.abc import Mapping
from typing import Annotated, Literal, Self

from pydantic import Field, field_validator, model_validator

from hz.runtime.artifacts.errors import ConfigError
from hz.runtime.runners.command.tools import DEFAULT_READ_ONLY_TOOLS
from hz.runtime.runners.settings import (
    Expect,
    ModelName,
    RunnerSettings,
    key_name,
    model_key,
    passed_names,
)

PLACEHOLDERS: tuple[str, ...] = (
    "prompt_file",
    "contract_file",
    "output_file",
    "working_dir",
    "tools",
    "model",
    "timeout_seconds",
    "max_usd",
)
_KEY = key_name("")
#: One argument: literal text and placeholder names in order, e.g. ("--in=", None), ("", "x").
Segment = tuple[str, str | None]
Argument = tuple[Segment, ...]


class CommandSettings(RunnerSettings):
    command: Annotated[
        tuple[Argument, ...],
        Field(
            description="the argv, a list of strings, run **without a shell**. Item 0 is the "
            "program: found on the child's `PATH`, or a path (`~` expanded; relative to hz's "
            "directory, resolved before the child changes into the working directory). Item 0 "
            "may not contain placeholders.",
        ),
    ]
    enforces_read_only: Annotated[
        bool,
        Field(
            alias="command_enforces_read_only",
            strict=True,
            description="your declaration that the command restricts its agent to read-only "
            "tools. Until it is `true`, `hz run` (and `--dry-run`) refuse with an error and "
            "`hz doctor` reports *degraded*.",
        ),
        Expect("must be true or false, not {value!r}"),
    ] = False
    read_only_tools: Annotated[
        tuple[Annotated[str, Field(strict=True, pattern=r"^[^,]+$")], ...],
        Field(
            alias="command_read_only_tools",
            description="the only tool names a contract may ask for (`hz.agent.tools`); a "
            "contract naming any other tool is refused before anything starts. Also what "
            "`{tools}` becomes when the contract names none.",
        ),
        Expect("must be a list of tool names"),
    ] = DEFAULT_READ_ONLY_TOOLS
    env: Annotated[
        tuple[str, ...],
        passed_names("command_env"),
        Field(
            alias="command_env",
            description="names of environment variables passed through to the command (e.g. "
            "its own API token). `HZ_CREDENTIAL_*` names are refused.",
        ),
    ] = ()
    output: Annotated[
        Literal["text", "json"],
        Field(
            alias="command_output",
            description='how the result is read: `"text"` (the draft is the output) or '
            '`"json"` (see below).',
        ),
        Expect('must be "text" or "json", not {value!r}'),
    ] = "text"
    json_draft_key: Annotated[
        str,
        Field(
            alias="command_json_draft_key",
            strict=True,
            min_length=1,
            description='with `"json"`: the key holding the draft.',
        ),
        Expect("must be a non-empty string"),
    ] = "draft"
    model: ModelName = model_key(
        "shared with the other runners; fills `{model}`. A command using `{model}` needs it set."
    )
    inactivity_timeout: Annotated[
        float | None,
        Field(
            alias="command_inactivity_timeout",
            strict=True,
            gt=0,
            allow_inf_nan=False,
            description="seconds without a byte on stdout or stderr after which the command is "
            "stopped (`failed` / `inactivity_timeout`).",
        ),
        Expect("must be a number of seconds > 0", hint="e.g. 300; unset: no inactivity limit"),
    ] = None

    @model_validator(mode="before")
    @classmethod
    def _required(cls, data: object) -> object:
        if isinstance(data, dict) and data.get("command") is None:
            raise ConfigError(
                f"{_KEY}command is not set: the command runner needs the agent's command line",
                hint='e.g. command = ["my-agent", "--prompt-file", "{prompt_file}"]',
            )
        return data

    @field_validator("command", mode="before")
    @classmethod
    def _command(cls, value: object) -> tuple[Argument, ...]:
        return _parse_command(value)

    @model_validator(mode="after")
    def _placeholders(self) -> Self:
        if self.uses("model") and self.model is None:
            raise ConfigError(f"{_KEY}command uses {{model}} but {_KEY}model is not set")
        if not self.uses("contract_file"):
            raise ConfigError(
                f"{_KEY}command must pass {{contract_file}} to the agent: the contract holds the "
                "job's binding rules and has no other way to reach it",
                hint='e.g. add "--system-prompt-file={contract_file}" to the command',
            )
        return self

    def uses(self, placeholder: str) -> bool:
        return any(name == placeholder for arg in self.command for _, name in arg)

    def render(self, values: Mapping[str, str]) -> tuple[str, ...]:
        return tuple(
            "".join(text + values[n] if n else text for text, n in a) for a in self.command
        )


def _parse_command(value: object) -> tuple[Argument, ...]:
    if not isinstance(value, list | tuple) or not all(isinstance(a, str) for a in value):
        raise ConfigError(f"{_KEY}command must be a list of strings (run without a shell)")
    if not value or not value[0]:
        raise ConfigError(f"{_KEY}command must name a program as its first item")
    command = tuple(_parse_argument(i, arg) for i, arg in enumerate(value))
    if any(name for _, name in command[0]):
        raise ConfigError(f"{_KEY}command[0] is the program and cannot contain placeholders")
    return command


def _parse_argument(index: int, arg: str) -> Argument:
    where = f"{_KEY}command[{index}]"
    try:
        parts = list(string.Formatter().parse(arg))
    except ValueError as e:
        raise ConfigError(f"{where} {arg!r}: {e}", hint="write {{ and }} for literal braces") from e
    segments: list[Segment] = []
    for literal, name, spec, conversion in parts:
        if name is None:
            segments.append((literal, None))
            continue
        text = (
            "{"
            + name
            + (f"!{conversion}" if conversion else "")
            + (f":{spec}" if spec else "")
            + "}"
        )
        problem = _field_problem(name, spec, conversion)
        if problem:
            raise ConfigError(
                f"{where}: {text}: {problem}", hint="write {{ and }} for literal braces"
            )
        segments.append((literal, name))
    return tuple(segments)


def _field_problem(name: str, spec: str | None, conversion: str | None) -> str | None:
    if name == "" or name.isdigit():
        return "positional fields are not supported; use a named placeholder"
    if "." in name or "[" in name:
        return "attribute and index access are not supported"
    if name not in PLACEHOLDERS:
        known = ", ".join("{" + p + "}" for p in PLACEHOLDERS)
        return f"unknown placeholder (known: {known})"
    if conversion:
        return "conversions are not supported"
    if spec:
        return "format specs are not supported"
    return None
