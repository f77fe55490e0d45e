"""The operator's bindings: which provider serves each capability, and each provider's settings.

``Bindings`` is made from the effective configuration (``[capabilities]`` and the
``[providers.NAME]`` tables, ``from_config``) and hands out providers lazily: a provider is
resolved, its settings validated and the instance made only when an input reads through it
(``provider``), so a provider that cannot be loaded breaks only the inputs bound to it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from hz.runtime.artifacts.errors import ConfigError
from hz.runtime.artifacts.operations import BUILT_IN_BINDINGS, CATALOG, Operation
from hz.runtime.providers import registry
from hz.runtime.providers.protocol import Provider, ProviderSettings
from hz.runtime.settings.keys import CAPABILITIES


class BindingSource(Protocol):
    """What ``from_config`` reads: the effective configuration
    (``hz.runtime.config.layers.Config``), which this layer does not import."""

    def table(self, table: str) -> dict[str, Any]: ...

    def provider_tables(self) -> dict[str, dict[str, Any]]: ...


@dataclass(frozen=True, slots=True)
class Bound:
    """A provider made from its settings, ready to fetch."""

    name: str
    provider: Provider
    settings: ProviderSettings


@dataclass(frozen=True, slots=True)
class Bindings:
    """``capabilities``: capability -> provider name; ``tables``: provider name -> its
    ``[providers.NAME]`` table as configured (validated when the provider is made)."""

    capabilities: Mapping[str, str]
    tables: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    _made: dict[str, Bound | ConfigError] = field(
        default_factory=dict, init=False, compare=False, repr=False
    )

    @classmethod
    def from_config(cls, config: BindingSource) -> Bindings:
        """The configured bindings over the built-in ones (``files`` and ``git``)."""
        capabilities = dict(BUILT_IN_BINDINGS)
        capabilities |= {
            key: str(value)
            for key, value in config.table(CAPABILITIES).items()
            if key != "agent_runner" and value is not None
        }
        return cls(capabilities, config.provider_tables())

    def provider_of(self, capability: str) -> str | None:
        return self.capabilities.get(capability)

    def bound(self, name: str) -> Bound:
        """The provider registered as ``name``, made from its settings (once);
        ``ConfigError`` when it is unknown, cannot be loaded, or its settings are wrong."""
        made = self._made.get(name)
        if made is None:
            made = self._make(name)
            self._made[name] = made
        if isinstance(made, ConfigError):
            raise made
        return made

    def _make(self, name: str) -> Bound | ConfigError:
        try:
            cls = registry.resolve(name)
            settings = cls.settings_model.from_table(self.tables.get(name, {}))
        except ConfigError as e:
            return e
        try:
            provider = cls(settings)
        except ConfigError as e:
            return e
        except Exception as e:  # a plugin's constructor that crashes is its problem, said
            return ConfigError(
                f"provider '{name}' cannot be set up: {type(e).__name__}: {e}",
                hint="a bug in the provider: report it to its authors",
            )
        return Bound(name, provider, settings)

    def operations(self) -> dict[str, Operation]:
        """The catalog, and the operations outside it that a bound provider declares (the
        operator's ``command`` operations): what a contract's ``read`` may name on this
        machine. A provider that cannot be made declares none."""
        found: dict[str, Operation] = dict(CATALOG)
        for name in sorted(set(self.capabilities.values())):
            try:
                declared = sorted(dict(self.bound(name).provider.operations()).items())
            except Exception:  # noqa: S112 - one that cannot be made, or crashes, declares none
                continue
            for op_name, operation in declared:
                if (
                    isinstance(operation, Operation)
                    and op_name == operation.name
                    and op_name not in found
                    and self.provider_of(operation.capability) == name
                ):
                    found[op_name] = operation
        return found


def unbound_hint(capability: str) -> str:
    """How the operator binds a capability."""
    example = "github" if capability in ("code-host", "tracker") else "command"
    return (
        f'bind it in the operator\'s configuration: [capabilities] {capability} = "{example}" '
        "(hz providers lists the providers)"
    )
