"""Publish targets from provider plugins (entry-point group ``hz.providers``).

A provider class may declare, beside the operations it reads, the publish targets of its
capabilities (``publish_targets``: a mapping of ``Target`` by name, as hz's own catalog holds
them), and give a publisher for them (``publisher(workdir)``: an object with ``where``,
``credential``, ``write`` and ``lookup``, as ``hz.runtime.publish.targets.base.Publisher``
says). A target counts only for a capability the operator binds to that provider, and never
replaces one of hz's own.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hz.runtime.artifacts.errors import ConfigError
from hz.runtime.artifacts.publish_targets import TARGETS, Target
from hz.runtime.providers import registry

#: hz's own providers: they publish through hz's own targets, never declare any.
BUILT_IN = registry.CATALOG_ONLY | {"command"}


def declared_targets(bound: Mapping[str, str]) -> dict[str, Target]:
    """hz's targets and those the providers ``bound`` (capability -> provider) declare for
    the capabilities bound to them. A provider that cannot be loaded declares none."""
    found: dict[str, Target] = dict(TARGETS)
    for capability, name in sorted(bound.items()):
        if name in BUILT_IN:
            continue
        try:
            cls = registry.resolve(name)
        except ConfigError:
            continue
        declared: Any = getattr(cls, "publish_targets", None)
        if not isinstance(declared, Mapping):
            continue
        for target_name, target in sorted(declared.items()):
            if (
                isinstance(target, Target)
                and target.name == target_name
                and target.capability == capability
                and target_name not in TARGETS
            ):
                found[target_name] = target
    return found


def bound_capabilities(config: Any) -> dict[str, str]:
    """The operator's ``[capabilities]`` bindings but the runner's."""
    from hz.runtime.settings.keys import CAPABILITIES

    return {
        str(key): str(value)
        for key, value in config.table(CAPABILITIES).items()
        if key != "agent_runner" and value is not None
    }
