"""The extension point: how hz runs one agent session.

A runner is any object with a ``name`` and the ``plan`` and ``run`` methods below. hz calls
``run`` once per session with one ``RunRequest``: the rendered prompt, the contract text (to be
given to the agent as binding rules, never mixed into the prompt), the read-only tool profile
(its ``working_dir`` bound and existing), the wall-clock timeout in seconds, the budget, the
job's output spec and an optional progress sink. ``plan`` gets the same request and starts
nothing. The registry holds runner classes (``RunnerClass``): each declares a frozen settings
model, is called with its validated settings, and says which limits it enforces given them
(``capabilities``) — what ``hz runners``, ``hz doctor``, the pre-run checks and each result's
``limits_unenforced`` report.

Rules every runner follows:

- Return an ``AgentResult`` for everything that happens once a process may start: a timeout,
  a budget stop, a crash, a missing executable, empty or malformed output.
- Raise ``hz.runtime.artifacts.errors.RunnerError`` only when misconfigured, before anything runs.
- Never exceed the timeout; name in ``limits_unenforced`` each limit that applied to the run
  and that its capabilities do not enforce (``Capabilities.unenforced``).
- Start every child process through ``hz.runtime.process.bounded`` (one chokepoint: own
  process group, capped output, allowlisted environment, the group killed at the end).
- ``request.output``: the job's output spec; a runner that can make the agent produce
  structured output (e.g. a JSON Schema flag) uses it. hz validates a ``json`` draft afterwards
  (``hz.runtime.execution.output_check``); a runner does not.
- ``request.progress``: when given, call it with ``Progress`` as turns and tool calls happen.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar, Literal, Protocol

from hz.runtime.artifacts.errors import RunnerError
from hz.runtime.artifacts.models import Budget, OutputSpec, Packet, ToolProfile
from hz.runtime.artifacts.result import AgentResult

if TYPE_CHECKING:
    from hz.runtime.runners.settings import RunnerSettings


@dataclass(frozen=True, slots=True)
class Progress:
    elapsed_seconds: float
    turns: int
    tool_calls: int
    last_tool: str | None = None


ProgressCallback = Callable[[Progress], None]


class ProgressReporter:
    """A run's progress sink as a runner feeds it: called with the counts so far, it passes
    them on (with the time since the reporter was made) when they changed, and does nothing
    when the request has no sink."""

    def __init__(self, sink: ProgressCallback | None) -> None:
        self._sink = sink
        self._started = time.monotonic()
        self._seen = (0, 0)

    def __call__(self, turns: int, tool_calls: int, last_tool: str | None = None) -> None:
        if self._sink is None or (turns, tool_calls) == self._seen:
            return
        self._seen = (turns, tool_calls)
        self._sink(Progress(time.monotonic() - self._started, turns, tool_calls, last_tool))


@dataclass(frozen=True, slots=True, kw_only=True)
class RunRequest:
    """One session to run (or, for ``plan``, to describe): everything ``plan`` and ``run`` get.

    ``tools`` is bound: its ``working_dir`` is an absolute path that existed when the request
    was made. ``timeout`` is wall-clock seconds. Build one from a packet with ``for_packet``.
    """

    prompt: str
    contract: str
    tools: ToolProfile
    timeout: float
    budget: Budget
    output: OutputSpec = field(default_factory=OutputSpec)
    progress: ProgressCallback | None = None

    @property
    def working_dir(self) -> str:
        """Where the session runs; ``RunnerError`` (nothing starts) when ``tools`` is unbound."""
        if self.tools.working_dir is None:
            raise RunnerError("the tool profile has no working directory bound")
        return self.tools.working_dir

    @classmethod
    def for_packet(
        cls, packet: Packet, *, workdir: Path | str, progress: ProgressCallback | None = None
    ) -> RunRequest:
        """The packet's session in ``workdir`` (``FormatError`` when it does not exist)."""
        job = packet.job
        return cls(
            prompt=packet.prompt,
            contract=packet.contract,
            tools=job.tools.bind(workdir),
            timeout=float(job.timeout_seconds),
            budget=job.budget,
            output=job.output,
            progress=progress,
        )


@dataclass(frozen=True, slots=True)
class RunPlan:
    """What a run would start, for ``hz run --dry-run``: nothing is started to make it.

    ``env_names`` are the names passed to the child (values are never shown); ``files``
    describe the private files the run would write, e.g. ``("contract", "<private>/contract.md")``.
    """

    argv: tuple[str, ...]
    cwd: str
    env_names: tuple[str, ...]
    files: tuple[tuple[str, str], ...] = ()
    stdin: str = "/dev/null"
    limits_unenforced: tuple[str, ...] = ()
    session_widened: tuple[str, ...] = ()


def applied_limits(request: RunRequest, max_turns: int | None) -> tuple[str, ...]:
    """The limits a run is held to: the timeout and the budget always, the tools when the job
    names some, the turns when the operator set ``max_turns``."""
    return (
        "timeout",
        "budget",
        *(("tools",) if request.tools.tools else ()),
        *(("turns",) if max_turns is not None else ()),
    )


class AgentRunner(Protocol):
    name: str

    def plan(self, request: RunRequest) -> RunPlan:
        """Describe the process ``run`` would start for this request, without starting it."""
        ...

    def run(self, request: RunRequest) -> AgentResult:
        """Run the session once; every outcome once a process may start is a result."""
        ...


Enforcement = Literal["hard", "advisory", "unsupported"]


@dataclass(frozen=True, slots=True)
class Capabilities:
    """Which limits a runner enforces, and how: ``hard`` (the session is stopped),
    ``advisory`` (passed on, not guaranteed) or ``unsupported``."""

    timeout: Enforcement
    budget: Enforcement
    tools: Enforcement
    turns: Enforcement
    structured_output: Enforcement

    def describe(self) -> str:
        """``timeout hard, budget advisory, …`` (one line of ``hz doctor``)."""
        return ", ".join(f"{limit} {getattr(self, limit)}" for limit in LIMITS)

    def unenforced(self, *applied: str) -> tuple[str, ...]:
        """Of the limits that applied to a run, those not enforced at all: what a result names
        in ``limits_unenforced``."""
        return tuple(limit for limit in applied if getattr(self, limit) == "unsupported")


#: The limits a runner reports on, in order: the one list ``hz runners`` and ``hz doctor`` show.
LIMITS: tuple[str, ...] = tuple(f.name for f in fields(Capabilities))


@dataclass(frozen=True, slots=True)
class Check:
    """One line of ``hz doctor``."""

    name: str
    status: Literal["ok", "degraded", "failed"]
    detail: str


class RunnerClass(Protocol):
    """What the registry holds (core dict, or entry point group ``hz.runners``): a class that
    declares its settings and is called with them to build a runner.

    ``settings_model`` is a frozen pydantic model of the ``[system.runner]`` keys the runner
    reads (``hz.runtime.runners.settings.RunnerSettings``): its fields are the keys the
    configuration accepts for it, their docs table and their error messages. hz validates the
    effective table into it before calling the class, so a runner never sees raw settings.
    """

    name: ClassVar[str]
    settings_model: ClassVar[type[RunnerSettings]]

    def __call__(self, settings: RunnerSettings, /) -> AgentRunner:
        """Build the runner from its validated settings: an instance of ``settings_model``
        (each runner narrows the type to its own model)."""
        ...

    def capabilities(self, settings: RunnerSettings | None, /) -> Capabilities:
        """Which limits the runner enforces with these settings (e.g. ``turns`` only with a
        ``max_turns``); ``None`` when no valid settings are at hand (``hz runners`` listing a
        runner that is not configured): what it enforces when configured."""
        ...

    def doctor(self, settings: RunnerSettings, /) -> list[Check]:
        """Checks for ``hz doctor`` (executable found and runnable, version, login, ...)."""
        ...
