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
from hz.runtime.process import threads
from hz.runtime.providers import registry
from hz.runtime.providers.binding import Bindings, Bound
from hz.runtime.providers.protocol import Readiness

#: How long a provider's ``ready()`` is waited for (its ``timeout_seconds`` when shorter): a
#: plugin that hangs there is left behind in a daemon thread, said NOT READY.
READY_SECONDS = 30.0


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
        declared = bound.provider.operations()
        offered = tuple(
            op
            for _, op in sorted(declared.items())
            if isinstance(op, Operation) and op.capability == capability
        )
    except Exception as e:  # a plugin that breaks its promise never to raise here
        return failed(f"its operations cannot be listed: {_said(e)}", _catalog(capability))
    if not offered:
        return failed(f"provider '{name}' serves no {capability} operation", _catalog(capability))
    readiness = _ready(bound, online)
    return CapabilityStatus(capability, name, source, readiness.ok, readiness.detail, offered)


def _said(error: BaseException) -> str:
    try:
        text = str(error)
    except Exception:  # a plugin's exception: its __str__ is its code too
        text = "(its message cannot be shown)"
    return f"{type(error).__name__}: {text[:300]}"


def _ready(bound: Bound, online: bool) -> Readiness:
    """``bound.provider.ready(online=...)`` in a thread of its own, waited for at most
    ``READY_SECONDS`` (or the provider's ``timeout_seconds``, when shorter, and a second);
    what it returns must be a ``Readiness`` with a text ``detail``: anything else — an
    exception, a hang, another value — is NOT READY, said, never a crash of ``hz providers``
    or ``hz doctor``."""
    own = getattr(bound.settings, "timeout_seconds", None)
    seconds = READY_SECONDS
    if isinstance(own, int | float) and not isinstance(own, bool) and 0 < own < seconds:
        seconds = float(own) + 1.0
    waited = threads.call_within(
        lambda: bound.provider.ready(online=online),
        seconds,
        name=f"hz-ready-{bound.name}",
        what=f"checking provider {bound.name}",
    )
    if not waited.done:
        return Readiness(False, f"its checks did not end within {seconds:g} s")
    if waited.error is not None:
        return Readiness(False, f"its checks crashed: {_said(waited.error)}")
    value = waited.value
    if not (
        isinstance(value, Readiness)
        and isinstance(value.ok, bool)
        and isinstance(value.detail, str)
    ):
        return Readiness(
            False,
            f"its checks returned {type(value).__name__}, not a Readiness with a bool and a text",
        )
    return value
