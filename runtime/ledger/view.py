"""A run as JSON (``hz runs … --format json``, ``hz schema runs``) and as text."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from hz.runtime.artifacts.printable import cut, pad, printable, width
from hz.runtime.ledger.rows import RunRow
from hz.runtime.ledger.states import STATES, TERMINAL, RunState
from hz.runtime.ledger.store import Ledger, read_packet

RUN_FORMAT_VERSION = 1


def iso(moment: float | None) -> str | None:
    if moment is None:
        return None
    stamp = datetime.fromtimestamp(moment, UTC).isoformat(timespec="milliseconds")
    return stamp.replace("+00:00", "Z")


#: The document's member of each column (the rest share the column's name).
_MEMBER = {"receipt_path": "receipt", "observed_json": "observed", "result_json": "result"}


def run_json(ledger: Ledger, row: RunRow, *, timeline: bool = True) -> dict[str, Any]:
    """One run: identity, state, attempt, where it ran, what it reserved and cost, the
    timeline, and the result object once terminal (``null`` for ``uncertain``: nothing
    observed its end). A value that does not fit its column is ``null`` here and named in
    ``bad``."""
    document: dict[str, Any] = {
        "kind": "run",
        "format_version": RUN_FORMAT_VERSION,
        "id": row.id,
        "state": row.state,
        "failure_kind": row.failure_kind,
        "request_key": row.request_key,
        "attempt": row.attempt,
        "retry_of": row.retry_of,
        "job_name": row.job_name,
        "job_digest": row.job_digest,
        "inputs_sha256": row.inputs_sha256,
        "workdir": row.workdir,
        "runner": row.runner,
        "max_usd": row.max_usd,
        "reserved_usd": row.reserved_usd,
        "cost_usd": row.cost_usd,
        "target": row.target,
        "queue": row.queue,
        "priority": row.priority,
        "host": row.host,
        "host_id": row.host_id,
        "worker": row.worker,
        "job_id": row.job_id,
        "pid": row.pid,
        "private_dir": row.private_dir,
        "cancel_requested_at": iso(row.cancel_requested_at),
        "created_at": iso(row.created_at),
        "dispatched_at": iso(row.dispatched_at),
        "ended_at": iso(row.ended_at),
        "receipt": row.receipt_path,
        "observed": row.observed,
        "result": row.result,
    }
    if row.bad:
        for bad in row.bad:
            member = _MEMBER.get(bad.split(": ", 1)[0], bad.split(": ", 1)[0])
            if member in document and member not in ("id", "state"):
                document[member] = None
        document["bad"] = list(row.bad)
    # Issue 10: a session the operator widened (network tools) is named wherever the run is.
    result = document["result"]
    widened = None if result is None else result.get("session_widened", [])
    if widened is not None and not (
        isinstance(widened, list) and all(isinstance(w, str) for w in widened)
    ):
        widened = []  # not hz's: a row edited by hand
    document["session_widened"] = widened
    if timeline:
        document["timeline"] = [
            {
                "at": iso(e.at),
                "state": e.state,
                "detail": e.detail,
                **({"bad": list(e.bad)} if e.bad else {}),
            }
            for e in ledger.events(row.id)
        ]
        steps = ledger.steps(row.id)
        if steps:
            document["publishes"] = [step.to_json() for step in steps]
        elif row.state == RunState.COMPLETED:
            packet = read_packet(row)
            if packet is not None and packet.publishes:
                # Asked, never attempted: the process that completed it could not (the
                # database away past its patience, or it was killed in between).
                document["publishes_not_made"] = len(packet.publishes)
    return document


UNCERTAIN_NOTE = (
    "uncertain: the agent was started and nobody saw how it ended; it may have done part or "
    "all of its work. hz will not run it again. Inspect the working directory (and anything "
    "the agent could reach) before you run it again with hz runs retry."
)


def run_text(document: dict[str, Any]) -> str:
    state = document["state"]
    if document["failure_kind"]:
        state += f" ({document['failure_kind']})"
    rows = [
        ("run", document["id"]),
        ("state", state),
        ("job", document["job_name"]),
        ("attempt", str(document["attempt"])),
        ("request key", document["request_key"]),
        ("workdir", document["workdir"]),
        *([("from", document["target"])] if document.get("target") else []),
        ("runner", document["runner"] or "-"),
        ("queue", f"{document['queue']} (priority {document['priority']})"),
        ("host", document["host"] or "-"),
        ("worker", document["worker"] or "-"),
        ("reserved", _money(document["reserved_usd"], 2)),
        ("cost", _money(document["cost_usd"], 4)),
    ]
    if document.get("bad"):
        rows.append(("bad values", "; ".join(document["bad"])))
    if document["retry_of"]:
        rows.append(("retry of", document["retry_of"]))
    if document["receipt"]:
        rows.append(("receipt", document["receipt"]))
    if document["observed"]:
        seen = document["observed"]
        turns, calls = (("?" if seen[k] is None else seen[k]) for k in ("turns", "tool_calls"))
        rows.append(("seen so far", f"{turns} turns, {calls} tool calls"))
    if document["session_widened"]:
        rows.append(("widened", f"{', '.join(document['session_widened'])} (network)"))
    result = document["result"]
    if result and result.get("reason"):
        rows.append(("reason", result["reason"]))
    # Names, keys, paths and the reason come from contracts, operators and agents.
    lines = [f"{name + ':':<13}{printable(str(value))}" for name, value in rows]
    lines.append("timeline:")
    lines += [_event_line(e) for e in document.get("timeline", [])]
    if document.get("publishes"):
        lines.append("publishes:")
        lines += [_step_line(step) for step in document["publishes"]]
    elif document.get("publishes_not_made"):
        asked = document["publishes_not_made"]
        lines.append("publishes:")
        lines.append(f"  none attempted ({asked} asked): hz publish {document['id']} writes them")
    if document["state"] == RunState.UNCERTAIN:
        lines.append(UNCERTAIN_NOTE)
    return "\n".join(lines) + "\n"


def _step_line(step: dict[str, Any]) -> str:
    """``  2 files.write: published: /srv/reports/w10.md`` (what is outside escaped)."""
    line = f"  {step['step']} {printable(step['to'])}: {printable(step['state'])}"
    if step["location"]:
        line += f": {printable(step['location'])}"
    if step["detail"]:
        line += f" ({printable(step['detail'])})"
    return line


def _event_line(event: dict[str, Any]) -> str:
    at, state, detail = event["at"] or "?", printable(event["state"]), event["detail"] or ""
    return f"  {at:<24}  {state:<12}{printable(detail)}".rstrip()


#: The widest a cell of ``hz runs list`` may be (a state and its failure kind with their
#: markers, a job's name, where it ran): anything wider is cut, ending in "…".
CELL = 40
LIST_HEADER = ("RUN", "CREATED", "STATE", "JOB", "COST", "WHERE")


def list_cells(document: dict[str, Any]) -> tuple[str, ...]:
    """One run of ``hz runs list``: its cells, each escaped and cut to ``CELL`` columns, then
    what follows them (the tools that widened it, the columns hz cannot read)."""
    state = str(document["state"])
    if state not in STATES:  # edited by hand, or a newer hz's: said so, escaped, cut short
        state = "? " + state
    if document["failure_kind"]:
        state += f" ({document['failure_kind']})"
    if document.get("bad"):  # a value hz cannot read: marked, and its columns named
        state = "! " + state
    tail = []
    if document["session_widened"]:
        tail.append(f"widened: {printable(', '.join(document['session_widened']))}")
    if document.get("bad"):
        columns = ", ".join(b.split(":", 1)[0] for b in document["bad"])
        tail.append(f"bad values: {printable(columns)} (hz runs show)")
    return (
        printable(document["id"]),
        document["created_at"] or "?",
        cut(printable(state), CELL),
        cut(printable(str(document["job_name"] or "?")), CELL),
        _money(document["cost_usd"], 4),
        cut(printable(str(document["worker"] or document["host"] or "-")), CELL),
        "  ".join(tail),
    )


def list_table(documents: list[dict[str, Any]]) -> str:
    """``hz runs list``: a header, then a line per run, every column as wide as its widest
    cell (counted in a terminal's columns), the cost aligned right."""
    rows = [(*LIST_HEADER, ""), *(list_cells(d) for d in documents)]
    widths = [max(width(row[n]) for row in rows) for n in range(len(LIST_HEADER))]
    lines = []
    for row in rows:
        cells = [
            pad(cell, widths[n], right=LIST_HEADER[n] == "COST") for n, cell in enumerate(row[:-1])
        ]
        lines.append("  ".join([*cells, row[-1]]).rstrip())
    return "".join(line + "\n" for line in lines)


def finished_line(document: dict[str, Any], cwd: Path) -> str:
    """A run that finished, as a batch (``hz run -j``) and ``hz worker`` print it: its id, how
    it ended, the job and the file it was made from (relative to ``cwd`` when under it)."""
    state = document["state"]
    if document["failure_kind"]:
        state += f" ({document['failure_kind']})"
    line = f"{document['id']}  {state}  {document['job_name'] or '?'}"
    if document.get("target"):
        target = Path(document["target"])
        line += f"  {target.relative_to(cwd) if target.is_relative_to(cwd) else target}"
    return printable(line)


def _money(amount: float | None, places: int) -> str:
    return "?" if amount is None else f"${amount:.{places}f}"


def is_terminal(document: dict[str, Any]) -> bool:
    return document["state"] in TERMINAL


#: Exit status per terminal state (``hz runs wait``, ``hz run -j``), as ``hz run``'s table;
#: 9 is ``uncertain``, which ``hz run`` never reports for its own session.
STATE_EXIT: dict[str, int] = {
    RunState.COMPLETED: 0,
    RunState.FAILED: 4,
    RunState.TIMEOUT: 5,
    RunState.BUDGET: 6,
    RunState.CANCELLED: 7,
    RunState.UNCERTAIN: 9,
}


def exit_status(document: dict[str, Any]) -> int:
    if document["failure_kind"] == "budget_ceiling":
        return 6
    return STATE_EXIT.get(document["state"], 10)


def summarize_exits(codes: list[int]) -> int:
    """0 when every run completed, else the first run's status that was not 0."""
    return next((code for code in codes if code != 0), 0)
