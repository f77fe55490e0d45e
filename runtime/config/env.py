"""``HZ_*`` environment variables as the highest configuration layer.

Mapping: ``HZ_<TABLE>__<KEY>`` where ``<TABLE>`` is the table path in upper case with dots as
underscores and ``<KEY>`` the key in upper case: ``HZ_SYSTEM_RUNNER__MODEL`` is
``[system.runner] model``, ``HZ_AUTHORING__MAX_USD_CEILING`` is ``[authoring]
max_usd_ceiling``. ``HZ_RUNNER`` is short for ``HZ_CAPABILITIES__AGENT_RUNNER``. A capability's
``-`` is written ``_`` (``HZ_CAPABILITIES__CODE_HOST`` is ``[capabilities] code-host``), and so
is a provider's (``HZ_PROVIDERS_GITHUB__TOKEN_ENV`` is ``[providers.github] token_env``). A value is
read as a TOML value when it is one (``true``, ``3``, ``["Read", "Grep"]``), else as the
plain string. Not configuration: ``HZ_CONFIG`` and ``HZ_SITE_CONFIG`` (they name files),
``HZ_CREDENTIAL_*`` (secrets, never read here) and any other ``HZ_`` name without ``__``.
"""

from __future__ import annotations

import datetime
import tomllib
from collections.abc import Mapping
from typing import Any

from hz.runtime.artifacts.errors import ConfigError
from hz.runtime.artifacts.suggest import did_you_mean_suffix
from hz.runtime.config.file import Located, check_setting
from hz.runtime.config.toml_file import NUMBER_HINT, TOO_MANY_DIGITS
from hz.runtime.settings.keys import CAPABILITIES, PROVIDERS, TABLES

ALIASES: dict[str, tuple[str, str]] = {"HZ_RUNNER": (CAPABILITIES, "agent_runner")}
_PREFIXES = {f"HZ_{t.upper().replace('.', '_')}": t for t in TABLES}
_PROVIDER_PREFIX = f"HZ_{PROVIDERS.upper()}_"


def parse_env_value(raw: str) -> Any:
    """``raw`` as a TOML value when it is one, else the string; ``ValueError`` for an integer
    of thousands of digits (TOML reads it, Python's ``int()`` refuses it)."""
    try:
        document = tomllib.loads(f"value = {raw}")
    except tomllib.TOMLDecodeError:
        return raw
    value = document["value"] if len(document) == 1 else raw
    # TOML dates and times are not configuration values; "2026-01-01" stays a string.
    return raw if isinstance(value, datetime.date | datetime.time) else value


def read_environment(environ: Mapping[str, str], *, runner_keys: bool = True) -> Located:
    located: Located = {}
    for name in sorted(environ):
        if name.startswith("HZ_CREDENTIAL_"):
            continue
        if name in ALIASES:
            table, key = ALIASES[name]
        elif name.startswith("HZ_") and "__" in name:
            prefix, _, upper_key = name.partition("__")
            provider = prefix.removeprefix(_PROVIDER_PREFIX)
            if prefix.startswith(_PROVIDER_PREFIX) and provider:
                table, key = f"{PROVIDERS}.{provider.lower().replace('_', '-')}", upper_key.lower()
            elif prefix not in _PREFIXES:
                close = did_you_mean_suffix(prefix, _PREFIXES)
                raise ConfigError(
                    f"environment variable {name}: unknown table{close}",
                    hint=f"configuration variables start with {', '.join(sorted(_PREFIXES))}__",
                )
            else:
                table, key = _PREFIXES[prefix], upper_key.lower()
            if table == CAPABILITIES and key != "agent_runner":
                key = key.replace("_", "-")
        else:
            continue
        if (table, key) in located:
            raise ConfigError(
                f"environment variables {located[table, key][1]} and {name} both set "
                f"[{table}] {key}; set one"
            )
        try:
            value = parse_env_value(environ[name])
        except ValueError as e:
            raise ConfigError(
                f"environment variable {name}: {TOO_MANY_DIGITS}", hint=NUMBER_HINT
            ) from e
        check_setting(table, key, value, f"environment variable {name}", runner_keys=runner_keys)
        located[table, key] = (value, name)
    return located
