"""The app-server runner's ``[system.runner]`` keys: the ``codex`` runner's, but ``codex_home``
is refused — ``app-server`` has no ``--ignore-user-config``, so a configured ``CODEX_HOME``
would bring its ``config.toml`` (notify programs, MCP servers) into the session."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

from pydantic import Field, field_validator

from hz.runtime.artifacts.errors import ConfigError
from hz.runtime.runners.codex.settings import CodexSettings
from hz.runtime.runners.settings import ModelName, key_name, model_key


class CodexAppServerSettings(CodexSettings):
    model: ModelName = model_key("sent in `thread/start`; unset: the CLI's default")
    home: Annotated[
        Path | None,
        Field(
            alias="codex_home",
            description="**refused**: every run gets a fresh private `CODEX_HOME` (app-server "
            "has no `--ignore-user-config`)",
        ),
    ] = None

    @field_validator("home", mode="before")
    @classmethod
    def _home(cls, value: object) -> Path:
        raise ConfigError(
            f"{key_name('codex_home')} is not supported by the codex-app-server runner: every "
            "run gets a fresh private CODEX_HOME (app-server cannot ignore a user config.toml)",
            hint="pass the API key through codex_env, or use the codex runner",
        )
