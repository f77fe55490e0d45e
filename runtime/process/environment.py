"""The environment a child process gets: an allowlist, never hz's credentials.

- ``child_environment``: PATH, HOME, TMPDIR, the locale variables (``LOCALE_NAMES``), plus
  the ``passthrough`` names the operator configured, plus ``extra`` values the runner sets
  itself. ``HZ_CREDENTIAL_*`` never passes, even when listed.
- ``check_passthrough``: validates a configured list of names at configuration time
  (``ConfigError`` naming the setting and the offending entry).
- ``is_credential_name``: a generic test for names that look like secrets (API keys, tokens,
  passwords), for runners that must not pass a vendor credential unless explicitly allowed.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping

from hz.runtime.artifacts.errors import ConfigError

#: The locale variables: POSIX's LANG, LC_ALL and categories, glibc's extra categories and
#: GNU's LANGUAGE. Only these: any other ``LC_*`` name (``LC_SECRET``) is no locale setting.
LOCALE_NAMES: tuple[str, ...] = (
    "LANG",
    "LANGUAGE",
    "LC_ALL",
    "LC_COLLATE",
    "LC_CTYPE",
    "LC_MESSAGES",
    "LC_MONETARY",
    "LC_NUMERIC",
    "LC_TIME",
    "LC_ADDRESS",
    "LC_IDENTIFICATION",
    "LC_MEASUREMENT",
    "LC_NAME",
    "LC_PAPER",
    "LC_TELEPHONE",
)
#: Always passed when set in the source environment.
BASE_NAMES: frozenset[str] = frozenset({"PATH", "HOME", "TMPDIR", *LOCALE_NAMES})
#: hz's own secrets: never handed to a child.
CREDENTIAL_PREFIX = "HZ_CREDENTIAL_"

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_SECRET_WORDS = frozenset(
    {
        "KEY",
        "APIKEY",
        "TOKEN",
        "SECRET",
        "PASSWORD",
        "PASSWD",
        "CREDENTIAL",
        "CREDENTIALS",
        "AUTH",
        "COOKIE",
        "SESSION",
        "PRIVATE",
        "PAT",
    }
)


def _is_hz_credential(name: str) -> bool:
    return name.upper().startswith(CREDENTIAL_PREFIX)


def _allowed_by_default(name: str) -> bool:
    return name in BASE_NAMES


def child_environment(
    *,
    passthrough: Iterable[str] = (),
    extra: Mapping[str, str] | None = None,
    source: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """The environment for a child: allowlisted names from ``source`` (default: ours).

    Names in ``passthrough`` that are unset in ``source`` are simply absent. ``extra`` values
    win over ``source``; an ``HZ_CREDENTIAL_*`` name in ``extra`` is a bug (``ValueError``).
    """
    src = os.environ if source is None else source
    wanted = set(passthrough)
    env = {
        name: value
        for name, value in src.items()
        if (_allowed_by_default(name) or name in wanted) and not _is_hz_credential(name)
    }
    for name, value in (extra or {}).items():
        if _is_hz_credential(name):
            raise ValueError(f"refusing to pass {name} to a child process")
        env[name] = value
    return dict(sorted(env.items()))


def check_passthrough(names: object, setting: str) -> tuple[str, ...]:
    """Validate a configured list of variable names to pass to a child.

    ``setting`` is how the user wrote it (e.g. ``[system.runner] command_env``) and appears in
    every message.
    """
    if not isinstance(names, list | tuple) or not all(isinstance(n, str) for n in names):
        raise ConfigError(f"{setting} must be a list of environment variable names")
    for name in names:
        if not _NAME.fullmatch(name):
            raise ConfigError(f"{setting}: {name!r} is not an environment variable name")
        if _is_hz_credential(name):
            raise ConfigError(
                f"{setting}: {name} is an hz credential and is never passed to a child process",
                hint="give the agent its own credential variable instead",
            )
    return tuple(names)


def is_credential_name(name: str) -> bool:
    """Whether ``name`` looks like it holds a secret (``ANTHROPIC_API_KEY``, ``GH_TOKEN``,
    ``AWS_SECRET_ACCESS_KEY``, ``HZ_CREDENTIAL_X``, ``DB_PASSWORD``, ...).

    Judged by the ``_``-separated words of the name, so ``KEYBOARD_LAYOUT`` is not one.
    """
    upper = name.upper()
    if _is_hz_credential(upper):
        return True
    words = [w for w in upper.split("_") if w]
    return any(w in _SECRET_WORDS or w.endswith(("APIKEY", "TOKEN")) for w in words)
