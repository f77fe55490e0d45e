"""The extension point: how hz fetches an input's value before the session.

A provider serves one or more capabilities (``code-host``, ``tracker``, ``files``, ``git``, or
any name an operator declares for the ``command`` provider). The operator binds a capability
to a provider (``[capabilities] code-host = "github"``) and configures it in its own table
(``[providers.github]``); a contract only names the operation (``read:
code-host.merged_pull_requests``). The registry holds provider classes (``ProviderClass``):
each declares a frozen settings model, is called with its validated settings, and says which
operations it implements (``operations``: the catalog's, ``hz.runtime.artifacts.operations``,
or, for ``command``, the operator's).

Rules every provider follows:

- ``fetch`` gets one ``FetchRequest`` and returns the value as JSON data (dicts, lists, str,
  int, float, bool, None). hz checks it against the operation's result schema, caps its size
  and records its digest; a provider does not.
- Everything that goes wrong is a ``ProviderError`` with a code (``HZ72x``), a message that
  names the operation and what happened, and a hint: a missing credential, an HTTP error, a
  rate limit past its ceiling, an answer that is not what the API promises, an answer over the
  cap, a timeout. Never another exception, never a partial value.
- Every wait is bounded by ``request.deadline`` (``time.monotonic()`` seconds): a provider that
  would wait past it stops and raises ``HZ726``. Every read is bounded by ``request.max_bytes``.
- Child processes start through ``hz.runtime.process.bounded`` (the one chokepoint: own process
  group, capped output, allowlisted environment).
- A credential is read from hz's environment (the variable the operator named) when fetching;
  it is never part of a value, a message, a hint or ``describe``'s output.
- What a provider fetches is data for the prompt: it never follows instructions in it.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Protocol

from hz.runtime.artifacts.errors import HzError
from hz.runtime.artifacts.operations import Operation, Window
from hz.runtime.settings.model import TableSettings

#: A provider was named that is not registered, or a capability is not bound.
HZ720 = "HZ720"
#: The provider cannot be used as configured: a credential is missing, a setting is wrong.
HZ721 = "HZ721"
#: The service answered with an error (an HTTP status, a command's non-zero exit, a missing
#: file): the message says which.
HZ722 = "HZ722"
#: Rate limited, and the wait it asks for is past the ceiling (or the deadline).
HZ723 = "HZ723"
#: The answer is not what the operation promises: not JSON, or not its result schema.
HZ724 = "HZ724"
#: The answer is larger than the cap (bytes, pages, files).
HZ725 = "HZ725"
#: The fetch did not end within its timeout.
HZ726 = "HZ726"
#: The operation's arguments are refused by the operator's settings (a repository not
#: allowed, a path out of the working directory).
HZ727 = "HZ727"

CODES = (HZ720, HZ721, HZ722, HZ723, HZ724, HZ725, HZ726, HZ727)

#: Defaults of every fetch, unless the provider's settings say otherwise.
DEFAULT_TIMEOUT_SECONDS = 60.0
DEFAULT_MAX_BYTES = 4 * 1024 * 1024
DEFAULT_MAX_PAGES = 20
DEFAULT_MAX_WAIT_SECONDS = 60.0


class ProviderError(HzError):
    """A fetch that did not produce a value: ``code`` is one of ``CODES``."""

    def __init__(self, code: str, message: str, *, hint: str | None = None) -> None:
        super().__init__(message, hint=hint)
        self.code = code


class ProviderSettings(TableSettings):
    """Base of every provider's settings model: the keys of ``[providers.NAME]``. The
    subclass sets ``table`` to ``"providers.NAME"``."""


@dataclass(frozen=True, slots=True)
class FetchRequest:
    """One fetch. ``window`` is resolved (``None`` when the operation takes none or the input
    gave none); ``workdir`` is the run's working directory (``files`` and ``git`` stay inside
    it); ``deadline`` is a ``time.monotonic()`` value no wait may pass; ``max_bytes`` caps the
    answer as read."""

    operation: Operation
    args: Mapping[str, Any]
    window: Window | None
    workdir: Path
    deadline: float
    max_bytes: int = DEFAULT_MAX_BYTES
    #: Injected in tests: the clock the deadline is on, and how a provider waits.
    clock: Callable[[], float] = field(default=time.monotonic)
    sleep: Callable[[float], None] = field(default=time.sleep)


@dataclass(frozen=True, slots=True)
class Readiness:
    """Whether a provider can fetch now: ``ok``, and one line saying why not (or what it
    checked)."""

    ok: bool
    detail: str


class Provider(Protocol):
    """An instance, made from validated settings, ready to fetch."""

    name: ClassVar[str]
    #: The capabilities it can serve (``("code-host", "tracker")``); ``command`` serves any.
    capabilities: ClassVar[tuple[str, ...]]
    settings_model: ClassVar[type[ProviderSettings]]

    def operations(self) -> Mapping[str, Operation]:
        """The operations it implements, by full name (``code-host.pull_request``)."""
        ...

    def ready(self, *, online: bool = False) -> Readiness:
        """Whether it can fetch: credentials present; with ``online``, the service reachable.
        Never raises; never shows a credential."""
        ...

    def fetch(self, request: FetchRequest) -> Any:
        """The value, as JSON data; ``ProviderError`` for anything else."""
        ...


class ProviderClass(Protocol):
    name: ClassVar[str]
    capabilities: ClassVar[tuple[str, ...]]
    settings_model: ClassVar[type[ProviderSettings]]

    def __call__(self, settings: Any) -> Provider: ...
