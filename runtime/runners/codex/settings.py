"""The ``[system.runner]`` keys of the Codex runner, validated into one frozen value
(``CodexSettings``: each field's description is its row in docs/runners/codex.md).

Of the ``codex_config`` overrides, only keys that tune the model and its provider pass
(``codex.surface.override_refusal``).
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path
from typing import Annotated

from pydantic import Field, field_validator

from hz.runtime.artifacts.errors import ConfigError
from hz.runtime.runners.codex.surface import override_refusal
from hz.runtime.runners.settings import (
    Expect,
    MaxTurns,
    ModelName,
    RunnerSettings,
    key_name,
    model_key,
    passed_names,
)

_KEY = re.compile(r"[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*")


def check_override(entry: object) -> str:
    """One ``codex_config`` entry: ``key=value`` with a dotted key and a TOML value."""
    if not isinstance(entry, str):
        raise ConfigError(f"{key_name('codex_config')} entries must be strings, got {entry!r}")
    key, sep, value = entry.partition("=")
    key = key.strip()
    if not sep or not _KEY.fullmatch(key):
        raise ConfigError(
            f"{key_name('codex_config')}: {entry!r} is not key=value with a dotted key",
            hint='e.g. model_providers.local.base_url="http://127.0.0.1:8080/v1"',
        )
    try:
        tomllib.loads(f"value = {value.strip()}")
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(
            f"{key_name('codex_config')}: the value of {key} is not a TOML value: {e}",
            hint='quote strings: model_provider="local"',
        ) from e
    why = override_refusal(key, value.strip())
    if why is not None:
        raise ConfigError(f"{key_name('codex_config')}: {key} cannot be overridden: {why}")
    return f"{key}={value.strip()}"


_NON_EMPTY = Expect("must be a non-empty string, got {value!r}")


class CodexSettings(RunnerSettings):
    model: ModelName = model_key("passed as `-m`; unset: the CLI's default")
    executable: Annotated[
        str,
        Field(
            alias="codex_executable",
            strict=True,
            min_length=1,
            description="the `codex` program (on `PATH`), resolved to an absolute path before "
            "the run changes directory",
        ),
        _NON_EMPTY,
    ] = "codex"
    config: Annotated[
        tuple[str, ...],
        Field(
            alias="codex_config",
            description="extra `-c key=value` overrides, after hz's own; `key` is a dotted path, "
            '`value` must be a TOML value (`model_provider="local"`, not '
            "`model_provider=local`)",
        ),
    ] = ()
    env: Annotated[
        tuple[str, ...],
        passed_names("codex_env"),
        Field(
            alias="codex_env",
            description="environment variable names passed to codex — **the only way an API "
            "key reaches it**",
        ),
    ] = ()
    home: Annotated[
        Path | None,
        Field(
            alias="codex_home",
            description="a `CODEX_HOME` to use, e.g. one where `codex login` stored a ChatGPT "
            "login; must be an existing absolute directory; unset: a fresh private directory "
            "per run",
        ),
    ] = None
    max_turns: Annotated[
        MaxTurns,
        Field(
            description="shared key; Codex cannot enforce it, so a run names `turns` in "
            "`limits_unenforced`",
        ),
    ] = None

    @field_validator("config", mode="before")
    @classmethod
    def _overrides(cls, value: object) -> tuple[str, ...]:
        if not isinstance(value, list | tuple):
            raise ConfigError(f"{key_name('codex_config')} must be a list of key=value strings")
        return tuple(check_override(entry) for entry in value)

    @field_validator("home", mode="before")
    @classmethod
    def _home(cls, value: object) -> Path:
        if isinstance(value, Path):
            return value
        if not isinstance(value, str) or not value:
            raise ConfigError(f"{key_name('codex_home')} {_NON_EMPTY.problem.format(value=value)}")
        home = Path(value).expanduser()
        if not home.is_absolute() or not home.is_dir():
            raise ConfigError(
                f"{key_name('codex_home')} must be an existing directory given as an absolute "
                f"path, got {value!r}"
            )
        return home
