"""The states of a run: one registry that the code, the schemas and docs/runs.md come from.

``RunState`` names every state; ``LIVE`` and ``TERMINAL`` split them. SQL never spells a state:
it takes one as a parameter, or a list made here (``sql_list``), so the PostgreSQL schema's
CHECK constraint (``check_constraint``) and the docs' table (``docs_table``; ``python -m
hz.runtime.ledger.states`` prints it, a test fails when docs/runs.md's copy is stale) cannot
drift from the code. The SQLite schema has no CHECK on purpose (decision 0013): a row edited by
hand with a state hz does not know is read back as unknown (``UnknownState``), never a crash.
"""

from __future__ import annotations

from collections.abc import Iterable
from enum import StrEnum


class RunState(StrEnum):
    """A run's state, in the order a run goes through them."""

    QUEUED = "queued"
    PREPARED = "prepared"
    DISPATCHING = "dispatching"
    RUNNING = "running"
    COMPLETED = "completed"
    FAILED = "failed"
    TIMEOUT = "timeout"
    BUDGET = "budget"
    CANCELLED = "cancelled"
    UNCERTAIN = "uncertain"

    def __repr__(self) -> str:
        # As the text it is: a tuple of states prints as the tuple of their names, as it
        # did when states were plain strings (messages, SQL a caller built from one).
        return repr(self.value)


#: States a run is still in flight in: an owner may act on it.
LIVE: tuple[RunState, ...] = (
    RunState.QUEUED,
    RunState.PREPARED,
    RunState.DISPATCHING,
    RunState.RUNNING,
)
#: States a run ends in; its row is not written again (but for a sweep of its orphans).
TERMINAL: tuple[RunState, ...] = tuple(s for s in RunState if s not in LIVE)
#: Every state, in order (for messages: "one of ...").
STATES: tuple[RunState, ...] = tuple(RunState)
#: Live states before ``dispatching``: the ledger proves nothing of the run was started.
UNDISPATCHED: tuple[RunState, ...] = (RunState.QUEUED, RunState.PREPARED)

#: The timeline's entry for a cancel intent (not a state: the run stays where it is until its
#: owner, or the canceller, settles it).
CANCEL_EVENT = "cancel"

#: What each live state's commit records, for docs/runs.md: (committed when, what it records).
#: The terminal states share one row.
COMMITTED: dict[RunState | str, tuple[str, str]] = {
    RunState.QUEUED: (
        "`hz submit`, `hz run` (before anything else), a retry",
        "the packet, the file it was made from, workdir, receipt directory, request key",
    ),
    RunState.PREPARED: (
        "a process took the run (its **owner**)",
        'runner, a digest of the runner settings; its timeline names the `[jobs."…"]` table '
        "that bound the run, if one did "
        "([configuration.md](configuration.md#jobs-tables-the-runner-per-job))",
    ),
    RunState.DISPATCHING: (
        "**before** the agent process is spawned (synced to disk)",
        "the budget reservation, host, boot id",
    ),
    RunState.RUNNING: (
        "as soon as the process group exists",
        "pid, process group, process start time, private directory",
    ),
    "terminal": (
        "after the receipt is written, before hz reports",
        "the result object (as `hz run --format json`), cost, receipt path",
    ),
}


def sql_list(states: Iterable[RunState]) -> str:
    """``('queued', 'prepared')``: states for SQL's ``IN``, spelled by the enum (its values
    are plain lower-case words, nothing to escape)."""
    return "(" + ", ".join(f"'{s.value}'" for s in states) + ")"


def check_constraint() -> str:
    """The CHECK constraint of the ``state`` column (PostgreSQL's schema)."""
    return f"CHECK (state IN {sql_list(STATES)})"


def docs_table() -> str:
    """docs/runs.md's diagram and table of the states."""
    flow = " ─▶ ".join(s.value for s in LIVE) + " ─▶ " + " | ".join(s.value for s in TERMINAL)
    lines = [
        "```",
        flow,
        "```",
        "",
        "| state | committed when | what it records |",
        "|---|---|---|",
    ]
    for state, (when, what) in COMMITTED.items():
        name = f"`{state}`" if isinstance(state, RunState) else state
        lines.append(f"| {name} | {when} | {what} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":  # pragma: no cover - python -m hz.runtime.ledger.states
    print(docs_table(), end="")
