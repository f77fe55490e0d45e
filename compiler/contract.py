"""A contract that passed validation: typed values, ready to compile. Never holds raw YAML."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from hz.compiler.source import SourceDoc

if TYPE_CHECKING:
    from hz.runtime.artifacts.models import ReadSpec, UpstreamSpec
    from hz.runtime.artifacts.schedule import Schedule


@dataclass(frozen=True, slots=True)
class InputDecl:
    """One input. With ``read``, the operation it is fetched through; its ``schema`` is then
    the declared one or, when none is, the operation's result schema."""

    name: str
    description: str | None
    schema: dict[str, Any] | bool
    has_default: bool
    default: Any = None
    read: ReadSpec | None = None
    #: With ``read: contract:NAME``: the job whose newest completed draft it takes.
    upstream: UpstreamSpec | None = None


@dataclass(frozen=True, slots=True)
class Contract:
    """Everything ``compile`` needs; ``source`` keeps positions for later diagnostics."""

    source: SourceDoc
    name: str
    title: str | None
    timeout_seconds: int
    tools: tuple[str, ...]
    max_usd: float
    inputs: tuple[InputDecl, ...]
    output_format: Literal["markdown", "text", "json"]
    output_schema: dict[str, Any] | bool | None
    contract_text: str
    template: str
    #: The identity keys beside ``hz:`` (name, kind, version, description) that are given.
    identity: dict[str, Any] = field(default_factory=dict)
    #: Where the draft goes: (target, arguments as written; strings may be templates).
    publishes: tuple[tuple[str, dict[str, Any]], ...] = ()
    #: The HTML comments taken out of a Markdown contract's body, each as written.
    comments: tuple[str, ...] = ()
    #: When the job runs by itself, and the jobs whose completion queues it.
    schedule: Schedule | None = None
    after: tuple[str, ...] = ()
