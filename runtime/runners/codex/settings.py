"""The ``[system.runner]`` keys of the Codex runner, validated into one frozen value.

- ``codex_executable``: the ``codex`` program (default ``codex`` on PATH).
- ``codex_config``: extra ``-c key=value`` overrides (TOML values), e.g. a model provider
  with its ``base_url``. Only keys that tune the model and its provider pass
  (``codex.surface.override_refusal``).
- ``codex_env``: names of environment variables passed to codex (API keys go only here).
- ``codex_home``: a ``CODEX_HOME`` to use (e.g. one where ``codex login`` stored a login);
  by default every run gets a fresh private one.
- ``model`` (shared): passed as ``-m``. ``max_turns`` (shared) cannot be enforced by Codex.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hz.runtime.errors import ConfigError
from hz.runtime.process.environment import check_passthrough
from hz.runtime.runners.codex.surface import override_refusal

SETTINGS_KEYS = frozenset(
    {
        "codex_executable",
        "codex_config",
        "codex_env",
        "codex_home",
        "model",
        "max_turns",
        "require_enforced_budget",
    }
)

_KEY = re.compile(r"[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*")


@dataclass(frozen=True, slots=True)
class CodexSettings:
    executable: str = "codex"
    config: tuple[str, ...] = ()
    env: tuple[str, ...] = ()
    home: Path | None = None
    model: str | None = None
    max_turns: int | None = None


def _setting(key: str) -> str:
    return f"[system.runner] {key}"


def check_override(entry: object) -> str:
    """One ``codex_config`` entry: ``key=value`` with a dotted key and a TOML value."""
    if not isinstance(entry, str):
        raise ConfigError(f"{_setting('codex_config')} entries must be strings, got {entry!r}")
    key, sep, value = entry.partition("=")
    key = key.strip()
    if not sep or not _KEY.fullmatch(key):
        raise ConfigError(
            f"{_setting('codex_config')}: {entry!r} is not key=value with a dotted key",
            hint='e.g. model_providers.local.base_url="http://127.0.0.1:8080/v1"',
        )
    try:
        tomllib.loads(f"value = {value.strip()}")
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(
            f"{_setting('codex_config')}: the value of {key} is not a TOML value: {e}",
            hint='quote strings: model_provider="local"',
        ) from e
    why = override_refusal(key, value.strip())
    if why is not None:
        raise ConfigError(f"{_setting('codex_config')}: {key} cannot be overridden: {why}")
    return f"{key}={value.strip()}"


def _string(settings: Mapping[str, Any], key: str) -> str | None:
    value = settings.get(key)
    if value is not None and (not isinstance(value, str) or not value):
        raise ConfigError(f"{_setting(key)} must be a non-empty string, got {value!r}")
    return value


def read_settings(settings: Mapping[str, Any]) -> CodexSettings:
    """Validate the keys the Codex runner reads; ``ConfigError`` names the first bad one."""
    executable = _string(settings, "codex_executable") or "codex"
    config = settings.get("codex_config", [])
    if not isinstance(config, list | tuple):
        raise ConfigError(f"{_setting('codex_config')} must be a list of key=value strings")
    env = check_passthrough(settings.get("codex_env", []), _setting("codex_env"))
    home_text = _string(settings, "codex_home")
    home = None
    if home_text is not None:
        home = Path(home_text).expanduser()
        if not home.is_absolute() or not home.is_dir():
            raise ConfigError(
                f"{_setting('codex_home')} must be an existing directory given as an absolute "
                f"path, got {home_text!r}"
            )
    max_turns = settings.get("max_turns")
    return CodexSettings(
        executable=executable,
        config=tuple(check_override(entry) for entry in config),
        env=env,
        home=home,
        model=_string(settings, "model"),
        max_turns=max_turns if isinstance(max_turns, int) else None,
    )
