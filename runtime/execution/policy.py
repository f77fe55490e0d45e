"""The pre-run gate: the job's needs and the operator's ``[system.policy]`` against the bound
runner's capability descriptor (``hz.runtime.runners.capabilities``), before anything starts.

- ``require``: capabilities the runner must mark ``supported`` for every run. Default: the
  read-only promise — ``timeout``, ``file_writes``, ``network``, ``sub_agents``.
- The job's own needs: ``timeout`` and ``budget`` always, ``tools`` when it names tools,
  ``structured_output`` when its output is ``json`` with a schema, ``turns`` when the
  operator set ``max_turns``.
- ``allow_unenforced``: needs a run may have although the runner does not enforce them; the
  result and the receipt name them in ``limits_unenforced``. Default: ``budget``, ``tools``,
  ``turns``, ``structured_output`` (hz checks a json answer itself);
  ``[system.runner] require_enforced_budget = true`` takes ``budget`` out.

A requirement or a need that is neither ``supported`` nor allowed refuses the run with a
``RunnerError`` (exit 2) naming each capability, its standing and the reason.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from hz.runtime.artifacts.errors import RunnerError
from hz.runtime.config.tables import PolicySettings
from hz.runtime.runners.capabilities import Descriptor
from hz.runtime.runners.protocol import RunRequest
from hz.runtime.settings.keys import RUNNER

if TYPE_CHECKING:
    from hz.runtime.config.layers import Config

#: The defaults of ``[system.policy]``, as its settings model declares them.
_DEFAULTS = PolicySettings()


@dataclass(frozen=True, slots=True)
class Policy:
    require: tuple[str, ...] = _DEFAULTS.require
    allow_unenforced: tuple[str, ...] = _DEFAULTS.allow_unenforced

    @classmethod
    def from_config(cls, config: Config) -> Policy:
        """The effective ``[system.policy]`` (values were checked when the file was read);
        ``require_enforced_budget`` removes ``budget`` from ``allow_unenforced``."""
        settings = PolicySettings.from_config(config)
        require, allowed = settings.require, settings.allow_unenforced
        if config.get(RUNNER, "require_enforced_budget", False) is True:
            allowed = tuple(name for name in allowed if name != "budget")
        return cls(require, allowed)


def needs(request: RunRequest, *, max_turns: int | None = None) -> tuple[str, ...]:
    """What the job itself asks to be held to."""
    output = request.output
    return (
        "timeout",
        "budget",
        *(("tools",) if request.tools.tools else ()),
        *(("structured_output",) if output.format == "json" and output.schema_ else ()),
        *(("turns",) if max_turns is not None else ()),
    )


def gate(
    descriptor: Descriptor, policy: Policy, request: RunRequest, *, max_turns: int | None = None
) -> tuple[str, ...]:
    """The capabilities this run needs and will not get (allowed by the policy), for the
    result's ``limits_unenforced``; ``RunnerError`` when the policy refuses the run."""
    wanted = tuple(dict.fromkeys((*policy.require, *needs(request, max_turns=max_turns))))
    missing = descriptor.not_supported(*wanted)
    refused = [n for n in missing if n in policy.require or n not in policy.allow_unenforced]
    if refused:
        lines = [
            f"{name} {descriptor.mark(name).support}: {descriptor.mark(name).reason}"
            for name in refused
        ]
        raise RunnerError(
            f"runner '{descriptor.runner}' does not enforce what [system.policy] requires; "
            "nothing was started: " + "; ".join(lines),
            hint="bind a runner that enforces it, or change [system.policy] require / "
            "allow_unenforced (docs/security.md)",
        )
    return missing
