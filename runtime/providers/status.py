"""Whether each capability can be fetched on this machine: ``hz providers`` and ``hz doctor``.

One row per capability: the catalog's (``files``, ``git``, ``code-host``, ``tracker``) and any
other the operator binds (a ``command`` operation's); the provider bound to it, whether that
provider can be loaded, made from its settings and is ready (``Provider.ready``: credentials
present, the service reachable with ``online``), and the operations it serves.
"""

from __future__ import annotations

from dataclasses import dataclass

from hz.runtime.artifacts.errors import ConfigError
from hz.runtime.artifacts.operations import CAPABILITIES, CATALOG, Operation
from hz.runtime.providers import registry
from hz.runtime.providers.binding import Bindings


@dataclass(frozen=True, slots=True)
class CapabilityStatus:
    """``ok``: ready; False: bound but not ready (``detail`` says why); None: unbound."""

    capability: str
    provider: str | None
    source: str | None
    ok: bool | None
    detail: str
    operations: tuple[Operation, ...]


def statuses(bindings: Bindings, *, online: bool = False) -> list[CapabilityStatus]:
    extra = sorted(set(bindings.capabilities) - set(CAPABILITIES))
    return [_status(bindings, capability, online) for capability in (*CAPABILITIES, *extra)]


def _catalog(capability: str) -> tuple[Operation, ...]:
    return tuple(op for name, op in sorted(CATALOG.items()) if op.capability == capability)


def _status(bindings: Bindings, capability: str, online: bool) -> CapabilityStatus:
    name = bindings.provider_of(capability)
    if name is None:
        detail = f'no provider: [capabilities] {capability} = "NAME" binds one'
        return CapabilityStatus(capability, None, None, None, detail, _catalog(capability))
    source = dict(registry.available()).get(name)

    def failed(detail: str, operations: tuple[Operation, ...]) -> CapabilityStatus:
        return CapabilityStatus(capability, name, source, False, detail, operations)

    try:
        bound = bindings.bound(name)
    except ConfigError as e:
        return failed(f"{e.message}; {e.hint}" if e.hint else e.message, _catalog(capability))
    try:
        offered = tuple(
            op
            for _, op in sorted(bound.provider.operations().items())
            if op.capability == capability
        )
        readiness = bound.provider.ready(online=online)
    except Exception as e:  # a plugin that breaks its promise never to raise here
        return failed(f"its checks crashed: {type(e).__name__}: {e}", _catalog(capability))
    if not offered:
        return failed(f"provider '{name}' serves no {capability} operation", _catalog(capability))
    return CapabilityStatus(capability, name, source, readiness.ok, readiness.detail, offered)
