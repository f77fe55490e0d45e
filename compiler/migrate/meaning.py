"""The last check of a migration: read back, the ``hz:`` block is the one its edits meant.

Each edit says what it means (``Editor.intended``: a key renamed, a value written, an entry
gone, a key added); every other key keeps the source's value. Should an edit's text end
somewhere else than its node does (a value whose lines run on, a comment inside a block
scalar), the file would say something no edit meant: a key commented out would set free
the text of its value, an added line would land inside a string. Then the migration is
refused (HZ178) rather than written, whatever the edit that went wrong."""

from __future__ import annotations

from typing import Any

from hz.compiler.migrate.edit import Editor, dotted, shown
from hz.compiler.migrate.notes import Note
from hz.compiler.rules.registry import HZ178
from hz.compiler.source import SourceDoc

_DECIDE = (
    "write that key's value on lines deeper than its key (or on one line), or migrate it by "
    "hand; then migrate again"
)


def unmeant(doc: SourceDoc, back: SourceDoc, editor: Editor) -> Note | None:
    """HZ178 where ``back`` (the migrated contract, read back) differs from what the edits of
    ``editor`` meant for ``doc``, at the source's key the difference comes from; ``None``
    when it does not."""
    want, origin = editor.intended()
    found = _difference(want, back.data.get("hz"), ())
    if found is not None:
        at = found[0]
        while at not in origin:
            at = at[:-1]
        pos = doc.pos(("hz", *origin[at]), key=True)
    else:  # the keys beside hz: stay as they are
        gone = editor.gone_top
        top = {k: v for k, v in doc.data.items() if k != "hz" and k not in gone}
        found = _difference(top, {k: v for k, v in back.data.items() if k != "hz"}, (), "")
        if found is None:
            return None
        key = found[0][0]
        pos = doc.pos((key,) if key in top else ("hz",), key=True)
    return Note(
        HZ178,
        "error",
        pos.line,
        pos.column,
        f"the edit would change the contract's meaning: {found[1]}",
        decide=_DECIDE,
    )


def _difference(
    want: Any, got: Any, path: tuple[str | int, ...], root: str = "hz"
) -> tuple[Any, str] | None:
    """The first path where ``got`` is not ``want`` (type and value), and how."""
    if isinstance(want, dict) and isinstance(got, dict):
        for key in got:
            if key not in want:
                return (
                    *path,
                    key,
                ), f"{dotted((*path, key), root)} would appear, written by no edit"
        for key, value in want.items():
            if key not in got:
                return (*path, key), f"{dotted((*path, key), root)} would be gone"
            found = _difference(value, got[key], (*path, key), root)
            if found:
                return found
        return None
    if isinstance(want, list) and isinstance(got, list) and len(want) == len(got):
        for index, (one, other) in enumerate(zip(want, got, strict=True)):
            found = _difference(one, other, (*path, index), root)
            if found:
                return found
        return None
    if type(want) is type(got) and want == got:
        return None
    return path, f"{dotted(path, root)} would be {shown(got)}, not {shown(want)}"
