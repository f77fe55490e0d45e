"""``hz migrate``: a Heinzelmännchen contract (``hz.schema: 1``) as an hz contract.

The conversion is a set of targeted edits of the frontmatter's lines, located by hz's own
loader (the line and column of every key); nothing is re-serialised, so every byte the
migration does not touch stays as the author wrote it: comments, quotes, folded scalars, key
order, blank lines, and the whole body (decision 0026). An hz contract (``hz.contract``) is
left as it is, which makes the migration idempotent: a migrated file migrates to itself.

Every edit, and every key that cannot be carried over, is reported as a ``Note`` with a rule
code (HZ170-HZ178, explained by ``hz explain``), the line, and what the user must decide.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import PurePath
from typing import Any, Literal

from hz.compiler.load.markdown import frontmatter_end, load_markdown
from hz.compiler.rules.registry import (
    HZ170,
    HZ171,
    HZ172,
    HZ173,
    HZ174,
    HZ175,
    HZ176,
    HZ177,
    HZ178,
    HZ179,
)
from hz.compiler.source import SourceDoc
from hz.runtime.artifacts.operations import CATALOG
from hz.runtime.artifacts.printable import printable

#: What a note is: an edit made (``mapped``), a choice left to the user (``decide``), or a
#: problem that keeps the file from being migrated (``error``).
Kind = Literal["mapped", "decide", "error"]

#: The folders Heinzelmännchen reads contracts from, its namespaces: yours and your team's.
NAMESPACES = ("me", "team")
#: Heinzelmännchen's own defaults, which hz makes explicit (hz requires both keys).
HEINZEL_TIMEOUT = "10m"
HEINZEL_MAX_USD = "1.0"
_PLACEHOLDER = re.compile(r"\{\{\s*asset:[^}\n]*\}\}")
_CONTRACT_READ = re.compile(
    r"contract:(?P<namespace>[a-z][a-z0-9-]*)/(?P<name>[a-z][a-z0-9-]*)(?:#(?P<output>[a-z_][a-z0-9_]*))?\Z"
)
_SUFFIXES = (".prose.md", ".md")
#: hz.name's form (the contract schema's pattern and length).
_HZ_NAME = re.compile(r"(?=.{1,64}\Z)[a-z][a-z0-9]*(-[a-z0-9]+)*\Z")
#: The characters YAML reads as line breaks besides \n (and \r, which the loader made \n).
_ODD_BREAK = re.compile("[\u0085\u2028\u2029]")
_BREAK_NAMES = {
    "\u0085": "U+0085 (next line)",
    "\u2028": "U+2028 (line separator)",
    "\u2029": "U+2029 (paragraph separator)",
}
_CATCH_UP = ("latest", "all", "skip")
_PLAIN_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*\Z")


@dataclass(frozen=True, slots=True)
class Note:
    """One line of a migration report."""

    code: str
    kind: Kind
    line: int
    column: int
    message: str
    decide: str | None = None


@dataclass(frozen=True, slots=True)
class Migration:
    """The migrated text of one file and its notes: ``text`` is ``None`` when the file is left
    as it is (an hz contract already, or one that cannot be migrated: an error note says why)."""

    path: str
    text: str | None
    notes: tuple[Note, ...] = ()

    @property
    def failed(self) -> bool:
        return any(n.kind == "error" for n in self.notes)


@dataclass
class _Edits:
    """Line edits of a text, applied bottom up; each replaces lines [start, end) (0-based)."""

    lines: list[str]
    edits: list[tuple[int, int, list[str]]] = field(default_factory=list)

    def replace(self, start: int, end: int, new: list[str]) -> None:
        self.edits.append((start, end, new))

    def apply(self) -> list[str]:
        out = list(self.lines)
        for start, end, new in sorted(self.edits, key=lambda e: (e[0], e[1]), reverse=True):
            out[start:end] = new
        return out


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _span(lines: Sequence[str], start: int) -> int:
    """The end (exclusive) of the block entry whose key is on line ``start`` (0-based): the
    lines after it that are blank or indented deeper, less trailing blank and comment lines
    (those belong to what follows)."""
    column = _indent(lines[start])
    end = start + 1
    while end < len(lines):
        line = lines[end]
        if line.strip() and _indent(line) <= column:
            break
        end += 1
    while end > start + 1 and (
        not lines[end - 1].strip() or lines[end - 1].lstrip().startswith("#")
    ):
        end -= 1
    return end


def _commented(lines: Sequence[str], why: str) -> list[str]:
    column = _indent(lines[0])
    pad = " " * column
    out = [f"{pad}# hz migrate: {why}"]
    out += [f"{pad}# {line[column:]}" if line.strip() else line for line in lines]
    return out


def hz_name(path: str, name: str | None, namespace: str | None = None) -> tuple[str, str | None]:
    """The ``hz.name`` of a contract at ``path`` named ``name`` (else its file name), and its
    namespace: a contract in a ``me/`` or ``team/`` folder (of ``path`` as given), or of
    ``namespace`` when that is given (``""``: none), is ``NAMESPACE-NAME``, so that
    ``team/weekly-report`` and ``me/weekly-report`` stay two jobs."""
    parts = PurePath(path).parts
    stem = parts[-1] if parts else path
    for suffix in _SUFFIXES:
        if stem.endswith(suffix):
            stem = stem[: -len(suffix)]
            break
    base = name if isinstance(name, str) and name else stem
    if namespace is None:
        namespace = next((p for p in reversed(parts[:-1]) if p in NAMESPACES), None)
    namespace = namespace or None
    return (f"{namespace}-{base}" if namespace else base), namespace


def _key(key: str) -> str:
    """``key`` as a YAML mapping key: as written when it is a plain word, else double-quoted
    (JSON's escapes, which YAML reads back exactly), so that it can never start a new line."""
    return key if _PLAIN_KEY.match(key) else json.dumps(key)


def _is_heinzel(data: Mapping[str, Any]) -> bool:
    hz = data.get("hz")
    return isinstance(hz, dict) and "schema" in hz and "contract" not in hz


class _Migrator:
    def __init__(self, doc: SourceDoc, lines: list[str]) -> None:
        self.doc = doc
        self.hz: dict[str, Any] = doc.data["hz"]
        self.lines = lines
        self.edits = _Edits(lines)
        self.notes: list[Note] = []

    # -- positions -----------------------------------------------------------------------
    def key_line(self, *path: str | int) -> int:
        """The 0-based line of the key at ``path`` (under ``hz``)."""
        return self.doc.pos(("hz", *path), key=True).line - 1

    def column(self, *path: str | int) -> int:
        return self.doc.pos(("hz", *path), key=True).column

    def note(
        self,
        code: str,
        kind: Kind,
        path: Sequence[str | int],
        message: str,
        decide: str | None = None,
    ) -> None:
        pos = self.doc.pos(("hz", *path), key=True)
        self.notes.append(Note(code, kind, pos.line, pos.column, message, decide))

    def comment_out(self, key: str, why: str) -> None:
        start = self.key_line(key)
        end = _span(self.lines, start)
        self.edits.replace(start, end, _commented(self.lines[start:end], why))

    # -- the keys --------------------------------------------------------------------------
    def run(self, path: str, namespace: str | None) -> None:
        pad = " " * (self.column("schema") - 1)
        schema_line = self.key_line("schema")
        source = self.doc.data.get("name")
        name, namespace = hz_name(path, source, namespace)
        if not _HZ_NAME.match(name):
            from_source = isinstance(source, str) and source
            pos = self.doc.pos(("name",) if from_source else ("hz", "schema"), key=True)
            origin = "the contract's name" if from_source else "the file's name"
            self.notes.append(
                Note(
                    HZ179,
                    "error",
                    pos.line,
                    pos.column,
                    f"hz.name would be {printable(name)} (from {origin}), which is not an hz "
                    "name: lowercase letters, digits and single hyphens, starting with a letter, "
                    "at most 64 characters",
                    decide="give the contract a top-level name: of that form, then migrate again",
                )
            )
            return
        base = name[len(namespace) + 1 :] if namespace else name
        self.edits.replace(
            schema_line,
            schema_line + 1,
            [
                self.lines[schema_line].replace("schema:", "contract:", 1),
                f"{pad}name: {json.dumps(name)}",
            ],
        )
        self.note(HZ170, "mapped", ["schema"], "hz.schema: 1 is hz.contract: 1")
        if namespace:
            self.note(
                HZ177,
                "mapped",
                ["schema"],
                f"hz.name is {name}: the contract is of Heinzelmännchen's namespace {namespace}, "
                f"so its name carries it (contract:{namespace}/{base} "
                f"is read as contract:{name})",
            )
        else:
            self.note(HZ170, "mapped", ["schema"], f"hz.name is {name}, the contract's name")
        handled = {"schema", "title", "inputs", "outputs", "agent", "timeout"}
        for key in list(self.hz):
            if key == "inputs":
                self.inputs()
            elif key == "outputs":
                self.outputs()
            elif key == "publishes":
                self.publishes()
            elif key == "schedule":
                self.schedule()
            elif key == "catch_up":
                if "schedule" not in self.hz:
                    self.note(
                        HZ174,
                        "mapped",
                        [key],
                        "catch_up without a schedule has nothing to catch up: commented out",
                    )
                    self.comment_out(key, "no schedule, nothing to catch up")
            elif key == "requires":
                self.note(
                    HZ174,
                    "mapped",
                    [key],
                    "hz.requires is not needed: hz knows each input's capability from its read, "
                    "and the operator binds it ([capabilities]); commented out",
                )
                self.comment_out(key, "hz reads the capabilities from the inputs' read")
            elif key == "retries":
                self.retries()
            elif key not in handled:
                self.note(
                    HZ174,
                    "decide",
                    [key],
                    f"hz.{printable(key)} has no counterpart in hz: commented out",
                    decide="keep the intent in the body's prose, or delete the comment",
                )
                self.comment_out(key, f"hz has no hz.{printable(key)}")
        self.limits()

    def inputs(self) -> None:
        inputs = self.hz["inputs"]
        if not isinstance(inputs, dict):
            return
        for name, spec in inputs.items():
            if not isinstance(spec, dict) or not isinstance(spec.get("read"), str):
                continue
            read: str = spec["read"]
            window = spec.get("window")
            if isinstance(window, str) and window.startswith("last "):
                self.last_window(name, window)
            upstream = _CONTRACT_READ.match(read)
            if upstream:
                self.chain(name, spec, upstream)
            elif read in CATALOG:
                self.note(
                    HZ170,
                    "mapped",
                    ["inputs", name, "read"],
                    f"{read} is hz's operation of that name",
                )
            else:
                self.note(
                    HZ171,
                    "decide",
                    ["inputs", name, "read"],
                    f"{printable(read)} is not an operation of hz's providers: it stays as "
                    "written, "
                    "for the operator's command provider",
                    decide="declare "
                    f'[providers.command.operations."{printable(read)}"] (argv, args, '
                    "result, window) in the hz configuration of whoever runs the job",
                )

    def last_window(self, name: str, window: str) -> None:
        """``last 7d`` is Heinzelmännchen's long form of ``7d``: back from the run."""
        pos = self.doc.pos(("hz", "inputs", name, "window"))
        line = self.lines[pos.line - 1]
        at = line.find(window, pos.column - 1)
        if at < 0:  # pragma: no cover - the loader's column is where the scalar starts
            return
        short = window.removeprefix("last ").strip()
        self.edits.replace(pos.line - 1, pos.line, [line[:at] + short + line[at + len(window) :]])
        self.note(
            HZ170,
            "mapped",
            ["inputs", name, "window"],
            f"window: {printable(window)} is window: {printable(short)} (back from the run)",
        )

    def chain(self, name: str, spec: dict[str, Any], upstream: re.Match[str]) -> None:
        target = f"{upstream['namespace']}-{upstream['name']}"
        read_path = ("inputs", name, "read")
        output = upstream["output"]
        self.note(
            HZ170,
            "mapped",
            read_path,
            f"{printable(spec['read'])} is contract:{target}: the newest completed draft of "
            f"{target}"
            + (f" (hz has one draft per job: the output name {output} is gone)" if output else ""),
        )
        self.replace_input(name, "{read: " + json.dumps(f"contract:{target}") + "}")

    def replace_input(self, name: str, flow: str) -> None:
        start = self.key_line("inputs", name)
        end = _span(self.lines, start)
        pad = " " * _indent(self.lines[start])
        self.edits.replace(start, end, [f"{pad}{_key(name)}: {flow}"])

    def outputs(self) -> None:
        outputs = self.hz["outputs"]
        if not isinstance(outputs, dict) or len(outputs) != 1:
            count = len(outputs) if isinstance(outputs, dict) else 0
            self.note(
                HZ173,
                "error",
                ["outputs"],
                f"hz.outputs names {count} outputs; an hz job has one draft",
                decide="split the contract into one contract per output (one may read another's "
                "draft), or keep one output",
            )
            return
        (output,) = outputs
        start = self.key_line("outputs")
        end = _span(self.lines, start)
        inner = self.key_line("outputs", output)
        pad = " " * _indent(self.lines[start])
        head = self.lines[inner].split(":", 1)[1].strip()
        inner_end = _span(self.lines, inner)
        shift = _indent(self.lines[inner]) - _indent(self.lines[start])
        body = [
            line[shift:] if line[:shift].strip() == "" else line
            for line in self.lines[inner + 1 : inner_end]
        ]
        self.edits.replace(start, end, [f"{pad}output:{' ' + head if head else ''}", *body])
        self.note(
            HZ170,
            "mapped",
            ["outputs"],
            f"hz.outputs.{printable(output)} is hz.output: the job's one draft (the name "
            f"{printable(output)} is gone)",
        )

    def publishes(self) -> None:
        publishes = self.hz["publishes"]
        items = publishes if isinstance(publishes, list) else []
        actions = [
            p["action"] for p in items if isinstance(p, dict) and isinstance(p.get("action"), str)
        ]
        start = self.key_line("publishes")
        end = _span(self.lines, start)
        pad = " " * _indent(self.lines[start])
        out = [f"{pad}publishes:"]
        for index, action in enumerate(actions):
            command = re.sub(r"[^a-z0-9]+", "-", action.lower()).strip("-")
            out += [
                f"{pad}  - to: command.run",
                f"{pad}    args: {{command: {json.dumps(command)}}}",
            ]
            self.note(
                HZ171,
                "decide",
                ["publishes", index],
                f"publish action {printable(action)} is the operator's command {command} "
                "(to: command.run): hz has no publish target of that name",
                decide=f"declare [publish.commands.{command}] (argv) and allow command.run in "
                "[publish] of the hz configuration of whoever runs the job",
            )
        self.edits.replace(start, end, out)

    def schedule(self) -> None:
        cron = self.hz["schedule"]
        catch_up = self.hz.get("catch_up")
        if isinstance(cron, str) and catch_up in _CATCH_UP:
            start = self.key_line("schedule")
            pad = " " * _indent(self.lines[start])
            spec = f"{{cron: {json.dumps(cron)}, catch_up: {json.dumps(catch_up)}}}"
            self.edits.replace(start, _span(self.lines, start), [f"{pad}schedule: {spec}"])
            gone = self.key_line("catch_up")
            self.edits.replace(gone, _span(self.lines, gone), [])
            self.note(HZ170, "mapped", ["catch_up"], "catch_up is hz.schedule's catch_up")
        elif "catch_up" in self.hz and catch_up not in _CATCH_UP:
            # Never pasted: a value of its own choosing could write further keys into the
            # schedule (a time zone); hz knows three.
            self.note(
                HZ174,
                "decide",
                ["catch_up"],
                f"catch_up: {printable(json.dumps(catch_up, ensure_ascii=False, default=str))} "
                "is not one of hz's (latest, all or skip): commented out",
                decide="write schedule: {cron: …, catch_up: latest|all|skip}, or leave hz's "
                "default (latest)",
            )
            self.comment_out("catch_up", "not one of latest, all or skip")
        self.note(
            HZ170,
            "decide",
            ["schedule"],
            "hz.schedule is carried over; Heinzelmännchen read it in the machine's local time, "
            "hz reads it in UTC",
            decide="add the time zone it means: schedule: {cron: …, timezone: Europe/Berlin}",
        )

    def retries(self) -> None:
        retries = self.hz["retries"]
        if retries == 0:
            self.note(
                HZ174,
                "mapped",
                ["retries"],
                "retries: 0 is what hz does (a run starts at most once): commented out",
            )
        else:
            self.note(
                HZ174,
                "decide",
                ["retries"],
                f"retries: {printable(str(retries))} has no counterpart: hz starts a run at most "
                "once and never repeats a failed one by itself (its cost would count again); "
                "commented out",
                decide="start a failed run again by hand or from CI, or accept one attempt",
            )
        self.comment_out("retries", "hz starts a run at most once")

    def limits(self) -> None:
        """hz requires ``timeout`` and ``agent.max_usd``; Heinzelmännchen had defaults."""
        hz_start = self.doc.pos(("hz",), key=True).line - 1
        hz_end = _span(self.lines, hz_start)
        pad = " " * (self.column("schema") - 1)
        added: list[str] = []
        agent = self.hz.get("agent")
        if not isinstance(agent, dict) or "max_usd" not in agent:
            if isinstance(agent, dict):
                start = self.key_line("agent")
                end = _span(self.lines, start)
                inner = " " * (_indent(self.lines[start]) + 2)
                self.edits.replace(end, end, [f"{inner}max_usd: {HEINZEL_MAX_USD}"])
                where: list[str | int] = ["agent"]
            else:
                added += [f"{pad}agent:", f"{pad}  max_usd: {HEINZEL_MAX_USD}"]
                where = []
            self.note(
                HZ175,
                "decide",
                where,
                f"hz requires a budget: agent.max_usd: {HEINZEL_MAX_USD} added, Heinzelmännchen's "
                "default cap ([heinzel] max_usd)",
                decide="set the most one run of this job may cost",
            )
        if "timeout" not in self.hz:
            added.insert(0, f"{pad}timeout: {HEINZEL_TIMEOUT}")
            self.note(
                HZ175,
                "decide",
                [],
                f"hz requires a timeout: timeout: {HEINZEL_TIMEOUT} added, Heinzelmännchen's "
                "default",
                decide="set how long one session of this job may take",
            )
        if added:
            self.edits.replace(hz_end, hz_end, added)


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
        return Migration(path, None, ())
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
    lines = doc.text[:end].split("\n")
    migrator = _Migrator(doc, lines)
    migrator.run(path, namespace)
    notes = sorted(migrator.notes, key=lambda n: (n.line, n.column, n.code))
    errors = tuple(n for n in notes if n.kind == "error")
    if errors:  # nothing was migrated: only what keeps it from being
        return Migration(path, None, errors)
    front = "\n".join(migrator.edits.apply())
    migrated = front + doc.text[end:]
    back, _ = load_markdown(migrated.encode("utf-8"), path)
    if back is None or _is_heinzel(back.data) or "contract" not in back.data.get("hz", {}):
        pos = doc.pos(("hz",), key=True)
        note = Note(
            HZ178,
            "error",
            pos.line,
            pos.column,
            "the hz: block is written in a way hz migrate does not edit (flow style, or a key "
            "sharing another's line): the result would not read back",
            decide="write the hz: block one key per line (block style), then migrate again",
        )
        return Migration(path, None, (note,))
    notes = sorted(notes + _fit(doc), key=lambda n: (n.line, n.column, n.code))
    # The loader read the text with its line ends as \n and without a byte order mark: the
    # file keeps its own.
    if b"\r\n" in data:
        migrated = migrated.replace("\n", "\r\n")
    if data.startswith(b"\xef\xbb\xbf"):
        migrated = "\ufeff" + migrated
    return Migration(path, migrated, tuple(notes))


def _fit(doc: SourceDoc) -> list[Note]:
    """HZ172 for each read whose arguments or window hz refuses: a catalog operation that
    takes other arguments than Heinzelmännchen's provider took, a window hz cannot resolve
    (``next 7d`` looks ahead). Checked on the original,
    whose inputs are where hz's are (under ``hz:``), so the lines are the original's."""
    import copy
    from dataclasses import replace

    from hz.compiler.checks.reads import check_reads
    from hz.compiler.rules.registry import HZ411, HZ412

    data = copy.deepcopy(doc.data)
    inputs = data["hz"].get("inputs")
    for spec in inputs.values() if isinstance(inputs, dict) else ():
        window = spec.get("window") if isinstance(spec, dict) else None
        if isinstance(window, str) and window.startswith("last "):
            spec["window"] = window.removeprefix("last ").strip()  # migrated: last_window
    doc = replace(doc, data=data)
    return [
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
        for d in check_reads(doc, CATALOG)
        if d.code in (HZ411, HZ412)
    ]
