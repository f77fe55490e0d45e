"""``hz runs``: the run ledger — list, show, wait, cancel, retry, reconcile, cost.

Every command first settles runs whose owner is gone (see ``hz runs reconcile``) and takes
``--format json`` (one JSON document, described by ``hz schema runs``).
"""

from __future__ import annotations

import re
import time
from collections import defaultdict
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import click

from hz.cli.counts import plural
from hz.cli.help import examples
from hz.cli.params import SECONDS, format_choice
from hz.runtime.artifacts.errors import HzError
from hz.runtime.artifacts.printable import printable, printable_json

FORMAT = format_choice(
    ("text", "json"),
    "text",
    "text for people; json: one JSON document on stdout (see hz schema runs).",
)


def open_ledger(fmt: str) -> tuple[Any, Any]:
    """The operator's ledger, reconciled (each settled run named on stderr), and the config."""
    from hz.runtime.config.layers import load_config
    from hz.runtime.ledger.session import open_ledger as open_

    config = load_config(cwd=Path.cwd(), runner_keys=False)
    ledger, settled = open_(config)
    click.get_current_context().call_on_close(ledger.close)
    report_settled(settled)
    return ledger, config


def report_settled(settled: list[Any]) -> None:
    for item in settled:
        click.echo(
            f"hz: reconciled {item.run_id}: {item.was} -> {item.state}: {printable(item.detail)}",
            err=True,
        )


def emit(document: Any, fmt: str, text: str) -> None:
    if fmt == "json":
        click.echo(printable_json(document))
    else:
        click.echo(text, nl=False)


def run_ids(values: tuple[str, ...]) -> tuple[str, ...]:
    """Run ids as ``hz runs list`` shows them; anything else is refused before the ledger is
    read (an id from outside may hold bytes that are not text)."""
    from hz.runtime.ledger.store import RUN_ID

    for value in values:
        if not RUN_ID.fullmatch(value):
            shown = printable(repr(value[:64])) + (" (…)" if len(value) > 64 else "")
            raise click.BadParameter(
                f"{shown} is not a run id (run_, a date as YYYYMMDD, _ and 12 hexadecimal "
                "digits, as hz runs list shows them)"
            )
    return values


@click.group(
    short_help="Inspect and control runs in the run ledger.",
    epilog=examples("hz runs list", "hz runs show run_20261201_3f0c9a1b2c4d --draft"),
)
def runs() -> None:
    """The run ledger: every run hz started or queued, its state and timeline.

    \b
    States: queued, prepared, dispatching, running, then one of completed, failed, timeout,
    budget, cancelled, uncertain (started, end not observed: never run again automatically).
    """


_SINCE = re.compile(r"^([0-9]+)([smhd])$")


def parse_since(value: str | None) -> float | None:
    if value is None:
        return None
    match = _SINCE.match(value)
    if match:
        seconds = int(match[1]) * {"s": 1, "m": 60, "h": 3600, "d": 86400}[match[2]]
        return time.time() - seconds
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError as e:
        raise click.BadParameter(
            f"{value!r} is neither a duration (30m, 12h, 7d) nor an ISO date or time"
        ) from e
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.timestamp()


def _states(incomplete: str) -> list[str]:
    from hz.runtime.ledger.store import STATES

    return [state for state in STATES if state.startswith(incomplete)]


def _count(value: int) -> int:
    if value < 1:
        raise click.BadParameter(f"{value} runs: give 1 or more (--all lists every run)")
    return value


#: How many runs ``hz runs list`` shows unless told otherwise.
LIST_LIMIT = 50


@runs.command(
    "list",
    epilog=examples("hz runs list --state failed --since 1d", "hz runs list --all --format json"),
)
@click.option(
    "--state",
    "states",
    multiple=True,
    shell_complete=lambda ctx, param, incomplete: _states(incomplete),
    help="Only runs in this state (repeatable).",
)
@click.option("--since", help="Only runs created since: a duration (30m, 12h, 7d) or ISO time.")
@click.option(
    "--limit",
    type=int,
    default=LIST_LIMIT,
    show_default=True,
    callback=lambda ctx, param, value: _count(value),
    help="Show the newest N runs.",
)
@click.option("--all", "every", is_flag=True, help="Show every run (no --limit).")
@FORMAT
def list_(states: tuple[str, ...], since: str | None, limit: int, every: bool, fmt: str) -> int:
    """List runs, newest first: the newest 50 (--limit N, --all), then how many more there
    are."""
    from hz.runtime.ledger.store import STATES
    from hz.runtime.ledger.view import list_table, run_json

    for state in states:
        if state not in STATES:
            raise click.BadParameter(
                f"unknown state {state!r} (one of {', '.join(STATES)})", param_hint="--state"
            )
    ledger, _ = open_ledger(fmt)
    rows, total = ledger.listed(states, parse_since(since), limit=None if every else limit)
    documents = [run_json(ledger, row, timeline=False) for row in rows]
    more = max(0, total - len(documents))
    text = list_table(documents) if documents else "no runs\n"
    if more:
        text += f"… {plural(more, 'more run')} (--limit N shows N, --all every run)\n"
    emit({"kind": "run_list", "runs": documents, "more": more}, fmt, text)
    return 0


@runs.command(
    epilog=examples(
        "hz runs show run_20261201_3f0c9a1b2c4d",
        "hz runs show run_20261201_3f0c9a1b2c4d --draft > draft.md",
    )
)
@click.argument("run_id", callback=lambda ctx, param, value: run_ids((value,))[0])
@click.option(
    "--transcript",
    is_flag=True,
    help="Print what the agent did too: the transcript beside the run's receipt.",
)
@click.option(
    "--draft",
    "draft_only",
    is_flag=True,
    help="Print only the run's draft, as hz run prints it (stderr says when it has none).",
)
@FORMAT
def show(run_id: str, transcript: bool, draft_only: bool, fmt: str) -> int:
    """One run: state, result, receipt and timeline, then its draft; with --transcript the
    run's transcript, as hz receipts show --transcript prints it (exit 1 with a warning when it
    no longer matches its receipt); with --draft the draft alone."""
    from hz.cli.transcripts import transcript_of, warn
    from hz.runtime.ledger.store import TERMINAL
    from hz.runtime.ledger.view import run_json, run_text

    if draft_only and (transcript or fmt == "json"):
        raise click.UsageError(
            "--draft prints the draft alone: not with --transcript or --format json (the JSON "
            "document holds it as result.draft)"
        )
    ledger, _ = open_ledger(fmt)
    document = run_json(ledger, ledger.get(run_id))
    draft = draft_of(document)
    if draft_only:
        if draft is None:
            click.echo(f"hz: run {run_id} ({state_of(document)}) has no draft", err=True)
        else:
            click.echo(shown_draft(draft), nl=False, color=True)  # as hz run: see there
        return 0
    text, warning = run_text(document), ""
    if draft is not None:
        text += "draft:\n" + shown_draft(draft)
    elif document["state"] in TERMINAL:
        text += "draft:       none\n"
    if transcript:
        if document["receipt"] is None:
            raise HzError(
                f"run {run_id} has no receipt, so no transcript",
                hint="a run keeps its transcript beside its receipt; it had --no-receipt, or "
                "has not ended",
            )
        receipt = Path(document["receipt"])
        if not receipt.is_absolute():  # recorded by an earlier hz, relative to where it ran
            receipt = Path(ledger.get(run_id).receipt_dir or ".") / receipt.name
        shown, shown_text, warning = transcript_of(receipt)
        document["transcript"] = shown
        text += shown_text
    if fmt == "text" and draft is not None:
        click.echo(text, nl=False, color=True)  # the draft as hz run prints it: see there
    else:
        emit(document, fmt, text)
    return warn(warning)


def draft_of(document: dict[str, Any]) -> str | None:
    """The draft of a run's result; None without one (or with one hz did not write: a row
    edited by hand may hold anything there)."""
    draft = (document["result"] or {}).get("draft")
    return draft if isinstance(draft, str) and draft else None


def shown_draft(draft: str) -> str:
    """A draft for stdout as hz run prints it: byte for byte into a file or a pipe, guarded for
    a terminal and a GitHub Actions log (``printable.guarded``); ending in a newline."""
    import os
    import sys

    from hz.runtime.artifacts.printable import guarded

    return guarded(draft if draft.endswith("\n") else draft + "\n", sys.stdout, os.environ)


def state_of(document: dict[str, Any]) -> str:
    kind = document["failure_kind"]
    return printable(document["state"] + (f" ({kind})" if kind else ""))


@runs.command(epilog=examples("hz runs wait run_20261201_3f0c9a1b2c4d --timeout 600"))
@click.argument(
    "run_ids", nargs=-1, required=True, callback=lambda ctx, param, value: run_ids(value)
)
@click.option("--timeout", type=SECONDS, help="Give up after this many seconds (exit 10).")
@FORMAT
def wait(run_ids: tuple[str, ...], timeout: float | None, fmt: str) -> int:
    """Wait until every run is terminal. Exit status: 0 all completed, else the first other
    run's (4 failed, 5 timeout, 6 budget, 7 cancelled, 9 uncertain); 10 when --timeout expired."""
    from hz.runtime.ledger.store import TERMINAL
    from hz.runtime.ledger.view import exit_status, run_json, summarize_exits

    ledger, _ = open_ledger(fmt)
    for run_id in run_ids:
        ledger.get(run_id)  # unknown ids fail before waiting
    deadline = None if timeout is None else time.monotonic() + timeout
    while True:
        rows = [ledger.get(run_id) for run_id in run_ids]
        if all(row.state in TERMINAL for row in rows):
            break
        if deadline is not None and time.monotonic() >= deadline:
            break
        time.sleep(0.1)
    documents = [run_json(ledger, row, timeline=False) for row in rows]
    pending = [d for d in documents if d["state"] not in TERMINAL]
    text = "".join(f"{d['id']}  {d['state']}\n" for d in documents)
    emit({"kind": "run_list", "runs": documents}, fmt, text)
    if pending:
        return 10
    return summarize_exits([exit_status(d) for d in documents])


@runs.command(epilog=examples("hz runs cancel run_20261201_3f0c9a1b2c4d"))
@click.argument(
    "run_ids", nargs=-1, required=True, callback=lambda ctx, param, value: run_ids(value)
)
@FORMAT
def cancel(run_ids: tuple[str, ...], fmt: str) -> int:
    """Cancel runs. Queued or prepared: cancelled, nothing ran. Dispatching or running: the
    agent's group gets SIGTERM, SIGKILL 2 s later; cancelled with what was read so far, or
    uncertain when nothing observed the end. Settles within 10 s."""
    from hz.runtime.ledger.cancel import cancel as cancel_run
    from hz.runtime.ledger.view import run_json

    ledger, _ = open_ledger(fmt)
    for run_id in run_ids:
        ledger.get(run_id)
    by = f"hz runs cancel ({ledger.who()})"
    documents = [run_json(ledger, cancel_run(ledger, run_id, by=by)) for run_id in run_ids]
    text = "".join(
        f"{d['id']}  {d['state']}" + (f" ({d['failure_kind']})" if d["failure_kind"] else "") + "\n"
        for d in documents
    )
    emit({"kind": "run_list", "runs": documents}, fmt, text)
    return 0


@runs.command(epilog=examples("hz runs retry run_20261201_3f0c9a1b2c4d"))
@click.argument("run_id", callback=lambda ctx, param, value: run_ids((value,))[0])
@FORMAT
def retry(run_id: str, fmt: str) -> int:
    """Queue a new run of the same request, linked to RUN_ID (for a worker, or adopted by the
    next hz run of the same request). Refused for completed and live runs."""
    from hz.runtime.ledger.view import run_json

    ledger, _ = open_ledger(fmt)
    new_id = ledger.retry(run_id)
    document = run_json(ledger, ledger.get(new_id))
    emit(document, fmt, f"{new_id}  queued (retry of {run_id})\n")
    return 0


@runs.command(epilog=examples("hz runs reconcile"))
@FORMAT
def reconcile(fmt: str) -> int:
    """Settle runs whose owner is gone: never dispatched -> failed (not_started), queued again;
    dispatched -> uncertain, its process group killed, its private files removed, a receipt
    written. Never relaunched. Every ledger command does this first."""
    from hz.runtime.config.layers import load_config
    from hz.runtime.ledger.session import open_ledger as open_

    config = load_config(cwd=Path.cwd(), runner_keys=False)
    ledger, settled = open_(config)
    click.get_current_context().call_on_close(ledger.close)
    document = {
        "kind": "reconcile",
        "settled": [
            {"id": s.run_id, "was": s.was, "state": s.state, "detail": s.detail} for s in settled
        ],
    }
    text = "".join(f"{s.run_id}  {s.was} -> {s.state}: {printable(s.detail)}\n" for s in settled)
    emit(document, fmt, text or "nothing to reconcile\n")
    return 0


@runs.command(epilog=examples("hz runs cost", "hz runs cost --by job --since 7d"))
@click.option(
    "--by", type=click.Choice(("job", "runner", "model", "day")), default="day", show_default=True
)
@click.option("--since", help="Only runs created since: a duration (30m, 12h, 7d) or ISO time.")
@FORMAT
def cost(by: str, since: str | None, fmt: str) -> int:
    """Spend from the ledger: the cost runners reported, and what is still reserved (uncertain
    runs and runners that report no cost keep their whole reservation)."""
    from hz.runtime.ledger.states import RunState

    ledger, _ = open_ledger(fmt)
    rows = ledger.dispatched_since(parse_since(since))
    groups: dict[str, dict[str, Any]] = defaultdict(
        lambda: {
            "runs": 0,
            "cost_usd": 0.0,
            "reserved_usd": 0.0,
            "unknown_cost_runs": 0,
            "over_budget_runs": 0,
            "over_budget_usd": 0.0,
        }
    )
    over_budget: list[dict[str, Any]] = []
    unreadable = 0
    for row in rows:
        if row.malformed:
            unreadable += 1  # its amounts or its day cannot be trusted: left out, and said
            continue
        if by == "day":
            name = datetime.fromtimestamp(row.dispatched_at or 0.0, UTC).date().isoformat()
        elif by == "model":
            model = (row.result or {}).get("model")
            name = model if isinstance(model, str) and model else "unknown"
        else:
            name = row.job_name if by == "job" else (row.runner or "unknown")
        group = groups[name]
        group["runs"] += 1
        group["reserved_usd"] += row.reserved_usd
        if row.cost_usd is None:
            group["unknown_cost_runs"] += 1
        else:
            group["cost_usd"] += row.cost_usd
            if row.state == RunState.BUDGET and row.cost_usd > row.max_usd + 1e-9:
                # A budget stop the CLI made after the turn that crossed it: paid in full.
                group["over_budget_runs"] += 1
                group["over_budget_usd"] += row.cost_usd - row.max_usd
                over_budget.append(
                    {
                        "id": row.id,
                        "job_name": row.job_name,
                        "runner": row.runner,
                        "cost_usd": round(row.cost_usd, 6),
                        "max_usd": row.max_usd,
                    }
                )
    if unreadable:
        click.echo(
            f"hz: warning: {plural(unreadable, 'run')} with values hz cannot read left out "
            "(hz runs list marks them)",
            err=True,
        )
    entries = [
        {"key": k, **{n: round(v, 6) if isinstance(v, float) else v for n, v in g.items()}}
        for k, g in sorted(groups.items())
    ]
    lines = [f"{'(' + by + ')':<24}{'runs':>6}{'cost':>12}{'reserved':>12}{'no cost':>9}"]
    lines += [
        # A model's name is what the runner reported: the agent's word.
        f"{printable(str(e['key'])):<24}{e['runs']:>6}{'$' + format(e['cost_usd'], '.4f'):>12}"
        f"{'$' + format(e['reserved_usd'], '.4f'):>12}{e['unknown_cost_runs']:>9}"
        for e in entries
    ]
    lines += [
        f"over budget: {o['id']} ({printable(o['job_name'])}) spent ${o['cost_usd']:.4f} against "
        f"${o['max_usd']:.2f}: the CLI checks between turns"
        for o in over_budget
    ]
    document = {"kind": "cost", "by": by, "groups": entries, "over_budget": over_budget}
    emit(document, fmt, "\n".join(lines) + "\n")
    return 0
