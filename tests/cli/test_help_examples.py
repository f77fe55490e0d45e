"""Every command's ``--help`` (the groups' too) ends with one or two examples of that very
command, each naming only options the command has."""

from __future__ import annotations

import shlex
from collections.abc import Iterator

import click
import pytest

from hz.cli import cli as hz_group
from tests.conftest import Cli


def commands(group: click.Group, path: tuple[str, ...] = ()) -> Iterator[tuple[str, ...]]:
    yield path
    context = click.Context(group)
    for name in group.list_commands(context):
        command = group.get_command(context, name)
        assert command is not None
        if isinstance(command, click.Group):
            yield from commands(command, (*path, name))
        else:
            yield (*path, name)


ALL = sorted(commands(hz_group))


def test_every_command_is_walked() -> None:
    assert len(ALL) == 38  # hz, its 21 commands, the groups' 16 subcommands
    assert ("runs", "show") in ALL
    assert ("receipts", "verify") in ALL


def command_of(path: tuple[str, ...]) -> click.Command:
    command: click.Command = hz_group
    for name in path:
        assert isinstance(command, click.Group)
        found = command.get_command(click.Context(command), name)
        assert found is not None
        command = found
    return command


@pytest.mark.parametrize("path", ALL, ids=lambda p: " ".join(("hz", *p)))
def test_help_ends_with_examples_of_the_command(cli: Cli, path: tuple[str, ...]) -> None:
    done = cli(*path, "--help")
    assert (done.returncode, done.stderr) == (0, "")
    head, _, tail = done.stdout.rpartition("\n  Examples:\n")
    assert head, done.stdout
    lines = tail.splitlines()
    assert 1 <= len(lines) <= 2, lines
    command = command_of(path)
    options = {opt for param in command.params for opt in (*param.opts, *param.secondary_opts)}
    options |= {"--help", "-h"}
    for line in lines:
        assert line.startswith("    " + " ".join(("hz", *path)) + (" " if path else "")) or (
            line == "    " + " ".join(("hz", *path))
        ), line
        words = shlex.split(line.replace(">", " "))  # a redirection is the shell's
        given = [w.split("=")[0] for w in words if w.startswith("-")]
        if isinstance(command, click.Group):
            sub = command_of((*path, words[len(path) + 1]))
            options |= {o for p in sub.params for o in (*p.opts, *p.secondary_opts)}
        assert set(given) <= options, (line, set(given) - options)


def test_shell_completion_as_docs_install_md_sets_it_up(cli: Cli) -> None:
    """bash asks hz itself (``_HZ_COMPLETE=bash_complete``) through the real entry point."""
    env = {"_HZ_COMPLETE": "bash_complete", "COMP_WORDS": "hz runs l", "COMP_CWORD": "2"}
    assert cli(env=env).stdout == "plain,list\n"
    env = {**env, "COMP_WORDS": "hz runs list --state fa", "COMP_CWORD": "4"}
    assert cli(env=env).stdout == "plain,failed\n"
    for shell in ("bash", "zsh", "fish"):
        script = cli(env={"_HZ_COMPLETE": f"{shell}_source"})
        assert (script.returncode, "_HZ_COMPLETE" in script.stdout) == (0, True), shell
