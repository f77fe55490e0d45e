"""``hz run``: build the packet (compiling and rendering when given a contract or a job), bind the
configured runner, run it once, write the receipt, print the result.

It belongs to the CLI layer: it may compile (``hz.compiler``) and runs through
``hz.runtime``.
"""

from __future__ import annotations

import atexit
import io
import json
import os
import shlex
import signal
import sys
import time
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import click

from hz.compiler.diagnostics import Diagnostic
from hz.runtime.models import Packet
from hz.runtime.protocol import AgentRunner, RunPlan, RunRequest
from hz.runtime.result import AgentResult

#: Exit status per run status. 1 is "the packet could not be built" (contract or input
#: diagnostics), 2 a usage or configuration error, 3 a bug: none of them is a run status.
EXIT_CODES: dict[str, int] = {
    "completed": 0,
    "failed": 4,
    "timeout": 5,
    "budget": 6,
    "cancelled": 7,
    "uncertain": 9,
}
#: The session ran, but its receipt could not be written.
RECEIPT_NOT_WRITTEN = 8


@click.command(short_help="Run a packet, job or contract through the configured agent runner.")
@click.argument(
    "target", metavar="PACKET|JOB|CONTRACT", type=click.Path(dir_okay=False, path_type=Path)
)
@click.option(
    "--inputs",
    "inputs_file",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Input values for a job or contract: a JSON or YAML file holding one mapping.",
)
@click.option(
    "--input",
    "input_args",
    multiple=True,
    metavar="NAME=VALUE|NAME=@FILE",
    help="One input value (repeatable), as for hz render.",
)
@click.option(
    "--workdir",
    type=click.Path(file_okay=False, path_type=Path),
    default=".",
    show_default=True,
    help="The directory the agent may read; it must exist.",
)
@click.option(
    "--receipt-dir",
    type=click.Path(file_okay=False, path_type=Path),
    help="Where the receipt is chained [default: [system.runner] receipt_dir, else "
    "WORKDIR/.hz-receipts].",
)
@click.option("--no-receipt", is_flag=True, help="Write no receipt for this run.")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(("text", "json")),
    default="text",
    show_default=True,
    help="text: the draft on stdout, a summary on stderr; json: exactly one JSON object, "
    "the result (or with --dry-run the plan), on stdout.",
)
@click.option("--dry-run", is_flag=True, help="Print what would run; start nothing.")
@click.option("-q", "--quiet", is_flag=True, help="No progress and no summary on stderr.")
def run(
    target: Path,
    inputs_file: Path | None,
    input_args: tuple[str, ...],
    workdir: Path,
    receipt_dir: Path | None,
    no_receipt: bool,
    fmt: str,
    dry_run: bool,
    quiet: bool,
) -> int:
    """Run one bounded agent session for a packet, a job (rendered with --inputs/--input) or a
    contract (compiled and rendered in memory), with the runner bound in the configuration.

    \b
    Exit status:
      0  completed
      1  the contract or the input values have errors (reported on stderr)
      2  usage or configuration error (nothing was started)
      3  unexpected error (a bug in hz)
      4  failed      5  timeout      6  budget      7  cancelled
      8  the run ended (its result printed) but the receipt could not be written
      9  uncertain: cancelled or lost where the agent may have acted unobserved
    """
    from hz import __version__
    from hz.cli.compile import files_read
    from hz.compiler.report.formats import write_report
    from hz.runtime.config.layers import load_config
    from hz.runtime.execute import bind

    config = load_config(cwd=Path.cwd())
    packet, diagnostics = _packet(target, inputs_file, input_args, config.max_usd_ceiling)
    if diagnostics:
        write_report(
            diagnostics,
            fmt="text",
            files_checked=files_read(target, inputs_file, input_args),
            out=sys.stderr,
            err=sys.stderr if packet is None else io.StringIO(),
            tool_version=__version__,
        )
    if packet is None:
        return 1
    _check_ceiling(target, packet, config.max_usd_ceiling)
    runner_name = config.agent_runner
    runner = bind(config)
    request = RunRequest.for_packet(packet, workdir=workdir)
    if dry_run:
        the_plan = runner.plan(request)
        limits = {
            "timeout_seconds": packet.job.timeout_seconds,
            "max_usd": packet.job.budget.max_usd,
        }
        if fmt == "json":
            click.echo(json.dumps(plan_json(runner_name, the_plan, limits), ensure_ascii=False))
        else:
            click.echo(plan_text(runner_name, the_plan, limits), nl=False)
        problem = missing_program(the_plan)
        if problem is not None:
            click.echo(f"hz: warning: {problem}", err=True)
            click.echo("  hint: hz doctor checks the bound runner", err=True)
        return 0
    started = datetime.now(UTC)
    result = _execute(runner_name, runner, request, quiet)
    ended = datetime.now(UTC)
    receipt, receipt_error = None, None
    if not no_receipt:
        from hz.runtime.errors import HzError
        from hz.runtime.receipts.write import DEFAULT_DIR, receipt_body, write_receipt
        from hz.runtime.runners.settings import SharedSettings

        configured = SharedSettings.from_config(config).receipt_dir
        directory = receipt_dir or Path(configured or workdir / DEFAULT_DIR)
        body = receipt_body(packet, result, started_at=started, ended_at=ended)
        try:
            receipt = write_receipt(directory, body)
        except HzError as e:
            receipt_error = e  # the result is printed first: the run happened
    try:
        if fmt == "json":
            click.echo(json.dumps(result.to_json_data(), ensure_ascii=False))
        elif result.draft:
            click.echo(result.draft, nl=not result.draft.endswith("\n"))
    except BrokenPipeError:
        # The reader went away (`hz run ... | head -1`). The run happened and its receipt is
        # written: its status is the exit status, not click's "1" for a broken pipe.
        _drop_stdout()
    if not quiet:
        from hz.runtime.printable import printable

        lines = summary(result, receipt).split("\n")  # the stderr tail comes from the agent
        click.echo("\n".join(printable(line) for line in lines), err=True)
    if receipt_error is not None:
        # The session ran (and may have cost money): not a "nothing started" exit 2.
        click.echo(f"hz: error: {receipt_error.message}", err=True)
        click.echo(
            "  hint: the run itself ended and its result is printed; only the receipt is missing",
            err=True,
        )
        return RECEIPT_NOT_WRITTEN
    return EXIT_CODES[result.status]


def _drop_stdout() -> None:
    """Send what is left of stdout to /dev/null, so flushing it at exit fails no more."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)


def _check_ceiling(target: Path, packet: Packet, ceiling: float) -> None:
    """A job or packet compiled elsewhere is held to this machine's ceiling too."""
    budget = packet.job.budget.max_usd
    if budget > ceiling:
        from hz.runtime.errors import ConfigError

        raise ConfigError(
            f"{target}: the job's budget of {budget:g} US dollars is over this machine's "
            f"ceiling of {ceiling:g}",
            hint="the operator sets the ceiling: [authoring] max_usd_ceiling (see hz config show)",
        )


def _packet(
    target: Path, inputs_file: Path | None, input_args: tuple[str, ...], ceiling: float
) -> tuple[Packet | None, list[Diagnostic]]:
    # A packet, too, goes through the compiler: its prompt is checked by rendering it again.
    from hz.compiler.render.packet import packet_from_path

    return packet_from_path(
        target, inputs_file=inputs_file, input_args=input_args, max_usd_ceiling=ceiling
    )


class Terminated(BaseException):
    """SIGTERM, SIGHUP or SIGQUIT during a run, raised like KeyboardInterrupt so the process
    chokepoint kills the run's process group on the way out (their default action would end
    hz and leave the agent running, orphaned, with its private files on disk)."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signal_name = signal.Signals(signum).name


#: The signals that end a run as ``cancelled`` besides SIGINT (KeyboardInterrupt).
_ENDING_SIGNALS = (signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT)


class _Cancellation:
    """The first ending signal cancels the run; every later one is ignored, so it cannot cut
    short the killing of the run's processes, the removal of its private files, or the
    writing of its receipt. At exit they become ``SIG_IGN``: the interpreter restores the
    default action of a Python handler while it shuts down, and would die of one more.
    (Not earlier: a signal that arrives as the handler changes to ``SIG_IGN`` makes the
    interpreter print a warning.)
    """

    def __init__(self, signals: tuple[signal.Signals, ...]) -> None:
        self.signals = signals
        self.started = False

    def __call__(self, signum: int, frame: object) -> None:
        if self.started:
            return
        self.started = True
        atexit.register(self.ignore)
        if signum == signal.SIGINT:
            raise KeyboardInterrupt
        raise Terminated(signum)

    def ignore(self) -> None:
        for signum in self.signals:
            signal.signal(signum, signal.SIG_IGN)


def _execute(
    runner_name: str, runner: AgentRunner, request: RunRequest, quiet: bool
) -> AgentResult:
    from hz.runtime.execute import execute

    started = time.monotonic()
    handled: tuple[signal.Signals, ...] = _ENDING_SIGNALS
    if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
        handled += (signal.SIGINT,)  # not when started with SIGINT ignored (a background job)
    cancellation = _Cancellation(handled)
    previous = {signum: signal.signal(signum, cancellation) for signum in handled}
    try:
        if quiet or not sys.stderr.isatty():
            return execute(runner, request)
        from hz.runtime.progress import TerminalProgress

        with TerminalProgress(sys.stderr) as progress:
            return execute(runner, replace(request, progress=progress))
    except (KeyboardInterrupt, Terminated) as e:
        signal_name = "SIGINT" if isinstance(e, KeyboardInterrupt) else e.signal_name
        return AgentResult(
            runner=runner_name,
            status="cancelled",
            failure_kind="aborted",
            duration_seconds=time.monotonic() - started,
            reason=f"hz was interrupted ({signal_name}); the run's processes were killed",
        )
    finally:
        if not cancellation.started:  # else keep ignoring: the receipt is still to be written
            for signum, handler in previous.items():
                signal.signal(signum, handler)


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
        parts[0] += f": {result.reason}"
    parts.append(f"runner {result.runner}")
    if result.model:
        parts.append(f"model {result.model}")
    # At a turn limit the reason names the limit; the CLI's own count of turns (which may
    # count the turn it stopped in) would only contradict it.
    if result.turns is not None and result.failure_kind != "max_turns":
        parts.append(f"{result.turns} turn{'' if result.turns == 1 else 's'}")
    parts.append(f"{len(result.tool_calls)} tool call{'' if len(result.tool_calls) == 1 else 's'}")
    if result.cost_usd is not None:
        parts.append(f"${result.cost_usd:.4f}")
    parts.append(f"{result.duration_seconds:.1f}s")
    if result.limits_unenforced:
        parts.append(f"not enforced: {', '.join(result.limits_unenforced)}")
    if result.session_widened:
        parts.append(f"session widened: {', '.join(result.session_widened)} (network)")
    if receipt is not None:
        parts.append(f"receipt {receipt}")
    text = " · ".join(parts)
    tail = result.stderr_tail.rstrip().splitlines()[-STDERR_LINES:]
    if result.status != "completed" and tail:
        text += "\n  the agent's stderr, last lines:\n" + "\n".join(f"    {line}" for line in tail)
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


def plan_json(runner: str, the_plan: RunPlan, limits: dict[str, Any]) -> dict[str, Any]:
    return {
        "dry_run": True,
        "runner": runner,
        "argv": list(the_plan.argv),
        "cwd": the_plan.cwd,
        "env_names": list(the_plan.env_names),
        "files": [{"role": role, "path": path} for role, path in the_plan.files],
        "stdin": the_plan.stdin,
        **limits,
        "limits_unenforced": list(the_plan.limits_unenforced),
        "session_widened": list(the_plan.session_widened),
    }


def plan_text(runner: str, the_plan: RunPlan, limits: dict[str, Any]) -> str:
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
    lines = ["hz run --dry-run: nothing was started"]
    lines += [f"  {name + ':':<14}{value}" for name, value in rows]
    return "\n".join(lines) + "\n"
