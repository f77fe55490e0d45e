"""HZ901: tools that no runner of this machine accepts.

Whether a tool name is accepted is the runners' business, configured by whoever runs the job,
so the compiler is handed the answer as data (``ToolPolicy``, built by ``hz validate`` from the
registered runners and the configuration) and only locates and words the warning. A runner
refuses a contract naming a tool it does not accept when the job runs; this says so earlier.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from hz.compiler.checks.common import at, get
from hz.compiler.diagnostics import Diagnostic
from hz.compiler.rules.registry import HZ901
from hz.compiler.source import SourceDoc


@dataclass(frozen=True, slots=True)
class ToolPolicy:
    """The tool names each runner that checks names accepts. ``runner`` is set when one runner
    was asked about (``hz validate --runner NAME``)."""

    accepted: Mapping[str, tuple[str, ...]]
    runner: str | None = None

    def accepts(self, tool: str) -> bool:
        """Whether some runner of the policy accepts ``tool``."""
        return any(tool in names for names in self.accepted.values())


#: Gives the policy when first needed, for the tool names the contract asks for: asking the
#: runners can import them (and pydantic), which a contract naming no tools should not pay for.
#: The policy may leave out runners when those it has accept every name asked for: a runner
#: only ever adds to the names accepted, so the others cannot change the verdict.
PolicySource = Callable[[tuple[str, ...]], ToolPolicy]


def check_tools(doc: SourceDoc, source: PolicySource | None) -> list[Diagnostic]:
    tools = get(doc.data, "hz", "agent", "tools")
    if source is None or not isinstance(tools, list) or not tools:
        return []
    policy = source(tuple(tool for tool in tools if isinstance(tool, str)))
    if not policy.accepted:
        return []
    problems = []
    for index, tool in enumerate(tools):
        if not isinstance(tool, str) or policy.accepts(tool):
            continue
        lists = "; ".join(
            f"{'it' if policy.runner else runner} accepts {', '.join(names) or 'none'}"
            for runner, names in sorted(policy.accepted.items())
        )
        refused = (
            f"the {policy.runner} runner does not accept {tool!r}"
            if policy.runner
            else f"no runner here accepts {tool!r}"
        )
        found = at(
            doc,
            ("hz", "agent", "tools", index),
            HZ901,
            f"hz.agent.tools: {refused} ({lists})",
            hint="a runner refuses the job when it runs; name a tool the runner accepts, or ask "
            "whoever runs the job to allow this one (hz config show, hz runners)",
        )
        problems.append(dataclasses.replace(found, severity="warning"))
    return problems
