"""The ``hz`` command: a thin click group whose subcommands are imported only when used.

Every command returns an exit code. Expected errors (``hz.runtime.artifacts.errors.HzError``)
print one message; anything else is a bug: exit 3, "unexpected error", the traceback only with
--debug.
"""

from __future__ import annotations

import importlib
import os
import sys
from typing import Any

import click

from hz import __version__
from hz.cli.help import examples

#: command name -> "module:attribute" of a click command, imported on first use.
COMMANDS: dict[str, str] = {
    "validate": "hz.cli.validate:validate",
    "schema": "hz.cli.validate:schema",
    "explain": "hz.cli.validate:explain",
    "compile": "hz.cli.compile:compile_",
    "render": "hz.cli.compile:render",
    "run": "hz.cli.run:run",
    "doctor": "hz.cli.ops:doctor",
    "config": "hz.cli.ops:config",
    "receipts": "hz.cli.ops:receipts",
    "runners": "hz.cli.runners:runners",
    "providers": "hz.cli.providers:providers",
    "init": "hz.cli.init:init",
    "runs": "hz.cli.runs:runs",
    "publish": "hz.cli.publish:publish",
    "submit": "hz.cli.submit:submit",
    "worker": "hz.cli.worker:worker",
    "queue": "hz.cli.queue:queue",
    "schedules": "hz.cli.schedules:schedules",
    "plan": "hz.cli.schedules:plan",
    "graph": "hz.cli.graph:graph",
    "migrate": "hz.cli.migrate.command:migrate",
}

SHORT_HELP: dict[str, str] = {
    "validate": "Check contracts and report every problem with file:line:col.",
    "schema": "Print a JSON Schema (contract, job, packet, receipt, result, runs).",
    "explain": "Show the documentation of a rule code.",
    "compile": "Compile contracts into deterministic job files.",
    "render": "Render a job with input values into a prompt packet.",
    "run": "Run a packet, job or contract through the configured agent runner.",
    "doctor": "Check the bound runner and the configuration files.",
    "config": "Show the effective configuration and where each value came from.",
    "receipts": "Inspect and verify run receipts.",
    "runners": "List the registered runners and what they enforce.",
    "providers": "List the capabilities, their providers and whether they are ready.",
    "init": "Set up hz in a repository: the editor schema and a starter contract.",
    "runs": "Inspect and control runs in the run ledger.",
    "publish": "Publish a completed run's draft where its contract asks.",
    "submit": "Queue runs for hz worker; print their run ids.",
    "worker": "Run queued runs from the ledger until stopped (SIGTERM).",
    "queue": "Set up the run ledger's backend ([system.queue]).",
    "schedules": "List, pause and resume the jobs hz worker fires by schedule.",
    "plan": "Forecast 30 days of scheduled spend against the budget.",
    "graph": "Draw the jobs, their schedules and their chains.",
    "migrate": "Convert Heinzelmännchen contracts into hz contracts.",
}


class LazyGroup(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        target = COMMANDS.get(cmd_name)
        if target is None:
            return None
        module_name, _, attr = target.partition(":")
        command = getattr(importlib.import_module(module_name), attr)
        assert isinstance(command, click.Command)
        return command

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        # Listing help must not import every command module.
        with formatter.section("Commands"):
            formatter.write_dl([(name, SHORT_HELP[name]) for name in sorted(COMMANDS)])


@click.group(
    cls=LazyGroup,
    context_settings={"help_option_names": ["-h", "--help"]},
    epilog=examples("hz validate contracts/", "hz run contracts/weekly.yaml --input week=2026-W49"),
)
@click.version_option(__version__, prog_name="hz")
@click.option("--debug", is_flag=True, help="Show the traceback of an unexpected error.")
def cli(debug: bool) -> None:
    """hz: validate, compile, render and run workflow contracts."""


#: pydantic looks up plugins among every installed distribution's entry points the first time
#: it builds a model (importlib.metadata's scan: about 10 ms of every command that uses the
#: artifact models). hz's models are hz's: no plugin is meant to hook into them. The variable
#: is read by pydantic only, and no child of hz inherits hz's environment (each gets an
#: allowlist: hz.runtime.process.environment). An operator's own value is kept.
_NO_PYDANTIC_PLUGINS = ("PYDANTIC_DISABLE_PLUGINS", "__all__")


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    os.environ.setdefault(*_NO_PYDANTIC_PLUGINS)
    try:
        _main(args)
    except KeyboardInterrupt:  # a second Ctrl-C while the first one was being handled
        _aborted()


def _aborted() -> None:
    import signal

    # Once aborting, a further Ctrl-C cannot interrupt the message or the exit.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    click.echo("hz: aborted", err=True)
    sys.exit(130)


#: Commands that render a contract (or a job file given input values) in a bounded child.
_RENDERING = frozenset({"run", "render"})
_CONTRACT_SUFFIXES = (".yaml", ".yml", ".md")


def _renders(args: list[str]) -> bool:
    """Whether ``args`` look like a command that will render: ``hz run``/``hz render`` of a
    contract, or with input values (a job file). A guess from the words alone, before click
    parses them: a wrong "yes" costs one child killed unused, a wrong "no" the start-up the
    render then waits for (decision 0022)."""
    words = [a for a in args if not a.startswith("-")]
    if not words or words[0] not in _RENDERING or {"-h", "--help"} & set(args):
        return False
    given_values = any(a in ("--input", "--inputs") or a.startswith("--input") for a in args)
    return given_values or any(w.lower().endswith(_CONTRACT_SUFFIXES) for w in words[1:])


def _main(args: list[str]) -> None:
    if _renders(args):
        from hz.compiler.render.bound import discard_early, start_early

        # The render child's interpreter and Jinja2 start now, beside hz's own imports,
        # validation and compile; the render hands it its job (decision 0022).
        start_early()
        try:
            _command(args)
        finally:
            discard_early()
    else:
        _command(args)


def _command(args: list[str]) -> None:
    debug = "--debug" in args
    try:
        code: Any = cli.main(args=args, prog_name="hz", standalone_mode=False)
    except click.exceptions.Exit as e:
        sys.exit(e.exit_code)
    except click.exceptions.Abort:
        _aborted()
    except click.ClickException as e:
        e.show()
        sys.exit(2 if isinstance(e, click.UsageError) else e.exit_code)
    except Exception as e:
        from hz.runtime.artifacts.errors import HzError

        if isinstance(e, HzError):
            from hz.runtime.artifacts.printable import printable

            click.echo(f"hz: error: {printable(e.message)}", err=True)
            if e.hint:
                click.echo(f"  hint: {printable(e.hint)}", err=True)
            sys.exit(e.exit_code)
        from hz.runtime.artifacts.printable import printable

        if debug:
            import traceback

            traceback.print_exc()
        # The exception's text and the arguments can hold names from outside (paths, values).
        click.echo(f"hz: unexpected error: {printable(f'{type(e).__name__}: {e}')}", err=True)
        if not debug:
            # --debug belongs to hz itself, before the command: `hz validate X --debug` fails.
            import shlex

            again = shlex.join(["hz", "--debug", *args])
            click.echo(
                f"  (this is a bug in hz; run again with --debug for the traceback: "
                f"{printable(again)})",
                err=True,
            )
        sys.exit(3)
    sys.exit(code if isinstance(code, int) else 0)
