"""``hz compile`` and ``hz render``: thin click commands over compile, jobdir and render."""

from __future__ import annotations

import io
import os
import sys
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

import click

from hz.cli.counts import plural
from hz.cli.fetching import AT
from hz.cli.help import examples
from hz.cli.params import CEILING, format_choice, path_option
from hz.cli.validate import (
    format_option,
    list_skipped,
    processes_asked,
    project_files,
    refuse_empty,
    verbose_option,
)

if TYPE_CHECKING:
    from collections.abc import Mapping

    from hz.compiler.validate import Ceiling
    from hz.runtime.artifacts.operations import Operation
    from hz.runtime.artifacts.publish_targets import Target

MAX_USD_HELP = (
    "The largest hz.agent.max_usd a contract may ask for "
    "[default: [authoring] max_usd_ceiling from the configuration, else 100]."
)


def _input_args(values: tuple[str, ...]) -> tuple[str, ...]:
    for arg in values:
        if arg.partition("=")[2] == "@":
            raise click.BadParameter(
                f"{arg!r} names no file after @ (write NAME=@FILE, or NAME=@@ for a literal @)",
                param_hint="'--input'",
            )
    return values


@click.command(
    short_help="Compile contracts into deterministic job files.",
    epilog=examples(
        "hz compile contracts --out build/jobs",
        "hz compile contracts --out build/jobs --check",
    ),
)
@click.argument("paths", nargs=-1, metavar="PATH...")
@path_option(
    "--out",
    "out_dir",
    directory=True,
    required=True,
    help="Directory of the job files: one <name>.job.json per contract.",
)
@click.option(
    "--check",
    is_flag=True,
    help="Write nothing; exit 1 when a job in --out is stale, missing or has no contract.",
)
@format_option
@click.option(
    "--root",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    help="Directory the jobs' source paths are relative to "
    "[default: nearest directory above the contracts with hz.toml or .git].",
)
@click.option(
    "--max-usd-ceiling",
    type=CEILING,
    default=None,
    help=MAX_USD_HELP,
)
@click.option(
    "-q", "--quiet", is_flag=True, help="Print only the problems: no summary lines on stderr."
)
@verbose_option
def compile_(
    paths: tuple[str, ...],
    out_dir: Path,
    check: bool,
    fmt: str,
    root: Path | None,
    max_usd_ceiling: float | None,
    quiet: bool,
    verbose: bool,
) -> int:
    """Validate contracts (files or directories) and compile each into OUT/<name>.job.json.

    A directory is searched for *.yaml, *.yml and *.md files with an hz: frontmatter; one that
    holds none is an error (HZ014), with --check too.

    The jobs are canonical JSON, byte-identical wherever they are compiled. Compiling
    rewrites only changed files and removes *.job.json files no contract compiles to.

    Exit status: 0 ok (with --check: OUT is exactly what compile would write), 1 when a
    contract has an error or (with --check) a job is stale, missing or extra, 2 on a usage
    error; 130 on Ctrl-C, 143 on SIGTERM (129 on SIGHUP), with OUT as it was.
    """
    from hz.runtime.process.signals import Terminated, raising

    try:
        # SIGTERM unwinds the compile as Ctrl-C does: its forked processes are killed and
        # reaped, the staging directory removed (decision 0027).
        with raising():
            return _compile(paths, out_dir, check, fmt, root, max_usd_ceiling, quiet, verbose)
    except Terminated as e:
        click.echo("hz: aborted", err=True)
        return e.exit_status


def _compile(
    paths: tuple[str, ...],
    out_dir: Path,
    check: bool,
    fmt: str,
    root: Path | None,
    max_usd_ceiling: float | None,
    quiet: bool,
    verbose: bool,
) -> int:
    if not paths:
        raise click.UsageError("give at least one PATH: a contract file or a directory")
    if "-" in paths:
        raise click.UsageError("compile reads files: a contract on stdin has no path for its job")
    refuse_empty(paths)
    from hz import __version__
    from hz.cli.authoring import authoring
    from hz.compiler.compile import compile_each, compile_fanned, compile_root
    from hz.compiler.jobdir import JobChecker, JobWriter, refuse_linked_out_dir
    from hz.compiler.report.formats import write_report
    from hz.runtime.process.uninterrupted import to_the_end

    options = authoring(max_usd_ceiling)
    processes = processes_asked()
    refuse_linked_out_dir(out_dir, compile_root(paths, root))
    # One contract at a time (memory flat in the number of contracts): each job is checked
    # or staged as it is compiled; a failed compile discards what was staged.
    sink = JobChecker(out_dir) if check else JobWriter(out_dir)
    try:
        if isinstance(sink, JobWriter):  # split over processes when CPUs are idle
            run = compile_fanned(
                paths,
                sink,
                root=root,
                max_usd_ceiling=options.max_usd_ceiling,
                operations=options.operations,
                targets=options.targets,
                processes=processes,
            )
        else:
            run = compile_each(
                paths,
                sink.add,
                root=root,
                max_usd_ceiling=options.max_usd_ceiling,
                operations=options.operations,
                targets=options.targets,
            )
    except BaseException:
        if isinstance(sink, JobWriter):
            to_the_end(sink.abort)  # a further Ctrl-C cannot leave the staging directory
        raise
    if verbose:
        list_skipped(run.skipped)
    diagnostics = [*options.diagnostics, *run.diagnostics]
    # A broken project hz.toml fails the compile like a broken contract: nothing is written.
    ok = not run.failed and not options.diagnostics
    done = ""
    files_checked = run.files_checked + project_files(options.diagnostics)
    checked = None
    if isinstance(sink, JobChecker):
        if ok:
            diagnostics += sink.finish()
            # --check reads the job files too, and may report one (HZ604).
            job_files = len(list(Path(out_dir).glob("*.job.json")))
            checked = f"{plural(files_checked, 'contract')} and {plural(job_files, 'job file')}"
            files_checked += job_files
            if not any(d.severity == "error" for d in diagnostics):
                done = f"{_jobs(run.compiled)} in {out_dir} up to date"
    elif ok:
        wrote = sink.commit()
        done = (
            f"{_jobs(run.compiled)} in {out_dir}: {len(wrote.written)} written, "
            f"{len(wrote.unchanged)} unchanged, {len(wrote.removed)} removed"
        )
    else:
        sink.abort()
    write_report(
        diagnostics,
        fmt=fmt,
        files_checked=files_checked,
        out=sys.stdout,
        err=io.StringIO() if quiet else sys.stderr,
        tool_version=__version__,
        checked=checked,
    )
    if done:
        if not quiet:
            click.echo(done, err=True)
        return 0
    return 1


def files_read(target: Path, inputs_file: Path | None, input_args: tuple[str, ...]) -> int:
    """How many files a render checked: the contract, job or packet rendered (a job's digest is
    checked as it is read), the inputs file and every ``--input NAME=@FILE``."""
    files = {str(target)}
    if inputs_file is not None:
        files.add(str(inputs_file))
    for arg in input_args:
        value = arg.partition("=")[2]
        if value.startswith("@") and not value.startswith("@@"):
            files.add(value[1:])
    return len(files)


def _jobs(n: int) -> str:
    return plural(n, "job")


@click.command(
    short_help="Render a job with input values into a prompt packet.",
    epilog=examples(
        "hz render build/jobs/weekly.job.json --inputs in.yaml -o packet.json",
        "hz render contracts/weekly.yaml --fetch --at 2026-05-01T09:00:00Z --format text",
    ),
)
@click.argument(
    "target",
    metavar="JOB|CONTRACT",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
)
@path_option(
    "--inputs",
    "inputs_file",
    help="Input values: a JSON (.json) or YAML file holding one mapping of names to values.",
)
@click.option(
    "--input",
    "input_args",
    multiple=True,
    metavar="NAME=VALUE|NAME=@FILE",
    help="One input value (repeatable; replaces the inputs file's). VALUE is a string unless "
    "the input's schema type excludes strings, then JSON; @FILE reads a file's text.",
    callback=lambda ctx, param, value: _input_args(value),
)
@path_option("-o", "--output", help="Write the packet to this file instead of printing it.")
@format_choice(
    ("json", "text"),
    "json",
    "json prints the packet; text prints only the rendered prompt, as a preview.",
)
@click.option(
    "--max-usd-ceiling",
    type=CEILING,
    default=None,
    help=MAX_USD_HELP + " Applies when rendering a contract.",
)
@click.option(
    "--fetch",
    is_flag=True,
    help="Fetch the inputs the job reads (read:) through the providers the operator binds "
    "(hz providers); an --input of the same name is used instead of fetching it.",
)
@click.option(
    "--at",
    type=AT,
    default=None,
    help="With --fetch: resolve the inputs' windows at this time (ISO 8601 with an offset, "
    "e.g. 2026-05-01T09:00:00Z) instead of now, for a reproducible render.",
)
@click.option(
    "--workdir",
    type=click.Path(file_okay=False, path_type=Path),
    default=".",
    show_default=True,
    help="With --fetch: the directory the files and git providers read.",
)
def render(
    target: Path,
    inputs_file: Path | None,
    input_args: tuple[str, ...],
    output: Path | None,
    fmt: str,
    max_usd_ceiling: float | None,
    fetch: bool,
    at: datetime | None,
    workdir: Path,
) -> int:
    """Render a job (or a contract, compiled in memory) with input values into a packet.

    Problems are reported on stderr as PATH:LINE:COL: error: MESSAGE [CODE].

    Exit status: 0 rendered, 1 when the contract, the inputs or the template has an error or
    an input cannot be fetched, 2 on a usage error, an unreadable job file or a configuration
    error.
    """
    from hz import __version__
    from hz.compiler.render.packet import packet_from_path
    from hz.compiler.report.formats import write_report
    from hz.runtime.artifacts.canonical import canonical_json

    ceiling: Ceiling = 100.0
    diagnostics, project = [], 0
    operations: Mapping[str, Operation] | None = None
    targets: Mapping[str, Target] | None = None
    if target.suffix.lower() in (".yaml", ".yml", ".md"):
        from hz.cli.authoring import authoring

        options = authoring(max_usd_ceiling)
        ceiling, diagnostics = options.max_usd_ceiling, list(options.diagnostics)
        operations = options.operations
        targets = options.targets
        project = project_files(options.diagnostics)
    if at is not None and not fetch:
        raise click.UsageError("--at resolves the windows of fetched inputs: give --fetch too")
    job_fetch = None
    if fetch and not diagnostics:
        from hz.cli.fetching import job_fetch as compose
        from hz.runtime.config.layers import load_config

        if not workdir.is_dir():
            raise click.BadParameter(f"{workdir} is not a directory", param_hint="--workdir")
        job_fetch = compose(load_config(cwd=Path.cwd()), workdir, where=str(target), at=at)
    packet, problems = (
        (None, [])
        if diagnostics
        else packet_from_path(
            target,
            inputs_file=inputs_file,
            input_args=input_args,
            max_usd_ceiling=ceiling,
            fetch=job_fetch,
            operations=operations,
            targets=targets,
        )
    )
    diagnostics += problems
    if diagnostics:
        # Always text on stderr: stdout carries only the packet (or the prompt).
        write_report(
            diagnostics,
            fmt="text",
            files_checked=files_read(target, inputs_file, input_args) + project,
            out=sys.stderr,
            err=sys.stderr if packet is None else io.StringIO(),
            tool_version=__version__,
        )
    if packet is None:
        return 1
    text = canonical_json(packet.to_json_data())
    if output is not None:
        from hz.runtime.artifacts.files import write_file

        write_file(output, text)
        click.echo(f"wrote {output}", err=True)
    else:
        from hz.runtime.artifacts.printable import guarded

        # The prompt is the contract's and the inputs' text: guarded like an agent's draft.
        sys.stdout.write(guarded(packet.prompt, sys.stdout, os.environ) if fmt == "text" else text)
    return 0
