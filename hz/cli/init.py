"""``hz init``: set up hz in the user's own repository.

It writes the contract schema where the editor modeline of the starter contract finds it and
a starter contract that validates and runs with the echo runner. It never overwrites a
contract: running it again refreshes only the schema (after upgrading hz) and adds what is
missing. Nothing needs a ``.gitignore`` line: hz keeps its receipts and its run ledger in the
operator's state directory, outside the working tree. Both files are written by descriptor
(``hz.runtime.artifacts.beneath``), never through a symbolic link, even one swapped in while it
runs.
"""

from __future__ import annotations

import errno
import os
import shlex
from pathlib import Path

import click

from hz.cli.help import examples
from hz.cli.params import JOB_NAME
from hz.runtime.artifacts.beneath import open_directory, open_folders, place_file
from hz.runtime.artifacts.errors import HzError
from hz.runtime.artifacts.printable import printable
from hz.runtime.artifacts.regular_file import check_links, read_regular_text

#: hz.name's pattern in the contract schema.

SCHEMA_PATH = Path(".hz") / "contract.schema.json"
#: A larger schema is none hz wrote.
_MAX_BYTES = 4 * 1024 * 1024

#: The starter's ``hz`` block, the same in both forms (a format string: ``{name}``).
_HZ = """\
hz:
  contract: 1
  name: {name}
  title: Summarise the open to-do items
  timeout: 10m
  agent:
    tools: []                  # [] = the runner's read-only default
    max_usd: 0.25
  inputs:
    topic:
      description: What the summary is about
      schema: {{type: string, minLength: 1}}
      default: the to-do items in this repository
  output:
    format: markdown
"""

STARTER = (
    "# yaml-language-server: $schema={schema}\n"
    + _HZ
    + """\
contract: |
  Summarise; never change a file.
  - Mention only what you found in the repository, and cite each item as PATH:LINE.
  - Keep it under 200 words.
prompt: |
  Write a short summary of {{{{ inputs.topic }}}}.
"""
)

#: The starter as a Markdown contract: the frontmatter holds what the YAML starter's keys do,
#: the body is the contract text, and the request is built from its sections.
STARTER_MARKDOWN = (
    "---\n"
    + _HZ
    + """\
---

# Summarise the open to-do items

<!-- Comments like this one are for the authors: the agent never sees them. -->

## Goal

A short summary of `inputs.topic`. Never change a file.

## Rules

- Mention only what you found in the repository, and cite each item as PATH:LINE.
- Keep it under 200 words.

## Done when

Every item the summary mentions has its PATH:LINE.
"""
)


@click.command(
    short_help="Set up hz in a repository: the editor schema and a starter contract.",
    epilog=examples("hz init", "hz init ../other-repo"),
)
@click.argument(
    "directory",
    default=".",
    type=click.Path(file_okay=False, path_type=Path),
)
@click.option(
    "--contracts",
    "contracts_dir",
    default="contracts",
    show_default=True,
    help="Where the starter contract goes, relative to DIRECTORY.",
)
@click.option("--name", default="todo-summary", show_default=True, help="The starter's hz.name.")
@click.option(
    "--markdown",
    is_flag=True,
    help="Start a Markdown contract (CONTRACTS/NAME.md: a frontmatter and a body) instead.",
)
def init(directory: Path, contracts_dir: str, name: str, markdown: bool) -> int:
    """Set up hz in DIRECTORY (default: the current directory):

    \b
      .hz/contract.schema.json      the contract schema, for the editor (refreshed each time)
      CONTRACTS/NAME.yaml           a starter contract whose modeline points at that schema
      CONTRACTS/NAME.md             with --markdown: the starter as a Markdown contract

    An existing contract is never overwritten. Commit .hz/contract.schema.json so everyone's
    editor completes and checks YAML contracts; run hz init again after upgrading hz.
    """
    from hz.compiler.checks.structure import schema_text

    if not JOB_NAME.fullmatch(name):
        raise click.BadParameter(f"{name!r} is not a lowercase slug", param_hint="'--name'")
    if not directory.is_dir():
        raise click.UsageError(f"{directory} is not a directory")
    contracts = Path(contracts_dir)
    if contracts.is_absolute() or ".." in contracts.parts:
        raise click.BadParameter("give a path inside DIRECTORY", param_hint="'--contracts'")

    text = schema_text()
    text = text if text.endswith("\n") else text + "\n"
    schema = directory / SCHEMA_PATH
    contract = directory / contracts / f"{name}.{'md' if markdown else 'yaml'}"
    # A repository can plant links (.hz -> ~/.config): refuse them all before writing anything.
    for path in (schema, contract):
        _inside(path, directory)
    changed = _read(schema, directory) != text
    # Written by descriptor, each folder from DIRECTORY down opened without following a link:
    # a link swapped in after the checks above is refused, not written through.
    folders: list[int] = []
    root = _open(directory)
    try:
        for parts, path in ((SCHEMA_PATH.parent.parts, schema), (contracts.parts, contract)):
            folders.append(_folders(root, directory, parts, path))
    except HzError:
        for fd in folders:
            os.close(fd)
        raise
    finally:
        os.close(root)
    try:
        if changed:
            _place(folders[0], schema, text, replace=True)
        _report("wrote" if changed else "unchanged", schema)
        up = "/".join([".."] * len(contracts.parts))
        modeline = f"{up}/{SCHEMA_PATH.as_posix()}" if up else SCHEMA_PATH.as_posix()
        starter = STARTER_MARKDOWN if markdown else STARTER
        written = _place(
            folders[1], contract, starter.format(schema=modeline, name=name), replace=False
        )
        _report("wrote" if written else "kept", contract)
    finally:
        for fd in folders:
            os.close(fd)

    folder, starter = shlex.quote(str(contract.parent)), shlex.quote(str(contract))
    steps = [
        (f"hz validate {folder}", "every problem, with file:line:col"),
        (f"HZ_RUNNER=echo hz run {starter}", "the built-in echo runner: no agent needed"),
        ("hz doctor", "is the configured agent ready?"),
        # CI's check (hz compile --check, the GitHub Action's default) compares committed jobs.
        (f"hz compile {folder} --out build/jobs", "then commit build/jobs: CI checks it"),
    ]
    width = max(len(command) for command, _ in steps)
    click.echo("next:")
    for command, why in steps:
        click.echo(f"  {command:<{width}}  # {why}")
    return 0


def _inside(path: Path, directory: Path) -> None:
    try:
        check_links(path, directory)
    except OSError as e:
        raise HzError(
            f"{path} is {e.strerror}",
            hint="remove the link, or run hz init in the tree it leads to",
        ) from e


def _open(directory: Path) -> int:
    try:
        return open_directory(directory)
    except OSError as e:
        raise HzError(f"cannot open {printable(str(directory))}: {e.strerror}") from e


def _folders(root: int, directory: Path, parts: tuple[str, ...], path: Path) -> int:
    """A descriptor of the folder ``path`` goes into (``parts`` below ``directory``), the
    missing folders made; ``HzError`` for a link (or no folder) on the way."""
    try:
        return open_folders(root, parts, make=True)
    except OSError as e:
        shown = printable(str(path))
        if e.errno not in (errno.ELOOP, errno.ENOTDIR) or not e.filename:
            raise HzError(f"cannot write {shown}: {e.strerror}") from e
        where = printable(str(directory / e.filename))
        if e.errno == errno.ENOTDIR:
            raise HzError(f"cannot write {shown}: {where} is not a folder") from e
        raise HzError(
            f"{shown} is reached through a symbolic link ({where}): hz init does not write "
            "through a link",
            hint="remove the link, or run hz init in the tree it leads to",
        ) from e


def _place(folder: int, path: Path, text: str, *, replace: bool) -> bool:
    """``text`` as ``path`` in ``folder``; False when ``replace`` is off and it exists."""
    temporary = f".{path.name}.hz-init-{os.getpid()}.tmp"
    try:
        place_file(
            folder,
            path.name,
            text.encode("utf-8"),
            temporary=temporary,
            replace=replace,
            mode=0o666,
        )
    except OSError as e:
        if isinstance(e, FileExistsError) and not replace:
            return False  # there already (made meanwhile, a link included): kept, not followed
        raise HzError(f"cannot write {printable(str(path))}: {e.strerror}") from e
    return True


def _read(path: Path, directory: Path) -> str | None:
    """The file's text, or None when there is none; a directory, a pipe, a device or a file
    that is no UTF-8 text is an error (hz init neither replaces nor blocks on it). Opened by
    descriptor beneath ``directory``: a link swapped in after ``_inside`` cannot lead out."""
    try:
        text = read_regular_text(path, limit=_MAX_BYTES, confined_to=directory)
    except FileNotFoundError:
        return None
    except OSError as e:
        raise HzError(f"cannot read {path}: {e.strerror}") from e
    except UnicodeDecodeError as e:
        raise HzError(f"cannot read {path}: it is not UTF-8 text") from e
    return text


def _report(what: str, path: Path) -> None:
    click.echo(f"{what + ':':<11}{path}")
