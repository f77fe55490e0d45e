"""The command runner's settings, validated once at configuration time (``ConfigError``)."""

from __future__ import annotations

import math
import string
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from hz.runtime.errors import ConfigError
from hz.runtime.process.environment import check_passthrough

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
SETTINGS_KEYS = frozenset(
    {
        "command",
        "command_enforces_read_only",
        "command_read_only_tools",
        "command_env",
        "command_output",
        "command_json_draft_key",
        "command_inactivity_timeout",
        "model",
    }
)
_KEY = "[system.runner] "
#: One argument: literal text and placeholder names in order, e.g. ("--in=", None), ("", "x").
Segment = tuple[str, str | None]
Argument = tuple[Segment, ...]


@dataclass(frozen=True, slots=True)
class CommandSettings:
    command: tuple[Argument, ...]
    enforces_read_only: bool = False
    read_only_tools: tuple[str, ...] = ()
    env: tuple[str, ...] = ()
    output: Literal["text", "json"] = "text"
    json_draft_key: str = "draft"
    model: str | None = None
    inactivity_timeout: float | None = None

    def uses(self, placeholder: str) -> bool:
        return any(name == placeholder for arg in self.command for _, name in arg)

    def render(self, values: Mapping[str, str]) -> tuple[str, ...]:
        return tuple(
            "".join(text + values[n] if n else text for text, n in a) for a in self.command
        )


def parse_settings(settings: Mapping[str, Any]) -> CommandSettings:
    model = settings.get("model")
    if model is not None and (not isinstance(model, str) or not model):
        raise ConfigError(f"{_KEY}model must be a non-empty string")
    parsed = CommandSettings(
        command=_parse_command(settings.get("command")),
        enforces_read_only=_bool(settings, "command_enforces_read_only"),
        read_only_tools=_tools(settings.get("command_read_only_tools", [])),
        env=check_passthrough(settings.get("command_env", []), f"{_KEY}command_env"),
        output=_output(settings.get("command_output", "text")),
        json_draft_key=_draft_key(settings.get("command_json_draft_key", "draft")),
        model=model,
        inactivity_timeout=_seconds(settings.get("command_inactivity_timeout")),
    )
    if parsed.uses("model") and model is None:
        raise ConfigError(f"{_KEY}command uses {{model}} but {_KEY}model is not set")
    if not parsed.uses("contract_file"):
        raise ConfigError(
            f"{_KEY}command must pass {{contract_file}} to the agent: the contract holds the "
            "job's binding rules and has no other way to reach it",
            hint='e.g. add "--system-prompt-file={contract_file}" to the command',
        )
    return parsed


def _parse_command(value: object) -> tuple[Argument, ...]:
    if value is None:
        raise ConfigError(
            f"{_KEY}command is not set: the command runner needs the agent's command line",
            hint='e.g. command = ["my-agent", "--prompt-file", "{prompt_file}"]',
        )
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


def _bool(settings: Mapping[str, Any], key: str) -> bool:
    value = settings.get(key, False)
    if not isinstance(value, bool):
        raise ConfigError(f"{_KEY}{key} must be true or false, not {value!r}")
    return value


def _tools(value: object) -> tuple[str, ...]:
    if not isinstance(value, list | tuple) or not all(
        isinstance(t, str) and t and "," not in t for t in value
    ):
        raise ConfigError(f"{_KEY}command_read_only_tools must be a list of tool names")
    return tuple(value)


def _output(value: object) -> Literal["text", "json"]:
    if value == "text" or value == "json":
        return value
    raise ConfigError(f'{_KEY}command_output must be "text" or "json", not {value!r}')


def _draft_key(value: object) -> str:
    if not isinstance(value, str) or not value:
        raise ConfigError(f"{_KEY}command_json_draft_key must be a non-empty string")
    return value


def _seconds(value: object) -> float | None:
    if value is None:
        return None
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or not math.isfinite(value)
        or value <= 0
    ):
        raise ConfigError(f"{_KEY}command_inactivity_timeout must be a number of seconds > 0")
    return float(value)
