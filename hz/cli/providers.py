"""``hz providers``: each capability an input may read through, the provider the operator binds
to it, whether that provider is ready (or why not), and with ``-v`` (or ``--format json``) each
operation's argument and result schemas (``hz.runtime.artifacts.operations``).

Exit status 1 when a bound provider is not ready (an unbound capability is not a failure: no
input may need it), so a missing credential shows here before a fetch needs it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from hz.cli.help import examples
from hz.cli.params import format_choice


def _operation_json(op: Any) -> dict[str, Any]:
    return {
        "name": op.name,
        "summary": op.summary,
        "window": op.window,
        "args": op.args,
        "result": op.result,
    }


def _compact(schema: Any) -> str:
    return json.dumps(schema, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def text_of(rows: list[Any], *, verbose: bool) -> str:
    """The table: capability, provider (and where it comes from), state and detail."""
    from hz.runtime.artifacts.printable import printable

    lines = []
    for row in rows:
        state = {True: "ready", False: "NOT READY", None: "unbound"}[row.ok]
        provider = "-" if row.provider is None else f"{row.provider} ({row.source or 'unknown'})"
        lines.append(f"{row.capability:<10} {provider:<16} {state}: {printable(row.detail)}")
        # An operator's or a plugin's summary and schemas: escaped like every outside text.
        for op in row.operations if verbose else ():
            window = ", takes a window" if op.window else ""
            lines.append(f"  {printable(op.name)}: {printable(op.summary)}{window}")
            lines.append(f"    args:   {printable(_compact(op.args))}")
            lines.append(f"    result: {printable(_compact(op.result))}")
    return "\n".join(lines) + "\n"


@click.command(
    short_help="List the capabilities, their providers and whether they are ready.",
    epilog=examples("hz providers", "hz providers --online -v"),
)
@click.option(
    "--online",
    is_flag=True,
    help="Also check that each bound provider's service answers (a request per provider).",
)
@click.option(
    "-v", "--verbose", is_flag=True, help="Show each operation's argument and result schemas."
)
@format_choice(("text", "json"), "text", "json adds every operation's schemas.")
def providers(online: bool, verbose: bool, fmt: str) -> int:
    """List each capability, the provider bound to it ([capabilities] in the operator's
    configuration) and whether it is ready to fetch.

    \b
    Exit status: 0 every bound provider is ready, 1 one is not, 2 a configuration error.
    """
    from hz.runtime.config.layers import load_config
    from hz.runtime.providers.binding import Bindings
    from hz.runtime.providers.status import statuses

    config = load_config(cwd=Path.cwd())
    rows = statuses(Bindings.from_config(config), online=online)
    if fmt == "json":
        from hz.runtime.artifacts.printable import printable_json

        document = {
            "capabilities": [
                {
                    "capability": row.capability,
                    "provider": row.provider,
                    "source": row.source,
                    "ready": row.ok,
                    "detail": row.detail,
                    "operations": [_operation_json(op) for op in row.operations],
                }
                for row in rows
            ]
        }
        click.echo(printable_json(document))
    else:
        click.echo(text_of(rows, verbose=verbose), nl=False)
    return 1 if any(row.ok is False for row in rows) else 0
