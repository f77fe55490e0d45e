"""Capability descriptors: what a runner enforces for its pinned agent CLI, and the proof.

One vocabulary (``CAPABILITIES``, with what ``supported`` means for each) for every runner. A
runner's ``descriptor(settings)`` marks each capability ``supported`` (enforced: evidence —
the test node ids that prove it — or, where no test can, a reason), ``unsupported`` (not
enforced, with the reason) or ``unverified`` (nobody has shown either way, with the reason).
A test checks that every cited test exists. A runner class without a ``descriptor`` (a plugin
written before descriptors) gets one derived from its ``capabilities``: nothing it says is
``supported`` without evidence, so what it does not prove is ``unverified``.

``hz runners`` prints the descriptors, the pre-run gate (``hz.runtime.execution.policy``) reads
them, and a result's ``limits_unenforced`` names what the run needed and did not get.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from hz.runtime.runners.protocol import Capabilities

Support = Literal["supported", "unsupported", "unverified"]

#: Every capability, in order, and what ``supported`` means for it.
CAPABILITIES: dict[str, str] = {
    "timeout": "the session is stopped, its whole process group killed, at the timeout",
    "budget": "the session is stopped once its cost reaches the budget",
    "tools": "the model is offered only the tools the job names (or the read-only profile)",
    "turns": "the session is stopped after the operator's max_turns",
    "structured_output": "a json answer is checked against the job's output schema",
    "cancellation": "a signal to hz stops the agent and everything it started in its group",
    "network": "the model has no tool or command that reaches the network",
    "sub_agents": "the model cannot start sub-agents",
    "file_writes": "the model cannot write, create or delete files",
    "credential_isolation": "no credential of the operator's is readable by the model",
}
NAMES: tuple[str, ...] = tuple(CAPABILITIES)


@dataclass(frozen=True, slots=True)
class Mark:
    """One capability's standing: ``evidence`` (test node ids) and/or a ``reason``."""

    support: Support
    evidence: tuple[str, ...] = ()
    reason: str = ""

    def __post_init__(self) -> None:
        if self.support == "supported" and not (self.evidence or self.reason):
            raise ValueError("a supported capability needs evidence or a reason")
        if self.support != "supported" and not self.reason:
            raise ValueError(f"an {self.support} capability needs a reason")

    def to_json(self) -> dict[str, Any]:
        return {"support": self.support, "evidence": list(self.evidence), "reason": self.reason}


def supported(*evidence: str, reason: str = "") -> Mark:
    return Mark("supported", tuple(evidence), reason)


def unsupported(reason: str, *evidence: str) -> Mark:
    return Mark("unsupported", tuple(evidence), reason)


def unverified(reason: str) -> Mark:
    return Mark("unverified", (), reason)


@dataclass(frozen=True, slots=True)
class Descriptor:
    """A runner's marks for every capability in ``NAMES``, for the CLI version it pins."""

    runner: str
    cli_version: str | None
    marks: tuple[tuple[str, Mark], ...]

    @classmethod
    def of(cls, runner: str, cli_version: str | None, marks: Mapping[str, Mark]) -> Descriptor:
        """``marks`` must name every capability, and nothing else."""
        missing = [name for name in NAMES if name not in marks]
        extra = [name for name in marks if name not in CAPABILITIES]
        if missing or extra:
            raise ValueError(f"descriptor of {runner}: missing {missing}, unknown {extra}")
        return cls(runner, cli_version, tuple((name, marks[name]) for name in NAMES))

    def mark(self, name: str) -> Mark:
        return dict(self.marks)[name]

    def not_supported(self, *names: str) -> tuple[str, ...]:
        """Of ``names``, those this runner does not enforce (unsupported or unverified)."""
        return tuple(name for name in names if self.mark(name).support != "supported")

    def to_json(self) -> dict[str, Any]:
        return {
            "runner": self.runner,
            "cli_version": self.cli_version,
            "capabilities": {name: mark.to_json() for name, mark in self.marks},
        }


_NO_DESCRIPTOR = "the runner publishes no capability descriptor"


def derived(runner: str, capabilities: Capabilities) -> Descriptor:
    """The descriptor of a runner that publishes none: a limit it calls ``unsupported`` is
    unsupported, everything else unverified (a claim without evidence)."""
    marks: dict[str, Mark] = {}
    for name in NAMES:
        claimed = getattr(capabilities, name, None)
        if claimed == "unsupported":
            marks[name] = unsupported(f"the runner says it does not enforce {name}")
        elif claimed is not None:
            marks[name] = unverified(f"{_NO_DESCRIPTOR}; it claims {name} is {claimed}")
        else:
            marks[name] = unverified(_NO_DESCRIPTOR)
    return Descriptor.of(runner, None, marks)


def descriptor_of(runner_class: Any, settings: Any) -> Descriptor:
    """The runner's own descriptor for these settings (``None``: as configured by default),
    or one derived from its capabilities."""
    describe = getattr(runner_class, "descriptor", None)
    if describe is not None:
        result = describe(settings)
        if isinstance(result, Descriptor):
            return result
    return derived(runner_class.name, runner_class.capabilities(settings))
