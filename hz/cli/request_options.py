"""What ``hz run`` and ``hz submit`` share about targets: the targets and options that say
what to run (click parses them, and the command gets them as one frozen value, ``RunTargets``),
a packet per target with its diagnostics reported (``reported_packets``), and the ledger's
request for a packet (``RunTargets.request``: the request key, opt-in)."""

from __future__ import annotations

import functools
import io
import sys
from collections.abc import Callable
from dataclasses import dataclass, fields, replace
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from hz.cli.fetching import AT
from hz.runtime.artifacts.models import Packet
from hz.runtime.artifacts.problem import Problem

if TYPE_CHECKING:
    from hz.compiler.render.packet import JobFetch
    from hz.runtime.ledger.foreground import Request

R = TypeVar("R")


@dataclass(frozen=True, slots=True)
class RunTargets:
    """What a command was asked to run: the targets, their input values, the working directory,
    where receipts go and how the request is named."""

    targets: tuple[Path, ...]
    inputs_file: Path | None
    input_args: tuple[str, ...]
    workdir: Path
    receipt_dir: Path | None
    no_receipt: bool
    request_key: str | None
    force_new: bool
    #: ``--at``: the time the fetched inputs' windows resolve at (None: now).
    at: datetime | None = None

    def one(self, target: Path) -> RunTargets:
        """The same request for one of the targets."""
        return replace(self, targets=(target,))

    def request(
        self, packet: Packet, receipts: Path | None, target: Path, *, keyed: bool = True
    ) -> Request:
        """The ledger's request for ``packet``, made from ``target`` (one of the targets):
        under ``--request-key`` when ``keyed`` and one was given, else a new run with a key of
        its own (``Request.of``)."""
        from hz.runtime.ledger.foreground import Request

        return Request.of(
            packet,
            key=self.request_key if keyed else None,
            workdir=self.workdir,
            receipt_dir=receipts,
            force_new=self.force_new,
            target=target,
        )

    def receipts(self, config: Any) -> Path | None:
        """``--receipt-dir``, else the operator's receipt directory (``receipt_home``, created
        when it is the state directory's); None with ``--no-receipt``."""
        if self.no_receipt:
            return None
        if self.receipt_dir is not None:
            return self.receipt_dir
        return self.receipts_of(config)

    @staticmethod
    def receipts_of(config: Any) -> Path:
        """The operator's receipt directory (``receipt_home``, created when it is the state
        directory's): where a run queued without options chains its receipt."""
        home, in_state = receipt_home(config)
        if in_state:
            from hz.runtime.ledger.private import private_dir

            # Beside the ledger, held to its rule: this user's alone (created 0700 if missing).
            private_dir(home.parent)
            private_dir(home, "the receipt directory")
        return home


def receipt_home(config: Any) -> tuple[Path, bool]:
    """Where ``hz run`` chains its receipts unless told otherwise (``hz receipts`` looks there
    by default): ``[system.runner] receipt_dir``, else ``receipts/`` in the operator's state
    directory, beside the run ledger (not in the working tree, where it would show in
    ``git status`` and the repository could plant files in it); and whether it is the latter."""
    from hz.runtime.runners.settings import SharedSettings

    configured = SharedSettings.from_config(config).receipt_dir
    if configured:
        return Path(configured), False
    from hz.runtime.config.tables import SystemSettings
    from hz.runtime.ledger.paths import state_dir
    from hz.runtime.receipts.write import DEFAULT_DIR

    return state_dir(SystemSettings.from_config(config)) / DEFAULT_DIR, True


_FIELDS = tuple(field.name for field in fields(RunTargets))


def _named(ctx: click.Context, param: click.Parameter, key: str | None) -> str | None:
    """A key is checked as it is parsed, before any database is touched. An empty one (an
    unset variable in ``--request-key "$KEY"``) names no request: refused, not taken as none."""
    if key is None:
        return None
    from hz.runtime.ledger.keys import KEY_RULE, key_problem, normal_key, reserved_problem

    key = normal_key(key)  # one key for spellings that print alike (NFC)
    problem = key_problem(key)
    reserved = reserved_problem(key) if problem is None else None
    if problem is None and reserved is None:
        return key
    source = ctx.get_parameter_source(param.name or "")
    where = "HZ_REQUEST_KEY" if source is click.ParameterSource.ENVIRONMENT else None
    if problem is None:
        why = str(reserved)
    elif not key.strip(" "):
        why = f"{problem}; leave the option out to start a new run"
    else:
        why = f"{problem}; a request key is {KEY_RULE}"
    raise click.BadParameter(why, param_hint=where or "--request-key")


_TARGETS = click.argument(
    "targets",
    nargs=-1,
    required=True,
    metavar="PACKET|JOB|CONTRACT...",
    type=click.Path(dir_okay=False, path_type=Path),
)

_OPTIONS = (
    click.option(
        "--inputs",
        "inputs_file",
        type=click.Path(dir_okay=False, path_type=Path),
        help="Input values for a job or contract: a JSON or YAML file holding one mapping.",
    ),
    click.option(
        "--input",
        "input_args",
        multiple=True,
        metavar="NAME=VALUE|NAME=@FILE",
        help="One input value (repeatable), as for hz render.",
    ),
    click.option(
        "--workdir",
        type=click.Path(file_okay=False, path_type=Path),
        default=".",
        show_default=True,
        help="The directory the agent may read; it must exist.",
    ),
    click.option(
        "--receipt-dir",
        type=click.Path(file_okay=False, path_type=Path),
        help="Where the receipt is chained [default: [system.runner] receipt_dir, else "
        "receipts/ in the operator's state directory ([system] state_dir)].",
    ),
    click.option("--no-receipt", is_flag=True, help="Write no receipt for this run."),
    click.option(
        "--request-key",
        envvar="HZ_REQUEST_KEY",
        callback=_named,
        help="Run this request once (one target only): a key that has a run already, live or "
        "ended, starts nothing; the same key with another request is refused. Without it "
        "(and without HZ_REQUEST_KEY) every invocation starts a new run.",
    ),
    click.option(
        "--at",
        type=AT,
        default=None,
        help="Resolve the windows of the inputs a job or contract fetches (read:) at this time "
        "(ISO 8601 with an offset, e.g. 2026-05-01T09:00:00Z) instead of now: the same "
        "window, whenever it runs. Not for a packet (it holds its values).",
    ),
    click.option(
        "--force-new",
        is_flag=True,
        help="Run the request again under its --request-key, though the key has a run.",
    ),
)


def request_options(function: Callable[..., R]) -> Callable[..., R]:
    """The targets argument and the options, passed to ``function`` as its first argument, one
    ``RunTargets``; the command's other options follow as keyword arguments."""

    @functools.wraps(function)
    def command(**options: Any) -> R:
        asked = RunTargets(**{name: options.pop(name) for name in _FIELDS})
        return function(asked, **options)

    for decorator in reversed((_TARGETS, *_OPTIONS)):
        command = decorator(command)
    return command


def report_error(error: Any) -> None:
    """An expected error (``HzError``) on stderr as the CLI's handler prints it."""
    from hz.runtime.artifacts.printable import printable

    click.echo(f"hz: error: {printable(error.message)}", err=True)
    if error.hint:
        click.echo(f"  hint: {printable(error.hint)}", err=True)


def ceiling_of(config: Any) -> Callable[[str], float]:
    """The budget ceiling of a job by its name: its jobs table's, else ``[authoring]``'s."""
    return lambda job: float(config.for_job(job).max_usd_ceiling)


def _check_ceiling(target: Path, packet: Packet, ceiling: float) -> None:
    """A job or packet compiled elsewhere is held to this machine's ceiling too."""
    budget = packet.job.budget.max_usd
    if budget > ceiling:
        from hz.runtime.artifacts.errors import ConfigError

        raise ConfigError(
            f"{target}: the job's budget of {budget:g} US dollars is over this machine's "
            f"ceiling of {ceiling:g}",
            hint="the operator sets the ceiling: [authoring] max_usd_ceiling, or a job's "
            '[jobs."NAME"] max_usd_ceiling (see hz config show --job NAME)',
        )


def _packet(
    target: Path,
    inputs_file: Path | None,
    input_args: tuple[str, ...],
    ceiling: float,
    fetch: JobFetch | None = None,
    *,
    config: Any = None,
    at: datetime | None = None,
) -> tuple[Packet | None, list[Problem]]:
    if target.suffix.lower() == ".json" and inputs_file is None and not input_args:
        from hz.runtime.artifacts.models import read_artifact

        # A packet needs no compiler (nor Jinja2, nor the validators): its prompt, job and
        # inputs are bound by their digests, checked as it is read.
        artifact = read_artifact(target)
        if isinstance(artifact, Packet):
            if at is not None:
                return None, [_packet_at(target)]
            return artifact, []
    from hz.cli.fetching import publish_targets, read_operations
    from hz.compiler.render.packet import packet_from_path

    return packet_from_path(
        target,
        inputs_file=inputs_file,
        input_args=input_args,
        max_usd_ceiling=ceiling,
        fetch=fetch,
        operations=read_operations(config),
        targets=publish_targets(config),
    )


def _packet_at(target: Path) -> Problem:
    from hz.compiler.rules.registry import HZ710

    return Problem(
        HZ710,
        "a packet already holds its input values: --at cannot fetch them again",
        str(target),
        hint="run the job or contract with --at to fetch its inputs at that time",
    )


def reported_packets(
    asked: RunTargets,
    ceiling: float,
    ceiling_of: Callable[[str], float] | None = None,
    *,
    config: Any = None,
) -> list[Packet] | None:
    """A packet per target, each held to the ceiling (compiled against ``ceiling``, then held
    to its job's own, ``ceiling_of(name)``, when given); the diagnostics reported on stderr
    (warnings too); None when any target has errors. With ``config``, the jobs' ``read``
    inputs are fetched through the providers it binds, in the working directory."""
    targets, inputs_file, input_args = asked.targets, asked.inputs_file, asked.input_args
    packets: list[Packet] = []
    diagnostics: list[Problem] = []
    for target in targets:
        fetch = None
        if config is not None:
            from hz.cli.fetching import job_fetch

            fetch = job_fetch(config, asked.workdir, where=str(target), at=asked.at)
        packet, found = _packet(
            target, inputs_file, input_args, ceiling, fetch, config=config, at=asked.at
        )
        diagnostics += found
        if packet is not None:
            own = ceiling if ceiling_of is None else ceiling_of(packet.job.name)
            _check_ceiling(target, packet, own)
            packets.append(packet)
    complete = len(packets) == len(targets)
    if diagnostics:
        from hz import __version__
        from hz.cli.compile import files_read
        from hz.compiler.report.formats import write_report

        write_report(
            diagnostics,
            fmt="text",
            files_checked=(
                files_read(targets[0], inputs_file, input_args)
                if len(targets) == 1
                else len(targets) + (inputs_file is not None)
            ),
            out=sys.stderr,
            err=io.StringIO() if complete else sys.stderr,
            tool_version=__version__,
        )
    return packets if complete else None
