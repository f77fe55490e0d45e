"""Where input values come from: an inputs file and ``--input`` arguments, with positions.

``--input NAME=VALUE`` takes VALUE as a string, unless the input's schema declares a ``type``
that excludes strings: then VALUE is parsed as JSON (``--input limit=5``). ``NAME=@FILE``
takes the file's text the same way (so ``issues=@issues.json`` gives an array), and ``@@``
escapes a literal leading ``@``. All sources together may hold at most 8 MiB.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from hz.compiler.diagnostics import Diagnostic
from hz.compiler.inputs.json_file import load_json
from hz.compiler.load.problems import Kind, LoadProblem
from hz.compiler.load.wording import for_contract
from hz.compiler.rules.registry import HZ701, HZ705, HZ706
from hz.compiler.source import JsonPath, Pos
from hz.runtime.artifacts.models import InputSpec
from hz.runtime.artifacts.packet_limits import MAX_INPUT_BYTES
from hz.runtime.artifacts.regular_file import read_regular

MAX_YAML_BYTES = 256 * 1024
#: How much of an --input value a message shows: it names the argument, not the whole value.
SHOWN_VALUE = 40


class Origin(Protocol):
    @property
    def path(self) -> str: ...

    def pos(self, path: JsonPath, *, key: bool = False) -> Pos: ...


@dataclass(frozen=True, slots=True)
class _Unlocated:
    """A file whose value has no positions (``--input NAME=@FILE`` of a string)."""

    path: str

    def pos(self, path: JsonPath, *, key: bool = False) -> Pos:
        return Pos(0, 0)


@dataclass(frozen=True, slots=True)
class Argument:
    """An ``--input`` argument: problems are reported at the argument (``--input week=x``)."""

    path: str

    def pos(self, path: JsonPath, *, key: bool = False) -> Pos:
        return Pos(0, 0)


def shown_name(name: str) -> str:
    """An input name from outside (an --input argument, an inputs file's key) as a message
    shows it: cut after 60 characters, like the argument itself."""
    return name if len(name) <= 60 else name[:59] + "…"


def argument(arg: str) -> str:
    """How a message names an ``--input`` argument: the flag and the start of its text (escaped
    where it is shown, like every outside string)."""
    shown = arg if len(arg) <= SHOWN_VALUE else arg[: SHOWN_VALUE - 1] + "…"
    return f"--input {shown}"


def located(
    origin: Origin,
    at: JsonPath,
    code: str,
    message: str,
    *,
    key: bool = False,
    hint: str | None = None,
) -> Diagnostic:
    """A diagnostic at ``at`` inside ``origin``: a file position, or the argument itself."""
    if isinstance(origin, Argument):
        return Diagnostic(code, message, origin.path, hint=hint, argument=True)
    pos = origin.pos(at, key=key)
    return Diagnostic(code, message, origin.path, pos.line, pos.column, hint=hint)


@dataclass(frozen=True, slots=True)
class Supplied:
    """One value and where it came from: ``at`` is its path inside ``origin``."""

    value: Any
    origin: Origin
    at: JsonPath = ()


class Allowance:
    """What is left of the 8 MiB that all input sources may add up to."""

    def __init__(self) -> None:
        self.left = MAX_INPUT_BYTES

    def read(self, path: Path, display: str) -> tuple[bytes | None, Diagnostic | None]:
        try:
            data = read_regular(path, limit=self.left, confined_to=Path.cwd())
        except OSError as e:
            return None, Diagnostic(HZ701, f"cannot read file: {e.strerror or e}", display)
        return self.take(data, _Unlocated(display))

    def take(self, data: bytes, origin: Origin) -> tuple[bytes | None, Diagnostic | None]:
        if len(data) > self.left:
            message = f"inputs are larger than 8 MiB ({MAX_INPUT_BYTES:,} bytes) in total"
            hint = "pass a smaller extract of the data; the prompt is capped at 1 MiB anyway"
            return None, located(origin, (), HZ705, message, hint=hint)
        self.left -= len(data)
        return data, None


def shorten(text: str) -> str:
    # jsonschema quotes the whole offending value; an 8 MiB array must not become the message.
    return text if len(text) <= 200 else f"{text[:110]} … {text[-80:]}"


def read_inputs_file(
    path: Path, allowance: Allowance | None = None
) -> tuple[dict[str, Supplied], list[Diagnostic]]:
    """Values from a JSON (``.json``) or YAML (anything else) file holding one mapping."""
    allowance = allowance or Allowance()
    display = str(path)
    data, problem = allowance.read(path, display)
    if data is None:
        return {}, [problem] if problem else []
    doc: Origin
    if path.suffix.lower() == ".json":
        jdoc, diagnostics = load_json(data, display, code=HZ701)
        if jdoc is None:
            return {}, diagnostics
        if not isinstance(jdoc.data, dict):
            message = "an inputs file holds one JSON object: input names to values"
            return {}, [Diagnostic(HZ701, message, display, 1, 1)]
        doc, values = jdoc, jdoc.data
    else:
        if len(data) > MAX_YAML_BYTES:
            message = "a YAML inputs file is limited to 256 KiB; write larger inputs as JSON"
            return {}, [Diagnostic(HZ701, message, display, hint="JSON inputs may be 8 MiB")]
        from hz.compiler.load.loader import read_bytes

        ydoc, problems = read_bytes(data, display)
        if ydoc is None:
            return {}, [_for_inputs(p) for p in problems]
        doc, values = ydoc, ydoc.data
    return {name: Supplied(value, doc, (name,)) for name, value in values.items()}, []


#: Loader problems about the shape of the file, in an inputs file's words (HZ701); the rest
#: (syntax, encoding, keys, anchors, tags) read as they do for a contract.
_INPUTS_WORDING: dict[Kind, Callable[[Any], tuple[str, str | None]]] = {
    "not_a_mapping": lambda d: ("an inputs file holds one mapping: input names to values", None),
    "empty": lambda d: (
        "the inputs file is empty; it holds one mapping: input names to values",
        None,
    ),
    "documents": lambda d: ("more than one YAML document in the inputs file", None),
    "too_deep": lambda d: (
        f"nesting is deeper than {d['limit']} levels",
        "write deeply nested inputs as JSON",
    ),
    "too_many_nodes": lambda d: (
        f"more than {d['limit']:,} YAML nodes in the file",
        "write large inputs as JSON",
    ),
}


def _for_inputs(problem: LoadProblem) -> Diagnostic:
    words = _INPUTS_WORDING.get(problem.kind)
    if words is None:
        return for_contract(problem)
    message, hint = words(problem.data)
    return Diagnostic(HZ701, message, problem.file, problem.line, problem.column, hint=hint)


def _wants_json(spec: InputSpec | None) -> bool:
    schema = spec.schema_ if spec is not None else None
    declared = schema.get("type") if isinstance(schema, dict) else None
    if isinstance(declared, str):
        return declared != "string"
    if isinstance(declared, list):
        return "string" not in declared
    return False


def parse_input_arg(
    arg: str, specs: Mapping[str, InputSpec], allowance: Allowance
) -> tuple[str | None, Supplied | None, list[Diagnostic]]:
    """One ``NAME=VALUE`` or ``NAME=@FILE`` argument. A problem with the argument itself or
    its value is reported at the argument (``--input week=x: …``), one in a file it names at
    that file's line."""
    try:
        arg.encode("utf-8")
    except UnicodeEncodeError as e:  # a byte the locale could not decode (surrogateescape)
        byte = ord(arg[e.start]) - 0xDC00
        message = f"byte 0x{byte:02x} is not UTF-8 text"
        return None, None, [located(Argument(argument(arg)), (), HZ706, message)]
    name, eq, raw = arg.partition("=")
    if not eq or not name:
        message = "not NAME=VALUE or NAME=@FILE"
        return None, None, [located(Argument(argument(arg)), (), HZ706, message)]
    origin: Origin = Argument(argument(arg))
    if raw.startswith("@") and not raw.startswith("@@"):
        file = Path(raw[1:])
        data, problem = allowance.read(file, raw[1:])
        if data is None:
            return name, None, [problem] if problem else []
        origin = _Unlocated(raw[1:])
    else:
        data, problem = allowance.take(raw.encode("utf-8"), origin)
        if data is None:
            return name, None, [problem] if problem else []
        raw = raw[1:] if raw.startswith("@@") else raw
        data = raw.encode("utf-8")
    if not _wants_json(specs.get(name)):
        try:
            return name, Supplied(data.decode("utf-8"), origin), []
        except UnicodeDecodeError:
            message = f"--input {shown_name(name)}: the file is not UTF-8 text"
            return name, None, [Diagnostic(HZ706, message, origin.path)]
    doc, diagnostics = load_json(data, origin.path, code=HZ706)
    if doc is None:
        hint = f"input {name!r} has a schema type other than string, so its value is JSON"
        if isinstance(origin, Argument):
            message = diagnostics[0].message
            return name, None, [located(origin, (), HZ706, message, hint=hint)]
        prefix = f"--input {shown_name(name)}: "
        return name, None, [_with_prefix(d, prefix, hint) for d in diagnostics]
    located_in: Origin = origin if isinstance(origin, Argument) else doc
    return name, Supplied(doc.data, located_in), []


def _with_prefix(d: Diagnostic, prefix: str, hint: str) -> Diagnostic:
    return Diagnostic(d.code, prefix + d.message, d.file, d.line, d.column, hint=hint)
