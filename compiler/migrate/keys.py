"""The key map: each key of a Heinzelmännchen ``hz:`` block, edited into hz's and noted."""

from __future__ import annotations

import json
import re
from typing import Any

from hz.compiler.load.scalars import resolve_plain
from hz.compiler.migrate.edit import Editor, indent, shown
from hz.compiler.migrate.names import hz_name
from hz.compiler.migrate.notes import Note
from hz.compiler.migrate.publishes import publishes
from hz.compiler.rules.registry import (
    HZ170,
    HZ171,
    HZ173,
    HZ174,
    HZ175,
    HZ177,
    HZ178,
    HZ179,
    HZ181,
)
from hz.runtime.artifacts.operations import CATALOG
from hz.runtime.artifacts.printable import printable

#: Heinzelmännchen's own defaults, which hz makes explicit (hz requires both keys).
HEINZEL_TIMEOUT = "10m"
HEINZEL_MAX_USD = "1.0"
_CONTRACT_READ = re.compile(
    r"contract:(?P<namespace>[a-z][a-z0-9-]*)/(?P<name>[a-z][a-z0-9-]*)(?:#(?P<output>[a-z_][a-z0-9_]*))?\Z"
)
#: hz.name's form (the contract schema's pattern and length).
_HZ_NAME = re.compile(r"(?=.{1,64}\Z)[a-z][a-z0-9]*(-[a-z0-9]+)*\Z")
_CATCH_UP = ("latest", "all", "skip")
#: A window written plain that stays plain without its "last ".
_PLAIN_WINDOW = re.compile(r"[0-9A-Za-z][0-9A-Za-z_.-]*\Z")
#: Heinzelmännchen's top-level frontmatter keys: its model forbids any other.
HEINZEL_TOP = ("name", "kind", "description", "id", "version", "hz")
#: Those of them hz reads as Heinzelmännchen did: all but ``id``.
_SHARED_TOP = ("name", "kind", "description", "version", "hz")
#: What hz reads from a top-level key Heinzelmännchen does not have: the file is refused, so
#: that the request stays the body the author reviewed.
_HZ_READS = {
    "prompt": "the agent's request, instead of the one built from the body's sections",
    "contract": "the contract's text, instead of the body",
}
#: The keys an hz input that reads a contract has besides ``read``, kept as written.
_CONTRACT_INPUT_KEYS = ("description", "max_age")


class Migrator(Editor):
    def run(self, path: str, namespace: str | None) -> str | None:
        """Edit every key; the ``hz.name`` written (``None``: the name or schema is refused)."""
        pad = " " * (self.column("schema") - 1)
        schema = self.hz["schema"]
        if type(schema) is not int or schema != 1:
            pos = self.doc.pos(("hz", "schema"))
            self.notes.append(
                Note(
                    HZ178,
                    "error",
                    pos.line,
                    pos.column,
                    f"hz.schema is {shown(json.dumps(schema, ensure_ascii=False))}: hz "
                    "migrate knows Heinzelmännchen's schema 1 only",
                    decide="migrate a contract of Heinzelmännchen's schema 1 (hz.schema: 1)",
                )
            )
            return None
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
            return None
        base = name[len(namespace) + 1 :] if namespace else name
        self.rename(("schema",), "contract")
        after = self.entry(("schema",))[1]
        self.edits.replace_lines(after, after, [f"{pad}name: {json.dumps(name)}"])
        self.add((), "name", name)
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
        self.top_level()
        handled = {"schema", "title", "inputs", "outputs", "agent", "timeout"}
        for key in list(self.hz):
            if key == "inputs":
                self.inputs()
            elif key == "outputs":
                self.outputs()
            elif key == "publishes":
                publishes(self)
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
                    self.drop((key,), "no schedule, nothing to catch up")
            elif key == "requires":
                self.note(
                    HZ174,
                    "mapped",
                    [key],
                    "hz.requires is not needed: hz knows each input's capability from its read, "
                    "and the operator binds it ([capabilities]); commented out",
                )
                self.drop((key,), "hz reads the capabilities from the inputs' read")
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
                self.drop((key,), f"hz has no hz.{printable(key)}")
        self.limits()
        self.finish()
        return name

    def top_level(self) -> None:
        """Each key beside ``hz:`` that Heinzelmännchen does not define: one hz reads (a
        ``prompt`` would replace the request the body makes) refuses the file; any other is
        commented out, as is ``id`` (Heinzelmännchen's minted id, which hz has no home for);
        an ``x-`` key, the author's in both, stays as written."""
        for path in self.extents:
            key = path[0] if len(path) == 1 else None
            # An x- key is the author's: both ignore it.
            if not isinstance(key, str) or key in _SHARED_TOP or key.startswith("x-"):
                continue
            pos = self.doc.pos((key,), key=True)
            if key in self.doc.data and key in _HZ_READS:
                self.notes.append(
                    Note(
                        HZ181,
                        "error",
                        pos.line,
                        pos.column,
                        f"the top-level {key}: is not Heinzelmännchen's, and hz reads it as "
                        f"{_HZ_READS[key]}: migrated, the job would not do what the body says",
                        decide=f"move what it says into the body and delete {key}: (or rename "
                        f"it x-{key}: to keep it as a note), then migrate again",
                    )
                )
            else:
                what = (
                    "Heinzelmännchen's minted id: hz knows a contract by hz.name"
                    if key == "id"
                    else "not a key of Heinzelmännchen's frontmatter, nor of hz's"
                )
                self.notes.append(
                    Note(
                        HZ174,
                        "decide",
                        pos.line,
                        pos.column,
                        f"the top-level {printable(key)}: is {what}; commented out",
                        decide=f"rename it x-{printable(key)}: if a tool of yours reads it, or "
                        "delete the comment",
                    )
                )
                self.drop_top(key, f"hz has no top-level {printable(key)}")

    def inputs(self) -> None:
        inputs = self.hz["inputs"]
        if not isinstance(inputs, dict):
            return
        for name, spec in inputs.items():
            if not isinstance(spec, dict) or not isinstance(spec.get("read"), str):
                continue
            read: str = spec["read"]
            upstream = _CONTRACT_READ.match(read)
            if upstream:
                self.chain(name, spec, upstream)
                continue
            window = spec.get("window")
            if isinstance(window, str) and window.startswith("last "):
                self.last_window(name, window)
            if read in CATALOG:
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
        short = window.removeprefix("last ").strip()
        plain = (
            self.extent("inputs", name, "window").style == ""
            and _PLAIN_WINDOW.match(short)
            and resolve_plain(short) == short  # not a number, a boolean or null when plain
        )
        self.replace_value(("inputs", name, "window"), short if plain else json.dumps(short), short)
        self.note(
            HZ170,
            "mapped",
            ["inputs", name, "window"],
            f"window: {printable(window)} is window: {printable(short)} (back from the run)",
        )

    def chain(self, name: str, spec: dict[str, Any], upstream: re.Match[str]) -> None:
        """``contract:NS/NAME#OUTPUT`` is ``contract:NS-NAME``; ``stage: draft`` is what hz
        reads; any other key is commented out where it stands, and left to decide."""
        target = f"{upstream['namespace']}-{upstream['name']}"
        output = upstream["output"]
        self.note(
            HZ170,
            "mapped",
            ("inputs", name, "read"),
            f"{printable(spec['read'])} is contract:{target}: the newest completed draft of "
            f"{target}"
            + (f" (hz has one draft per job: the output name {output} is gone)" if output else ""),
        )
        read = f"contract:{target}"
        self.replace_value(("inputs", name, "read"), json.dumps(read), read)
        for key, value in spec.items():
            path = ("inputs", name, key)
            if key == "read" or key in _CONTRACT_INPUT_KEYS:
                continue
            if key == "stage" and value == "draft":
                self.note(
                    HZ170,
                    "mapped",
                    path,
                    f"stage: draft is what an hz input that reads {target} reads (its newest "
                    "completed draft): deleted",
                )
                self.remove(path)
                continue
            if key == "window":
                decide = (
                    f"hz reads the newest completed draft of {target}; to refuse one older than "
                    "a span, write max_age: (such as 7d), or delete the comment"
                )
            else:
                decide = "keep the intent in the body's prose, or delete the comment"
            self.note(
                HZ174,
                "decide",
                path,
                f"hz.inputs.{printable(name)}.{printable(key)}: {shown(value)} has no "
                f"counterpart in an input that reads another contract's draft: commented out",
                decide=decide,
            )
            self.drop(path, f"an input that reads a contract has no {printable(key)}")

    def outputs(self) -> None:
        outputs = self.hz["outputs"]
        if not isinstance(outputs, dict):
            # A list (`outputs: [a]`) or a scalar names no output: say what it is instead.
            self.note(
                HZ173,
                "error",
                ["outputs"],
                f"hz.outputs is {_what(outputs)}, not a mapping of named outputs (NAME: "
                "{format: ...}); an hz job has one draft",
                decide="write hz.outputs as a mapping of one named output, such as "
                "`draft: {format: markdown}`, then migrate again",
            )
            return
        if len(outputs) != 1:
            self.note(
                HZ173,
                "error",
                ["outputs"],
                f"hz.outputs names {len(outputs)} outputs; an hz job has one draft",
                decide="split the contract into one contract per output (one may read another's "
                "draft), or keep one output",
            )
            return
        (output,) = outputs
        value = outputs[output]
        outer = self.extent("outputs")
        inner = self.extent("outputs", output)
        self.note(
            HZ170,
            "mapped",
            ["outputs"],
            f"hz.outputs.{printable(output)} is hz.output: the job's one draft (the name "
            f"{printable(output)} is gone)",
        )
        # NAME: with no value (or ~) is Heinzelmännchen's output of the defaults: hz's is {}.
        written: dict[str, Any] = {} if value is None else value
        edits = self.edits
        text = edits.text
        self.simple_key(("outputs", output))
        if outer.flow:  # outputs: {NAME: VALUE} is output: VALUE, as written
            self.rename(("outputs",), "output")
            start, end = inner.value
            edits.splice(*outer.value, "{}" if value is None else text[start:end])
            self._values[("outputs",)] = written
            return
        assert outer.key is not None
        assert inner.key is not None
        start, end, column, _ = self.entry(("outputs",))
        inner_line, _, inner_column, _ = self.entry(("outputs", output))
        # After each key's colon (simple_key found it on the key's line): a comment, or the
        # value's first line.
        outer_comment = self._after_colon(outer.key[1]).strip()
        head = self._after_colon(inner.key[1]).strip()
        if value is None:  # ~, null or nothing, and maybe a comment after it
            rest = text[inner.value[1] : edits.starts[edits.line_of(inner.value[1]) + 1] - 1]
            head = "{}" + (f"  {rest.strip()}" if rest.strip() else "")
        shift = inner_column - column
        body = [
            line[shift:] if line[:shift].strip() == "" else line
            for line in (*self.lines[start + 1 : inner_line], *self.lines[inner_line + 1 : end])
        ]
        head_line = (
            self.lines[start][:column]
            + "output:"
            + (f" {head}" if head else "")
            + (f"  {outer_comment}" if outer_comment else "")
        )
        edits.replace_lines(start, end, [head_line, *body])
        self._renamed[("outputs",)] = "output"
        self._values[("outputs",)] = written

    def _after_colon(self, key_end: int) -> str:
        """The rest of a key's line after its colon."""
        text = self.edits.text
        colon = text.index(":", key_end)
        return text[colon + 1 : self.edits.starts[self.edits.line_of(key_end) + 1] - 1]

    def schedule(self) -> None:
        cron = self.hz["schedule"]
        catch_up = self.hz.get("catch_up")
        known = isinstance(catch_up, str) and catch_up in _CATCH_UP
        if "catch_up" in self.hz and known and isinstance(cron, str):
            spec = f"{{cron: {json.dumps(cron)}, catch_up: {json.dumps(catch_up)}}}"
            self.replace_value(("schedule",), spec, {"cron": cron, "catch_up": catch_up})
            self.remove(("catch_up",))
            self.note(HZ170, "mapped", ["catch_up"], "catch_up is hz.schedule's catch_up")
        elif "catch_up" in self.hz and not known:
            # Never pasted: a value of its own choosing could write further keys into the
            # schedule (a time zone); hz knows three.
            self.note(
                HZ174,
                "decide",
                ["catch_up"],
                f"catch_up: {shown(json.dumps(catch_up, ensure_ascii=False, default=str))} "
                "is not one of hz's (latest, all or skip): commented out",
                decide="write schedule: {cron: …, catch_up: latest|all|skip}, or leave hz's "
                "default (latest)",
            )
            self.drop(("catch_up",), "not one of latest, all or skip")
        elif "catch_up" in self.hz:
            self.note(
                HZ174,
                "decide",
                ["catch_up"],
                f"catch_up: {catch_up} belongs in hz.schedule, which is no cron expression "
                "here: commented out",
                decide="write schedule: {cron: …, catch_up: " + str(catch_up) + "}",
            )
            self.drop(("catch_up",), "hz.schedule is no cron expression to merge it into")
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
                f"retries: {shown(str(retries))} has no counterpart: hz starts a run at most "
                "once and never repeats a failed one by itself (its cost would count again); "
                "commented out",
                decide="start a failed run again by hand or from CI, or accept one attempt",
            )
        self.drop(("retries",), "hz starts a run at most once")

    def limits(self) -> None:
        """hz requires ``timeout`` and ``agent.max_usd``; Heinzelmännchen had defaults."""
        hz_at = self.doc.pos(("hz",), key=True)
        # After the last line of the block's last value: never inside it (a block scalar's
        # last lines may start with # or be blank, a quoted one's too).
        hz_end = self.lines_deeper((), hz_at.line - 1, hz_at.column - 1)
        pad = " " * (self.column("schema") - 1)
        added: list[str] = []
        agent = self.hz.get("agent")
        budget = f"max_usd: {HEINZEL_MAX_USD}"
        where: list[str | int] = ["agent"] if "agent" in self.hz else []
        if isinstance(agent, dict) and "max_usd" in agent:
            pass
        elif isinstance(agent, dict) and self.extent("agent").flow:
            close = self.extent("agent").value[1] - 1  # the closing brace
            before = self.edits.text[:close].rstrip()
            self.edits.splice(close, close, budget if before[-1] in "{," else f", {budget}")
            self.add(("agent",), "max_usd", float(HEINZEL_MAX_USD))
        elif isinstance(agent, dict) or (agent is None and "agent" in self.hz):
            start = self.key_line("agent")
            column = self.first_key_column("agent")
            inner = " " * (indent(self.lines[start]) + 2 if column is None else column)
            if agent is None and self.extent("agent").value[1] > self.extent("agent").value[0]:
                self.replace_value(("agent",), "", None)  # an explicit null: ~ or null
            end = self.entry(("agent",))[1]
            self.edits.replace_lines(end, end, [f"{inner}{budget}"])
            self.add(("agent",), "max_usd", float(HEINZEL_MAX_USD))
        else:
            if "agent" in self.hz:
                self.note(
                    HZ174,
                    "decide",
                    ["agent"],
                    f"hz.agent: {shown(agent)} is not a mapping: commented out",
                    decide="keep the intent in the body's prose, or delete the comment",
                )
                self.drop(("agent",), "hz.agent is a mapping of tools and max_usd")
            added += [f"{pad}agent:", f"{pad}  {budget}"]
            self.add((), "agent", {"max_usd": float(HEINZEL_MAX_USD)})
            where = []
        if not isinstance(agent, dict) or "max_usd" not in agent:
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
            self.add((), "timeout", HEINZEL_TIMEOUT)
            self.note(
                HZ175,
                "decide",
                [],
                f"hz requires a timeout: timeout: {HEINZEL_TIMEOUT} added, Heinzelmännchen's "
                "default",
                decide="set how long one session of this job may take",
            )
        if added:
            self.edits.replace_lines(hz_end, hz_end, added)


def _what(value: Any) -> str:
    """What a YAML value that is no mapping is, for a message: ``a list of 1 item``."""
    if isinstance(value, list):
        return f"a list of {len(value)} item{'' if len(value) == 1 else 's'}"
    if value is None:
        return "empty"
    if isinstance(value, bool):
        return "true or false"
    return "a string" if isinstance(value, str) else "a number"
