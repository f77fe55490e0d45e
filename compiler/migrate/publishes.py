"""``hz.publishes``: Heinzelmännchen's ``{action, output}`` items as hz's ``command.run``.

Each item is edited where it stands: ``action: notes.publish`` becomes ``to: command.run``
with ``args: {command: notes-publish}`` beside it (the operator's command of that name), its
``output`` (the job's one draft) is deleted, and every other key is commented out and left to
decide. An item hz cannot name a command after (no action, an action that is no string or
has no letter or digit, one whose command an earlier item already publishes to) is
commented out whole; when none is left, the whole ``publishes:`` is."""

from __future__ import annotations

import json
import re
from typing import Any

from hz.compiler.migrate.edit import Editor, shown
from hz.compiler.rules.registry import HZ170, HZ171, HZ174
from hz.runtime.artifacts.printable import printable

#: The most publishes an hz job has (the contract schema's maxItems; the job model's
#: ``MAX_PUBLISHES``, not imported: that module builds its models as it is imported).
MAX_PUBLISHES = 16
_KEEP_IN_PROSE = "keep the intent in the body's prose, or delete the comment"
_NEW_ITEM = (
    "write it as an hz publish (to: command.run, args: {command: NAME}, or another target of "
    "docs/publishing.md), or delete the comment"
)


def command_name(action: str) -> str:
    """The operator's command an action becomes: lowercase, each run of other characters a
    dash (``notes.publish`` is ``notes-publish``); empty when nothing is left."""
    return re.sub(r"[^a-z0-9]+", "-", action.lower()).strip("-")


def publishes(editor: Editor) -> None:
    items = editor.hz["publishes"]
    if not isinstance(items, list):
        editor.note(
            HZ174,
            "decide",
            ["publishes"],
            f"hz.publishes: {shown(items)} is not a list of publishes: commented out",
            decide=_NEW_ITEM,
        )
        editor.drop(("publishes",), "not a list of publishes")
        return
    outputs = editor.hz.get("outputs")
    draft = next(iter(outputs)) if isinstance(outputs, dict) and len(outputs) == 1 else None
    taken: dict[str, tuple[str, int]] = {}
    commands: dict[int, str] = {}
    for index, item in enumerate(items):
        refusal = _refusal(editor, index, item, taken)
        if refusal is None:
            action = item["action"]
            commands[index] = command_name(action)
            taken[commands[index]] = (action, editor.doc.pos(("hz", "publishes", index)).line)
        else:
            editor.note(HZ174, "decide", *refusal)
    if not commands:
        editor.drop(("publishes",), "no publish hz can carry out")
        return
    for index, item in enumerate(items):  # in the file's order: comments above land so too
        if index in commands:
            _carry_over(editor, index, item, commands[index], draft)
        else:
            editor.drop(("publishes", index), "a publish hz cannot carry out")


def _refusal(
    editor: Editor, index: int, item: object, taken: dict[str, tuple[str, int]]
) -> tuple[list[str | int], str, str] | None:
    """Why item ``index`` cannot be carried over (where, the message and what to decide), or
    ``None``."""
    where: list[str | int] = ["publishes", index]
    if not isinstance(item, dict) or "action" not in item:
        return where, f"publish {shown(item)} names no action: commented out", _NEW_ITEM
    action = item["action"]
    if not isinstance(action, str) or not command_name(action):
        return (
            [*where, "action"],
            f"publish action {shown(action)} names no command (a command's name is lowercase "
            "letters, digits and dashes): commented out",
            _NEW_ITEM,
        )
    command = command_name(action)
    if len(taken) == MAX_PUBLISHES and command not in taken:
        return (
            where,
            f"publish action {shown(action)} is past the {MAX_PUBLISHES} publishes an hz job "
            "has: commented out",
            "publish from one of the operator's commands that does what several did, or delete "
            "the comment",
        )
    if command in taken:
        first, line = taken[command]
        return (
            [*where, "action"],
            f"publish action {shown(action)} is the operator's command {command}, as action "
            f"{shown(first)} on line {line} is: commented out",
            _NEW_ITEM,
        )
    return None


def _carry_over(
    editor: Editor, index: int, item: dict[str, Any], command: str, draft: str | None
) -> None:
    path = ("publishes", index)
    action = item["action"]
    editor.note(
        HZ171,
        "decide",
        list(path),
        f"publish action {printable(action)} is the operator's command {command} "
        "(to: command.run): hz has no publish target of that name",
        decide=f"declare [publish.commands.{command}] (argv) and allow command.run in "
        "[publish] of the hz configuration of whoever runs the job",
    )
    editor.rename((*path, "action"), "to")
    editor.replace_value((*path, "action"), "command.run", "command.run")
    args = f"args: {{command: {json.dumps(command)}}}"
    if editor.extent(*path).flow:
        end = editor.extent(*path, "action").value[1]
        editor.edits.splice(end, end, f", {args}")
    else:
        _, end_line, column, _ = editor.entry((*path, "action"))
        editor.edits.replace_lines(end_line, end_line, [" " * column + args])
    editor.add(path, "args", {"command": command})
    for key, value in item.items():
        if key == "action":
            continue
        if key == "output" and value == draft:
            editor.note(
                HZ170,
                "mapped",
                [*path, key],
                f"publish output {shown(value)} is the job's one draft, which an hz publish "
                "publishes: deleted",
            )
            editor.remove((*path, key))
            continue
        if key == "output":
            message = (
                f"publish output {shown(value)} is not the contract's output: hz publishes the "
                "job's one draft; commented out"
            )
        else:
            message = (
                f"publish key {printable(key)}: {shown(value)} has no counterpart in an hz "
                "publish (hz publishes each completed draft that passed its checks, as the "
                "operator's [publish] policy allows): commented out"
            )
        editor.note(HZ174, "decide", [*path, key], message, decide=_KEEP_IN_PROSE)
        editor.drop((*path, key), f"an hz publish has no {printable(key)}")
