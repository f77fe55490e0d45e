"""``hz run``: build the packet (compiling and rendering when given a contract or a job), bind the
configured runner, run it once, write the receipt, print the result.

It belongs to the CLI layer: it may compile (``hz.compiler``) and runs through
``hz.runtime``.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import sys
import time
from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import click

from hz.cli.closed_stdout import drop_stdout
from hz.cli.counts import plural
from hz.cli.help import examples
from hz.cli.params import jobs_option
from hz.cli.request_options import (
    RunTargets,
    ceiling_of,
    report_error,
    reported_packets,
    request_options,
)
from hz.runtime.artifacts.models import Packet
from hz.runtime.artifacts.printable import guarded, printable, printable_json
from hz.runtime.artifacts.result import AgentResult
from hz.runtime.ledger.states import RunState
from hz.runtime.ledger.view import STATE_EXIT
from hz.runtime.runners.protocol import AgentRunner, RunPlan, RunRequest

#: Exit status per run status: the run ledger's table, which ``hz runs wait`` and a batch exit
#: by too. 1 is "the packet could not be built" (contract or input diagnostics), 2 a usage or
#: configuration error, 3 a bug: none of them is a run status.
EXIT_CODES: dict[str, int] = STATE_EXIT
#: The session ran, but its receipt could not be written.
RECEIPT_NOT_WRITTEN = 8
#: The agent was started and nothing observed how it ended (the run ledger's ``uncertain``).
UNCERTAIN = EXIT_CODES[RunState.UNCERTAIN]


@click.command(
    short_help="Run a packet, job or contract through the configured agent runner.",
    epilog=examples(
        "hz run contracts/weekly.yaml --input week=2026-W49",
        "hz run -j 4 build/packets/*.json --format jsonl",
    ),
)
@request_options
@jobs_option("Run the targets as one batch, N at once, through the run ledger.")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(("text", "json", "jsonl")),
    default="text",
    show_default=True,
    help="text: the draft on stdout, a summary on stderr; json: exactly one JSON object, "
    "the result (or with --dry-run the plan; for a batch the list of runs), on stdout; "
    "jsonl: one JSON line per finished run (a batch).",
)
@click.option("--dry-run", is_flag=True, help="Print what would run; start nothing.")
@click.option("-q", "--quiet", is_flag=True, help="No progress and no summary on stderr.")
@click.option(
    "--no-ledger",
    is_flag=True,
    help="Do not record the run in the run ledger: no request key, no recovery of the run "
    "after a crash of hz.",
)
def run(
    asked: RunTargets,
    jobs: int | None,
    fmt: str,
    dry_run: bool,
    quiet: bool,
    no_ledger: bool,
) -> int:
    """Run one bounded agent session for a packet, a job (rendered with --inputs/--input) or a
    contract (compiled and rendered in memory), with the runner bound in the configuration.
    Every run is recorded in the run ledger (hz runs) before its agent starts; several
    targets, or -j N, run as one batch.

    \b
    Exit status:
      0  completed (a batch: every run completed)
      1  the contract or the input values have errors (reported on stderr)
      2  usage or configuration error, or the --request-key has a run or names another
         request (nothing was started; without a key every hz run is a new run)
      3  unexpected error (a bug in hz)
      4  failed      5  timeout      6  budget, or a spend ceiling (nothing was started)
      7  cancelled   9  uncertain (the agent started; nothing observed its end)
      8  the run ended (its result printed) but its receipt, or its record in the run
         ledger (a full disk: the result is saved to a file, named), could not be written
    A batch exits with the first status other than 0 among its runs.
    """
    from hz.runtime.config.layers import load_config
    from hz.runtime.execution.execute import admit
    from hz.runtime.ledger.owner import Binding

    if len(asked.targets) > 1 or jobs is not None:
        if dry_run or no_ledger or asked.request_key is not None:
            raise click.UsageError(
                "--dry-run, --no-ledger and --request-key (or HZ_REQUEST_KEY) take one target "
                "(no -j)"
            )
        return _batch(asked, jobs or 1, fmt, quiet)
    config = load_config(cwd=Path.cwd())
    packets = reported_packets(asked, config.highest_ceiling(), ceiling_of(config), config=config)
    if packets is None:
        return 1
    [packet] = packets
    # Every jobs table is bound (a misconfiguration starts nothing), this job's applies.
    binding = Binding.from_config(config).for_job(packet.job.name)
    runner_name, runner = binding.name, binding.runner
    request = RunRequest.for_packet(packet, workdir=asked.workdir)
    admit(config.for_job(packet.job.name), request)  # the pre-run gate: RunnerError (exit 2)
    from hz.cli.publish import refuse_undeliverable

    refuse_undeliverable(config, packet, asked.workdir)  # before the session: no money spent
    if dry_run:
        the_plan = runner.plan(request)  # names the unenforced needs too
        limits = {
            "timeout_seconds": packet.job.timeout_seconds,
            "max_usd": packet.job.budget.max_usd,
        }
        if fmt == "json":
            click.echo(printable_json(plan_json(runner_name, the_plan, limits, binding.table)))
        else:
            click.echo(plan_text(runner_name, the_plan, limits, binding.table), nl=False)
        problem = missing_program(the_plan)
        if problem is not None:
            click.echo(f"hz: warning: {problem}", err=True)
            click.echo("  hint: hz doctor checks the bound runner", err=True)
        return 0
    receipts = asked.receipts(config)
    if not no_ledger:
        return _in_ledger(config, binding, packet, asked, receipts, fmt, quiet)
    started = datetime.now(UTC)
    result = _execute(runner_name, runner, request, quiet)
    ended = datetime.now(UTC)
    receipt, receipt_error = None, None
    if receipts is not None:
        from hz.runtime.artifacts.errors import HzError
        from hz.runtime.receipts.write import receipt_and_transcript, write_receipt

        body, transcript = receipt_and_transcript(
            packet, result, started_at=started, ended_at=ended
        )
        try:
            receipt = write_receipt(receipts, body, transcript)
        except HzError as e:
            receipt_error = e  # the result is printed first: the run happened
    return report(result, receipt, receipt_error, fmt, quiet)


def report(
    result: AgentResult, receipt: Path | None, receipt_error: Any, fmt: str, quiet: bool
) -> int:
    """Print the result (stdout) and the summary (stderr); the exit status."""
    try:
        if fmt != "text":
            click.echo(printable_json(result.to_json_data()))
        elif result.draft:
            draft = result.draft if result.draft.endswith("\n") else result.draft + "\n"
            # color=True: click would strip ANSI sequences from the agent's text into a pipe
            # (guarded has escaped them for a terminal already).
            click.echo(guarded(draft, sys.stdout, os.environ), nl=False, color=True)
    except BrokenPipeError:
        # The reader went away (`hz run ... | head -1`). The run happened and its receipt is
        # written: its status is the exit status, not click's "1" for a broken pipe.
        drop_stdout()

    if not quiet:
        lines = summary(result, receipt).split("\n")  # the stderr tail comes from the agent
        click.echo("\n".join(printable(line) for line in lines), err=True)
    if receipt_error is not None:
        # The session ran (and may have cost money): not a "nothing started" exit 2.
        click.echo(f"hz: error: {printable(receipt_error.message)}", err=True)
        if receipt_error.hint:
            click.echo(f"  hint: {printable(receipt_error.hint)}", err=True)
        click.echo(
            "  hint: the run itself ended and its result is printed; only the receipt is missing",
            err=True,
        )
        return RECEIPT_NOT_WRITTEN
    return EXIT_CODES[result.status]


def _in_ledger(
    config: Any,
    binding: Any,
    packet: Packet,
    asked: RunTargets,
    receipts: Path | None,
    fmt: str,
    quiet: bool,
) -> int:
    from hz.cli.runs import report_settled
    from hz.runtime.ledger.foreground import run_foreground
    from hz.runtime.ledger.session import open_ledger, policy

    ledger, settled = open_ledger(config)
    click.get_current_context().call_on_close(ledger.close)
    if not quiet:
        report_settled(settled)
    request = asked.request(packet, receipts, asked.targets[0])
    earlier: list[Any] = []  # the attempts that ended in an automatic retry
    with contextlib.ExitStack() as stack:
        progress = None
        if not quiet and sys.stderr.isatty():
            from hz.cli.progress import TerminalProgress

            progress = stack.enter_context(TerminalProgress(sys.stderr))

        def on_retry(retry: Any) -> None:
            earlier.append(retry.after)
            if not quiet:
                line = printable(retrying_line(retry))
                progress.note(line) if progress is not None else click.echo(line, err=True)

        outcome = run_foreground(
            ledger,
            request,
            binding=binding,
            policy=policy(config),
            progress=progress,
            on_retry=on_retry,
        )
    if outcome.result is None:
        # Nothing was spawned: a spend ceiling, or a cancel before the agent started.
        label = outcome.state + (f" ({outcome.failure_kind})" if outcome.failure_kind else "")
        click.echo(f"hz: {label}: {outcome.reason}; nothing was started", err=True)
        if earlier:
            click.echo(f"  {printable(attempts_part(attempts_of(earlier)))} before it", err=True)
        click.echo(f"  run {outcome.run_id} (hz runs show {outcome.run_id})", err=True)
        return 6 if outcome.failure_kind == "budget_ceiling" else EXIT_CODES["cancelled"]
    result = outcome.result
    if earlier:
        every = attempts_of([*earlier, outcome])
        result = result.model_copy(update={"attempts": every})
    code = report(result, outcome.receipt, outcome.receipt_error, fmt, quiet)
    error = outcome.unrecorded_error()
    if error is not None:
        # The session ran and its result is printed, but the ledger could not take it: the
        # same "a record is missing" status as a receipt that could not be written.
        click.echo(f"hz: error: {printable(error.message)}", err=True)
        click.echo(f"  hint: its result is printed above; {printable(error.hint or '')}", err=True)
        return RECEIPT_NOT_WRITTEN
    if packet.publishes and outcome.state == RunState.COMPLETED:
        from hz.cli.publish import publish_completed

        code = max(code, publish_completed(ledger, config, outcome.run_id))
    uncertain = outcome.state == RunState.UNCERTAIN
    return UNCERTAIN if uncertain and code != RECEIPT_NOT_WRITTEN else code


def retrying_line(retry: Any) -> str:
    """What a foreground run says as it starts waiting for an automatic retry."""
    after = retry.after
    kind = after.failure_kind or after.state
    why = f" ({after.reason})" if after.reason else ""
    return (
        f"hz: attempt {retry.attempt} of {retry.max_attempts} after {kind}{why}: waiting "
        f"{retry.wait_seconds:.1f} s"
    )


def attempts_of(outcomes: list[Any]) -> tuple[Any, ...]:
    """The attempts of a foreground run, as its result names them; each had an agent started,
    so each may have been billed."""
    from hz.runtime.artifacts.result import Attempt

    return tuple(
        Attempt(
            run_id=o.run_id,
            status=o.result.status,
            failure_kind=o.result.failure_kind,
            cost_usd=o.result.cost_usd,
            duration_seconds=o.result.duration_seconds,
        )
        for o in outcomes
        if o.result is not None
    )


def attempts_part(attempts: tuple[Any, ...]) -> str:
    """``3 attempts, $0.0060 in all``: what every attempt cost together, and how many did
    not say."""
    known = [a.cost_usd for a in attempts if a.cost_usd is not None]
    part = f"{plural(len(attempts), 'attempt')}, ${sum(known):.4f} in all"
    unknown = len(attempts) - len(known)
    if unknown:
        part += f" ({unknown} without a reported cost)"
    return part


def _batch(asked: RunTargets, jobs: int, fmt: str, quiet: bool) -> int:
    from hz.cli.ledger_run import run_batch
    from hz.cli.publish import refuse_undeliverable
    from hz.cli.runs import report_settled
    from hz.runtime.artifacts.errors import HzError
    from hz.runtime.artifacts.models import ToolProfile
    from hz.runtime.config.layers import load_config
    from hz.runtime.ledger.foreground import Request
    from hz.runtime.ledger.owner import Binding
    from hz.runtime.ledger.session import open_ledger, policy

    config = load_config(cwd=Path.cwd())
    binding = Binding.from_config(config)  # a misconfiguration starts nothing
    ToolProfile().bind(asked.workdir)  # the workdir must exist
    receipts = asked.receipts(config)
    ledger, settled = open_ledger(config)
    click.get_current_context().call_on_close(ledger.close)
    if not quiet:
        report_settled(settled)

    def requests() -> Iterator[Request | None]:
        # One target at a time, as the batch takes it: no packet is built before a slot can
        # run it, and none is kept after its run is in the ledger.
        for target in asked.targets:
            try:
                packets = reported_packets(
                    asked.one(target), config.highest_ceiling(), ceiling_of(config), config=config
                )
                for packet in packets or ():
                    refuse_undeliverable(config, packet, asked.workdir)
            except HzError as e:
                report_error(e)
                packets = None
            if packets is None:
                yield None
                continue
            [packet] = packets
            yield asked.request(packet, receipts, target, keyed=False)

    return run_batch(
        ledger,
        requests(),
        total=len(asked.targets),
        jobs=jobs,
        config=config,
        binding=binding,
        policy=policy(config),
        fmt=fmt,
        quiet=quiet,
    )


def _execute(
    runner_name: str, runner: AgentRunner, request: RunRequest, quiet: bool
) -> AgentResult:
    """Run without the ledger. The first cancel signal sets a cancel token the process
    chokepoint polls (the run's group is killed at once); later ones are ignored, so they
    cannot cut short the killing of the run's processes, the removal of its private files,
    or the writing of its receipt (``hz.runtime.process.signals``)."""
    from hz.runtime.execution.execute import execute
    from hz.runtime.process.cancel import CancelToken, cancelling
    from hz.runtime.process.signals import routed

    started = time.monotonic()
    token = CancelToken()
    with routed(token.cancel), cancelling(token):
        if quiet or not sys.stderr.isatty():
            result = execute(runner, request)
        else:
            from hz.cli.progress import TerminalProgress

            with TerminalProgress(sys.stderr) as progress:
                result = execute(runner, replace(request, progress=progress))
    if token.cancelled and result.status not in ("cancelled", "uncertain"):
        # Killed at once by the chokepoint: what the runner made of that is no verdict.
        return AgentResult(
            runner=runner_name,
            status="cancelled",
            failure_kind="aborted",
            duration_seconds=time.monotonic() - started,
            reason=f"hz was interrupted ({token.reason}); the run's processes were killed",
        )
    return result


#: How many of the agent's last stderr lines a failed run's text summary shows.
STDERR_LINES = 10


def summary(result: AgentResult, receipt: Path | None) -> str:
    """For people on stderr: one line saying how the run ended and what it cost (values the
    runner did not report are left out), then for a run that did not complete the last lines
    the agent wrote on stderr."""
    head = (
        result.status if result.failure_kind is None else f"{result.status} ({result.failure_kind})"
    )
    parts = [f"hz: {head}"]
    if result.reason and result.status != "completed":
        parts[0] += f": {printable(result.reason)}"  # often the agent's own words
    parts.append(f"runner {result.runner}")
    if result.model:
        parts.append(f"model {printable(result.model)}")
    # At a turn limit the reason names the limit; the CLI's own count of turns (which may
    # count the turn it stopped in) would only contradict it.
    if result.turns is not None and result.failure_kind != "max_turns":
        parts.append(plural(result.turns, "turn"))
    parts.append(plural(len(result.tool_calls), "tool call"))
    if result.cost_usd is not None:
        parts.append(f"${result.cost_usd:.4f}")
    if len(result.attempts) > 1:
        parts.append(attempts_part(result.attempts))
    parts.append(f"{result.duration_seconds:.1f}s")
    if result.limits_unenforced:
        parts.append(f"not enforced: {', '.join(result.limits_unenforced)}")
    if result.session_widened:
        parts.append(f"session widened: {', '.join(result.session_widened)} (network)")
    if result.output_truncated:
        left_out = sum(n for note, n in result.protocol_notes.items() if "(output cap)" in note)
        parts.append(f"output over the cap: {left_out} left out" if left_out else "output cut")
    if receipt is not None:
        parts.append(f"receipt {receipt}")
    text = " · ".join(parts)
    tail = result.stderr_tail.rstrip().splitlines()[-STDERR_LINES:]
    if result.status != "completed" and tail:
        lines = (f"    {printable(line)}" for line in tail)
        text += "\n  the agent's stderr, last lines:\n" + "\n".join(lines)
    return text


def missing_program(the_plan: RunPlan) -> str | None:
    """``hz doctor``'s executable check for a dry run: why the program the run would start
    cannot be started (the run would end ``failed``, ``launch_failed``), or None."""
    if not the_plan.argv:
        return None
    from hz.runtime.runners.executables import resolve_executable, why_unusable

    program = the_plan.argv[0]
    if resolve_executable(program, os.environ) is not None:
        return None
    return f"{program}: {why_unusable(program)}; the run would fail to start (launch_failed)"


def plan_json(
    runner: str, the_plan: RunPlan, limits: dict[str, Any], table: str | None = None
) -> dict[str, Any]:
    return {
        "dry_run": True,
        "runner": runner,
        "jobs_table": table,
        "argv": list(the_plan.argv),
        "cwd": the_plan.cwd,
        "env_names": list(the_plan.env_names),
        "files": [{"role": role, "path": path} for role, path in the_plan.files],
        "stdin": the_plan.stdin,
        **limits,
        "limits_unenforced": list(the_plan.limits_unenforced),
        "session_widened": list(the_plan.session_widened),
    }


def plan_text(
    runner: str, the_plan: RunPlan, limits: dict[str, Any], table: str | None = None
) -> str:
    argv = shlex.join(the_plan.argv) if the_plan.argv else "(none: this runner starts no process)"
    rows = [
        ("runner", runner),
        ("argv", argv),
        ("cwd", the_plan.cwd),
        ("stdin", the_plan.stdin),
        ("environment", " ".join(the_plan.env_names) or "(none)"),
    ]
    rows += [("file", f"{role}: {path}") for role, path in the_plan.files]
    rows += [
        ("timeout", f"{limits['timeout_seconds']} s"),
        ("budget", f"${limits['max_usd']:.2f}"),
        ("not enforced", ", ".join(the_plan.limits_unenforced) or "(none)"),
    ]
    if the_plan.session_widened:
        rows.append(("widened", f"{', '.join(the_plan.session_widened)} (network)"))
    rows.append(("bound by", table or "the base tables (no jobs table matches)"))
    lines = ["hz run --dry-run: nothing was started"]
    lines += [f"  {name + ':':<14}{value}" for name, value in rows]
    return "\n".join(lines) + "\n"
