"""Where provider classes come from: a dict of core providers and the ``hz.providers`` entry
points.

Core providers are named by ``"module:Class"`` and imported only when asked for, so a provider
module that is missing or fails to import breaks only the inputs that read through it (and
``hz providers`` says why). A plugin is any installed distribution that declares an entry
point in the group ``hz.providers``::

    [project.entry-points."hz.providers"]
    jira = "my_package.jira:JiraProvider"

The entry point's name is the provider's name in ``[capabilities] tracker = "jira"`` and in its
settings table ``[providers.jira]``. A plugin cannot replace a core provider: the core name
wins.
"""

from __future__ import annotations

import functools
import re
from typing import TYPE_CHECKING, cast

from hz.runtime.artifacts import plugins
from hz.runtime.artifacts.errors import ConfigError
from hz.runtime.artifacts.suggest import did_you_mean_suffix

if TYPE_CHECKING:
    from importlib.metadata import EntryPoint

    from hz.runtime.providers.protocol import ProviderClass

GROUP = "hz.providers"

#: name -> "module:Class" of the providers that ship with hz.
CORE: dict[str, str] = {
    "files": "hz.runtime.providers.files:FilesProvider",
    "git": "hz.runtime.providers.git:GitProvider",
    "github": "hz.runtime.providers.github:GitHubProvider",
    "command": "hz.runtime.providers.command:CommandProvider",
}

#: The core providers that serve operations of hz's catalog only: what a contract may read does
#: not depend on their settings, so validating one never makes them (nor imports them).
#: ``command`` serves the operations its settings declare; a plugin, whatever it declares.
CATALOG_ONLY = frozenset({"files", "git", "github"})

#: What a provider's name may be: it is a TOML table's name (``[providers.NAME]``) and part of
#: an environment variable's (``HZ_PROVIDERS_NAME__KEY``).
NAME_PATTERN = re.compile(r"[a-z][a-z0-9]*(?:-[a-z0-9]+)*")


@functools.cache
def _plugins() -> dict[str, EntryPoint]:
    # The installed plugins do not change during one hz process; scanning them is slow.
    return plugins.scan(GROUP, CORE, accept=NAME_PATTERN.fullmatch)


def available() -> list[tuple[str, str]]:
    """Every registered provider as ``(name, source)``: source is ``core`` or the plugin's
    distribution name. Nothing is imported to list them."""
    return plugins.listing(CORE, _plugins())


def names() -> list[str]:
    return [name for name, _ in available()]


def unknown(name: str) -> ConfigError:
    """The error for a provider name no provider is registered under."""
    known = names()
    return ConfigError(
        f"unknown provider '{name}'{did_you_mean_suffix(name, known)}",
        hint=f"known providers: {', '.join(known)} (hz providers lists them)",
    )


def resolve(name: str) -> ProviderClass:
    """The provider class registered as ``name``; ``ConfigError`` when unknown or broken."""
    if name in CORE:
        origin = f"core provider '{name}'"
        loaded = plugins.load_core(
            CORE[name],
            origin,
            hint="bind the capability to another provider, or install the extra it needs",
        )
    else:
        point = _plugins().get(name)
        if point is None:
            raise unknown(name)
        origin = f"provider plugin '{name}' from {plugins.distribution(point)}"
        loaded = plugins.load_plugin(point, origin)
    _check_declarations(origin, loaded)
    return cast("ProviderClass", loaded)


def _check_declarations(origin: str, loaded: object) -> None:
    """What hz reads of a provider class without running its code must have the right types:
    a broken plugin is a configuration problem, never a crash of every fetch."""
    from hz.runtime.providers.protocol import ProviderSettings

    missing = [
        attr
        for attr in ("name", "capabilities", "settings_model", "operations", "ready", "fetch")
        if not hasattr(loaded, attr)
    ]
    if missing or not callable(loaded):
        what = f"it has no {', '.join(missing)}" if missing else "it cannot be called"
        raise ConfigError(f"{origin} is not a provider class: {what}")
    model = getattr(loaded, "settings_model", None)
    if not (isinstance(model, type) and issubclass(model, ProviderSettings)):
        raise ConfigError(
            f"{origin} is not a provider class: settings_model is not a "
            "hz.runtime.providers.protocol.ProviderSettings subclass"
        )
    capabilities = getattr(loaded, "capabilities", None)
    if not (isinstance(capabilities, tuple) and all(isinstance(c, str) for c in capabilities)):
        raise ConfigError(f"{origin} is not a provider class: capabilities is not a tuple of names")
