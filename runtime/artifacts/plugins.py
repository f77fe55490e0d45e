"""The one way a registry of hz finds and loads its classes: core ones by ``"module:Class"``,
plugins through an entry-point group (``hz.runners``, ``hz.providers``).

Both registries sit in one layer and may not import each other; this leaf is below them. It
imports ``importlib.metadata`` only when a registry scans for plugins (slow, and each registry
caches its scan for the process) and a module only when a registry loads what it names.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Container, Iterable, Mapping
from typing import TYPE_CHECKING

from hz.runtime.artifacts.errors import ConfigError

if TYPE_CHECKING:
    from importlib.metadata import EntryPoint


def scan(
    group: str, core: Container[str], accept: Callable[[str], object] | None = None
) -> dict[str, EntryPoint]:
    """The installed entry points of ``group`` by name. A plugin cannot replace a core name
    (``core`` wins), a name ``accept`` refuses is passed over, and of two plugins by one name
    the first found is kept."""
    from importlib.metadata import entry_points

    found: dict[str, EntryPoint] = {}
    for point in entry_points(group=group):
        if point.name not in core and (accept is None or accept(point.name)):
            found.setdefault(point.name, point)
    return found


def distribution(point: EntryPoint) -> str:
    """The name of the distribution that declares ``point``."""
    dist = point.dist
    return dist.name if dist is not None else "unknown distribution"


def listing(core: Iterable[str], plugins: Mapping[str, EntryPoint]) -> list[tuple[str, str]]:
    """Every registered name as ``(name, source)``, sorted: source is ``core`` or the plugin's
    distribution name. Nothing is imported to list them."""
    rows = [(name, "core") for name in core]
    rows += [(name, distribution(point)) for name, point in plugins.items()]
    return sorted(rows)


def load_core(target: str, origin: str, *, hint: str | None = None) -> object:
    """What ``target`` (``"module:Class"``) names; a module that is missing or fails to import
    is a ``ConfigError`` about ``origin``, never a crash."""
    module_name, _, attr = target.partition(":")
    try:
        return getattr(importlib.import_module(module_name), attr)
    except Exception as e:  # a broken or missing module is a problem of what binds it
        raise ConfigError(f"{origin} cannot be loaded: {type(e).__name__}: {e}", hint=hint) from e


def load_plugin(point: EntryPoint, origin: str) -> object:
    """What the entry point ``point`` names; any failure of the plugin's code to import is a
    ``ConfigError`` about ``origin``."""
    try:
        return point.load()
    except Exception as e:  # third-party code: any failure to import is reported
        raise ConfigError(
            f"{origin} failed to load ({point.value}): {type(e).__name__}: {e}"
        ) from e
