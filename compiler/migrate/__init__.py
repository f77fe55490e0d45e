"""``hz migrate``: a Heinzelmännchen contract (``hz.schema: 1``) as an hz contract.

The conversion is a set of targeted edits of the frontmatter's text, located by hz's own
loader and by the extent of each node (``text``); nothing is re-serialised, so every byte the
migration does not touch stays as the author wrote it: comments, quotes, folded scalars, key
order, blank lines, line ends, and the whole body (decision 0026). An hz contract
(``hz.contract``) is left as it is, which makes the migration idempotent: a migrated file
migrates to itself.

Every edit, and every key that cannot be carried over, is reported as a ``Note`` with a rule
code (HZ170-HZ181, explained by ``hz explain``), the line, and what the user must decide.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from hz.compiler.load.markdown import frontmatter_end, load_markdown
from hz.compiler.migrate.keys import HEINZEL_MAX_USD, HEINZEL_TIMEOUT, Migrator
from hz.compiler.migrate.meaning import unmeant
from hz.compiler.migrate.names import NAMESPACES, hz_name
from hz.compiler.migrate.notes import Kind, Migration, Note
from hz.compiler.migrate.text import Edits, Unedited, extents
from hz.compiler.rules.registry import HZ003, HZ012, HZ013, HZ172, HZ176, HZ178
from hz.compiler.source import SourceDoc
from hz.runtime.artifacts.operations import CATALOG
from hz.runtime.artifacts.printable import printable

__all__ = [
    "HEINZEL_MAX_USD",
    "HEINZEL_TIMEOUT",
    "NAMESPACES",
    "Kind",
    "Migration",
    "Note",
    "hz_name",
    "migrate",
    "name_of",
]

_PLACEHOLDER = re.compile(r"\{\{\s*asset:[^}\n]*\}\}")
#: The characters YAML reads as line breaks besides \n (and \r, which the loader made \n).
_ODD_BREAK = re.compile("[\u0085\u2028\u2029]")
_BREAK_NAMES = {
    "\u0085": "U+0085 (next line)",
    "\u2028": "U+2028 (line separator)",
    "\u2029": "U+2029 (paragraph separator)",
}
_BOM = "\ufeff"
#: The most of a migrated line a note shows.
_SHOWN = 60
#: The loader's limits a migrated file may cross that the original did not.
_LIMITS = (HZ003, HZ012, HZ013)


def _is_heinzel(data: Mapping[str, Any]) -> bool:
    hz = data.get("hz")
    return isinstance(hz, dict) and "schema" in hz and "contract" not in hz


def _placeholders(text: str) -> list[Note]:
    """HZ176 for each ``{{asset:…}}`` left, outside the frontmatter's comment lines (where a
    template explains them)."""
    out = []
    # Computed once: per line it made the scan quadratic in the file's size.
    last_frontmatter_line = text.count("\n", 0, frontmatter_end(text) or 0) + 1
    for number, line in enumerate(text.split("\n"), start=1):
        if line.lstrip().startswith("#") and number < last_frontmatter_line:
            continue
        for found in _PLACEHOLDER.finditer(line):
            out.append(
                Note(
                    HZ176,
                    "error",
                    number,
                    found.start() + 1,
                    f"the template placeholder {printable(found.group())} was never filled",
                    decide="fill it with the asset's reference (Heinzelmännchen's `new --asset`) "
                    "before migrating",
                )
            )
    return out


def migrate(data: bytes, path: str, namespace: str | None = None) -> Migration:
    """The migration of ``data``, a Markdown contract read from ``path``; ``namespace`` is
    Heinzelmännchen's (``me``, ``team``; ``""`` for none), else found in ``path``."""
    doc, problems = load_markdown(data, path)
    if doc is None:
        first = problems[0]
        note = Note(first.code, "error", first.line, first.column, first.message, first.hint)
        return Migration(path, None, (note,))
    if not _is_heinzel(doc.data):
        return _as_is(doc, path)
    text = doc.text
    left = _placeholders(text)
    if left:
        return Migration(path, None, tuple(left))
    end = frontmatter_end(doc.text)
    assert end is not None  # the loader found it
    odd = _ODD_BREAK.search(doc.text, 0, end)
    if odd:  # YAML breaks lines there, the line edits do not: every position would be off
        line = doc.text.count("\n", 0, odd.start()) + 1
        column = odd.start() - (doc.text.rfind("\n", 0, odd.start()) + 1) + 1
        note = Note(
            HZ178,
            "error",
            line,
            column,
            f"the frontmatter holds the character {_BREAK_NAMES[odd.group()]}, which YAML reads "
            "as a line break: hz migrate edits the frontmatter line by line and does not edit it",
            decide="replace it with a line break or a space, then migrate again",
        )
        return Migration(path, None, (note,))
    front = doc.text[:end]
    migrator = Migrator(doc, Edits(front), extents(front))
    try:
        name = migrator.run(path, namespace)
    except Unedited as cannot:
        return Migration(path, None, (_unedited(doc, cannot),))
    notes = sorted(migrator.notes, key=lambda n: (n.line, n.column, n.code))
    errors = tuple(n for n in notes if n.kind == "error")
    if errors:  # nothing was migrated: only what keeps it from being
        return Migration(path, None, errors)
    # The edits go onto the file's own text: its byte order mark, and each line end as it
    # was written (the loader read CRLF and a lone CR as LF); a line added ends as the first.
    raw = data.decode("utf-8")
    bom = _BOM if raw.startswith(_BOM) else ""
    raw = raw.removeprefix(_BOM)
    first_end = re.search(r"\r\n|\r|\n", raw)
    newline = first_end.group() if first_end else "\n"
    raw_end = _raw_offset(raw, front.count("\n"))
    edited_lines = 0
    try:
        edited = migrator.edits.apply(raw[:raw_end], newline)
    except Unedited:
        migrated = None
    else:
        migrated = bom + edited + raw[raw_end:]
        # Past the edited lines, a line of the migrated file is a line of the original, shifted.
        edited_lines = len(re.findall(r"\r\n|\r|\n", edited))
    back, unread = load_markdown(migrated.encode("utf-8"), path) if migrated else (None, [])
    if back is None and unread and unread[0].code in _LIMITS:
        # Written as hz writes it, the contract outgrows what hz reads (say, more nodes).
        first = unread[0]
        pos = doc.pos(("hz",), key=True)  # the migrated file's lines are not the original's
        note = Note(
            first.code,
            "error",
            pos.line,
            pos.column,
            f"migrated, the contract would not be read by hz: {first.message}",
            decide="split the contract or shorten its hz: block, then migrate again",
        )
        return Migration(path, None, (note,))
    if back is None or _is_heinzel(back.data) or "contract" not in back.data.get("hz", {}):
        return Migration(path, None, (_unedited(doc),))
    assert migrated is not None
    changed = unmeant(doc, back, migrator)
    if changed is not None:  # an edit that says something else than it means
        return Migration(path, None, (changed,))
    fit, decided = _fit(doc)
    kept = migrator.edits.kept_lines()
    refused = _validated(back, doc, decided, kept, edited_lines, edited_lines - front.count("\n"))
    if refused:  # the safety net: what the key map missed, hz validate would refuse
        return Migration(path, None, tuple(refused))
    notes = sorted(notes + fit, key=lambda n: (n.line, n.column, n.code))
    return Migration(path, migrated, tuple(notes), name, _name_at(doc))


def _validated(
    back: SourceDoc,
    doc: SourceDoc,
    decided: set[tuple[str, str]],
    kept: dict[int, int],
    edited: int,
    shift: int,
) -> list[Note]:
    """Every error ``hz validate`` finds in ``back``, the migrated file, that the report does
    not leave to decide already (``decided``: an operation for the command provider, HZ171;
    arguments or a window hz's operation does not take, HZ172), as an error of the original:
    the migrated file is not written, so each names the line and column of the migrated file
    it is on, and stands where the original has that line: a line no edit touched (``kept``:
    a line of the migrated frontmatter, 0-based, and the original's) or past the ``edited``
    ones (the body: ``shift`` lines further on) at that line and column, any other at the
    original's ``hz:`` key. The checks are
    those of ``hz validate`` with hz's own catalog, publish targets and default budget
    ceiling: an operator's configuration is ``hz validate``'s to apply."""
    from hz.compiler.validate import validate_source

    _, found = validate_source(back)
    errors = [d for d in found if d.severity == "error" and (d.code, d.message) not in decided]
    if not errors:
        return []
    hz = doc.pos(("hz",), key=True)
    lines = back.text.split("\n")
    out = []
    for d in errors:
        written = lines[d.line - 1].strip() if 0 < d.line <= len(lines) else ""
        cut = written if len(written) <= _SHOWN else written[: _SHOWN - 1] + "…"
        shown = f": {printable(cut)}" if written else ""
        if d.line > edited:
            line, column = d.line - shift, d.column
        elif d.line - 1 in kept:
            line, column = kept[d.line - 1] + 1, d.column
        else:
            line, column = hz.line, hz.column
        out.append(
            Note(
                d.code,
                "error",
                line,
                column,
                f"migrated, the file would fail hz validate (line {d.line}, column {d.column} "
                f"of the migrated file{shown}): {d.message}",
                decide="change the original so that hz validate passes its migration"
                + (f" (hz validate's hint: {printable(d.hint)})" if d.hint else "")
                + ", then migrate again",
            )
        )
    return out


def _unedited(doc: SourceDoc, refused: Unedited | None = None) -> Note:
    if refused is not None and refused.why and refused.at is not None:
        before = doc.text[: refused.at]
        line = before.count("\n") + 1
        column = refused.at - (before.rfind("\n") + 1) + 1
        return Note(HZ178, "error", line, column, refused.why, refused.decide)
    pos = doc.pos(("hz",), key=True)
    return Note(
        HZ178,
        "error",
        pos.line,
        pos.column,
        "the hz: block is written in a way hz migrate does not edit (flow style, or a key "
        "sharing another's line): the result would not read back",
        decide="write the hz: block one key per line (block style), then migrate again",
    )


def _as_is(doc: SourceDoc, path: str) -> Migration:
    """An hz contract, left as it is: its name, for the folder's view of names."""
    hz = doc.data.get("hz")
    name = hz.get("name") if isinstance(hz, dict) else None
    if not isinstance(name, str):
        return Migration(path, None)
    pos = doc.pos(("hz", "name"), key=True)
    return Migration(path, None, (), name, (pos.line, pos.column))


def name_of(data: bytes, path: str) -> str | None:
    """The ``hz.name`` of the hz contract in ``data`` (read from ``path``: Markdown, or YAML
    when it ends in ``.yaml`` or ``.yml``); ``None`` for a file that is no hz contract, or has
    no name of text."""
    from hz.compiler.load.loader import read_bytes

    doc, _ = (
        read_bytes(data, path) if path.endswith((".yaml", ".yml")) else load_markdown(data, path)
    )
    if doc is None or _is_heinzel(doc.data):
        return None
    return _as_is(doc, path).name


def _name_at(doc: SourceDoc) -> tuple[int, int]:
    """Where the name a migration writes comes from: the top-level name, else hz.schema."""
    source = doc.data.get("name")
    pos = doc.pos(("name",) if isinstance(source, str) and source else ("hz", "schema"), key=True)
    return pos.line, pos.column


def _raw_offset(raw: str, lines: int) -> int:
    """The offset in ``raw`` after its first ``lines`` line ends (CRLF, LF or a lone CR)."""
    at = 0
    for found in re.finditer(r"\r\n|\r|\n", raw):
        if lines == 0:
            break
        lines -= 1
        at = found.end()
    return at


def _fit(doc: SourceDoc) -> tuple[list[Note], set[tuple[str, str]]]:
    """HZ172 for each read whose arguments or window hz refuses: a catalog operation that
    takes other arguments than Heinzelmännchen's provider took, a window hz cannot resolve
    (``next 7d`` looks ahead). Checked on the original,
    whose inputs are where hz's are (under ``hz:``), so the lines are the original's. And the
    code and message of each diagnostic left to decide so (with HZ410, an operation left to
    the command provider: HZ171), which ``hz validate`` of the migrated file repeats."""
    import copy
    from dataclasses import replace

    from hz.compiler.checks.reads import check_reads
    from hz.compiler.rules.registry import HZ410, HZ411, HZ412

    data = copy.deepcopy(doc.data)
    inputs = data["hz"].get("inputs")
    for spec in inputs.values() if isinstance(inputs, dict) else ():
        window = spec.get("window") if isinstance(spec, dict) else None
        if isinstance(window, str) and window.startswith("last "):
            spec["window"] = window.removeprefix("last ").strip()  # migrated: last_window
    doc = replace(doc, data=data)
    found = [d for d in check_reads(doc, CATALOG) if d.code in (HZ410, HZ411, HZ412)]
    notes = [
        Note(
            HZ172,
            "decide",
            d.line,
            d.column,
            f"hz reads this input otherwise than Heinzelmännchen did: {d.message}",
            decide="give the arguments and window hz's operation takes (`hz providers` lists "
            "them; a window looks back from the run), or serve this input through an operation "
            "of the operator's command provider under another name",
        )
        for d in found
        if d.code != HZ410
    ]
    return notes, {(d.code, d.message) for d in found}
