"""Input values for rendering: from an inputs file and ``--input`` arguments, checked against
the job's declarations, defaults applied.

Precedence: a value given with ``--input`` replaces the inputs file's value of that name.
``--input NAME=VALUE`` takes VALUE as a string, unless the input's schema declares a ``type``
that excludes strings: then VALUE is parsed as JSON (``--input limit=5``). ``NAME=@FILE``
takes the file's text the same way (so ``issues=@issues.json`` gives an array), and ``@@``
escapes a literal leading ``@``. Every problem is a located diagnostic (HZ701–HZ706).
"""

from __future__ import annotations

import difflib
import math
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from compiler.diagnostics import Diagnostic, sort_diagnostics
from compiler.inputs_json import load_json
from compiler.source import JsonPath, Pos
from runtime.models import InputSpec

MAX_INPUT_BYTES = 8 * 1024 * 1024
MAX_YAML_BYTES = 256 * 1024
COMMAND_LINE = "<command line>"
#: Errors shown per input before the rest are summed up in one line.
MAX_ERRORS_PER_INPUT = 20


class Origin(Protocol):
    @property
    def path(self) -> str: ...

    def pos(self, path: JsonPath, *, key: bool = False) -> Pos: ...


@dataclass(frozen=True, slots=True)
class _Unlocated:
    path: str

    def pos(self, path: JsonPath, *, key: bool = False) -> Pos:
        return Pos(0, 0)


@dataclass(frozen=True, slots=True)
class Supplied:
    """One value and where it came from: ``at`` is its path inside ``origin``."""

    value: Any
    origin: Origin
    at: JsonPath = ()


class _Allowance:
    """What is left of the 8 MiB that all input sources may add up to."""

    def __init__(self) -> None:
        self.left = MAX_INPUT_BYTES

    def read(self, path: Path, display: str) -> tuple[bytes | None, Diagnostic | None]:
        try:
            with path.open("rb") as f:
                data = f.read(self.left + 1)
        except OSError as e:
            return None, Diagnostic("HZ701", f"cannot read file: {e.strerror or e}", display)
        return self.take(data, display)

    def take(self, data: bytes, display: str) -> tuple[bytes | None, Diagnostic | None]:
        if len(data) > self.left:
            message = f"inputs are larger than 8 MiB ({MAX_INPUT_BYTES:,} bytes) in total"
            hint = "pass a smaller extract of the data; the prompt is capped at 1 MiB anyway"
            return None, Diagnostic("HZ705", message, display, hint=hint)
        self.left -= len(data)
        return data, None


def _message(text: str) -> str:
    # jsonschema quotes the whole offending value; an 8 MiB array must not become the message.
    return text if len(text) <= 200 else f"{text[:110]} … {text[-80:]}"


def _dotted(name: str, path: Sequence[str | int]) -> str:
    return name + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path)


def read_inputs_file(
    path: Path, allowance: _Allowance | None = None
) -> tuple[dict[str, Supplied], list[Diagnostic]]:
    """Values from a JSON (``.json``) or YAML (anything else) file holding one mapping."""
    allowance = allowance or _Allowance()
    display = str(path)
    data, problem = allowance.read(path, display)
    if data is None:
        return {}, [problem] if problem else []
    doc: Origin
    if path.suffix.lower() == ".json":
        jdoc, diagnostics = load_json(data, display, code="HZ701")
        if jdoc is None:
            return {}, diagnostics
        if not isinstance(jdoc.data, dict):
            message = "an inputs file holds one JSON object: input names to values"
            return {}, [Diagnostic("HZ701", message, display, 1, 1)]
        doc, values = jdoc, jdoc.data
    else:
        if len(data) > MAX_YAML_BYTES:
            message = "a YAML inputs file is limited to 256 KiB; write larger inputs as JSON"
            return {}, [Diagnostic("HZ701", message, display, hint="JSON inputs may be 8 MiB")]
        from compiler.loader import load_bytes

        ydoc, diagnostics = load_bytes(data, display)
        if ydoc is None:
            return {}, [_as_inputs_problem(d) for d in diagnostics]
        doc, values = ydoc, ydoc.data
    return {name: Supplied(value, doc, (name,)) for name, value in values.items()}, []


#: Loader diagnostics whose wording is about contracts, reworded for an inputs file.
_INPUTS_WORDING = {
    "HZ009": ("an inputs file holds one mapping: input names to values", None),
    "HZ010": ("the inputs file is empty; it holds one mapping: input names to values", None),
    "HZ011": ("more than one YAML document in the inputs file", None),
    "HZ012": ("nesting is deeper than 32 levels", "write deeply nested inputs as JSON"),
    "HZ013": ("more than 10,000 YAML nodes in the file", "write large inputs as JSON"),
}


def _as_inputs_problem(d: Diagnostic) -> Diagnostic:
    if d.code not in _INPUTS_WORDING:
        return d
    message, hint = _INPUTS_WORDING[d.code]
    return Diagnostic("HZ701", message, d.file, d.line, d.column, hint=hint)


def _wants_json(spec: InputSpec | None) -> bool:
    declared = spec.schema_.get("type") if spec is not None else None
    if isinstance(declared, str):
        return declared != "string"
    if isinstance(declared, list):
        return "string" not in declared
    return False


def parse_input_arg(
    arg: str, specs: Mapping[str, InputSpec], allowance: _Allowance
) -> tuple[str | None, Supplied | None, list[Diagnostic]]:
    """One ``NAME=VALUE`` or ``NAME=@FILE`` argument."""
    name, eq, raw = arg.partition("=")
    if not eq or not name:
        message = f"--input {arg!r} is not NAME=VALUE or NAME=@FILE"
        return None, None, [Diagnostic("HZ706", message, COMMAND_LINE)]
    origin: Origin = _Unlocated(COMMAND_LINE)
    if raw.startswith("@") and not raw.startswith("@@"):
        file = Path(raw[1:])
        data, problem = allowance.read(file, raw[1:])
        if data is None:
            return name, None, [problem] if problem else []
        origin = _Unlocated(raw[1:])
    else:
        data, problem = allowance.take(raw.encode("utf-8"), COMMAND_LINE)
        if data is None:
            return name, None, [problem] if problem else []
        raw = raw[1:] if raw.startswith("@@") else raw
        data = raw.encode("utf-8")
    if not _wants_json(specs.get(name)):
        try:
            return name, Supplied(data.decode("utf-8"), origin), []
        except UnicodeDecodeError:
            message = f"--input {name}: the file is not UTF-8 text"
            return name, None, [Diagnostic("HZ706", message, origin.path)]
    doc, diagnostics = load_json(data, origin.path, code="HZ706")
    if doc is None:
        hint = f"input {name!r} has a schema type other than string, so its value is JSON"
        if origin.path == COMMAND_LINE:
            message = f"--input {name}={_message(raw)}: {diagnostics[0].message}"
            return name, None, [Diagnostic("HZ706", message, COMMAND_LINE, hint=hint)]
        return name, None, [_with_prefix(d, f"--input {name}: ", hint) for d in diagnostics]
    located: Origin = doc if origin.path != COMMAND_LINE else origin
    return name, Supplied(doc.data, located), []


def _with_prefix(d: Diagnostic, prefix: str, hint: str) -> Diagnostic:
    return Diagnostic(d.code, prefix + d.message, d.file, d.line, d.column, hint=hint)


def _non_finite(value: Any) -> JsonPath | None:
    """The path of a NaN or infinity in ``value`` (YAML has them; JSON does not)."""
    stack: list[tuple[JsonPath, Any]] = [((), value)]
    while stack:
        path, item = stack.pop()
        if isinstance(item, float) and not math.isfinite(item):
            return path
        if isinstance(item, dict):
            stack.extend(((*path, k), v) for k, v in item.items())
        elif isinstance(item, list):
            stack.extend(((*path, i), v) for i, v in enumerate(item))
    return None


def _schema_errors(name: str, spec: InputSpec, supplied: Supplied) -> list[Diagnostic]:
    bad = _non_finite(supplied.value)
    if bad is not None:
        pos = supplied.origin.pos((*supplied.at, *bad))
        message = f"input '{_dotted(name, bad)}': NaN and infinity are not JSON values"
        return [Diagnostic("HZ702", message, supplied.origin.path, pos.line, pos.column)]
    from jsonschema import Draft202012Validator

    validator = Draft202012Validator(
        spec.schema_, format_checker=Draft202012Validator.FORMAT_CHECKER
    )
    errors = sorted(
        validator.iter_errors(supplied.value),
        key=lambda e: (
            tuple((str(p), 0) if isinstance(p, str) else ("", p) for p in e.absolute_path),
            e.message,
        ),
    )
    found = []
    for error in errors[:MAX_ERRORS_PER_INPUT]:
        pos = supplied.origin.pos((*supplied.at, *error.absolute_path))
        message = f"input '{_dotted(name, error.absolute_path)}': {_message(error.message)}"
        found.append(Diagnostic("HZ702", message, supplied.origin.path, pos.line, pos.column))
    if len(errors) > MAX_ERRORS_PER_INPUT:
        pos = supplied.origin.pos(supplied.at)
        more = f"input '{name}': {len(errors) - MAX_ERRORS_PER_INPUT} more errors not shown"
        found.append(Diagnostic("HZ702", more, supplied.origin.path, pos.line, pos.column))
    return found


def apply_inputs(
    specs: Mapping[str, InputSpec],
    supplied: Mapping[str, Supplied],
    *,
    missing_at: str,
    unknown: Collection[str] | None = (),
) -> tuple[dict[str, Any] | None, list[Diagnostic]]:
    """Check supplied values against the declarations; fill defaults. ``missing_at`` names
    the file a missing required input is reported at; ``unknown`` names inputs whose value
    could not be read (``None``: possibly any of them), which are not reported missing."""
    applied: dict[str, Any] = {}
    diagnostics: list[Diagnostic] = []
    for name, spec in sorted(specs.items()):
        if name in supplied:
            diagnostics.extend(_schema_errors(name, spec, supplied[name]))
            applied[name] = supplied[name].value
        elif not spec.required:
            applied[name] = spec.default
        elif unknown is not None and name not in unknown:
            diagnostics.append(
                Diagnostic(
                    "HZ703",
                    f"required input {name!r} has no value",
                    missing_at,
                    hint=f"set it in the inputs file or pass --input {name}=…",
                )
            )
    for name in sorted(supplied.keys() - specs.keys()):
        item = supplied[name]
        pos = item.origin.pos(item.at, key=True)
        close = difflib.get_close_matches(name, list(specs), n=1)
        declared = ", ".join(sorted(specs)) or "none"
        hint = f"did you mean {close[0]!r}?" if close else f"declared inputs: {declared}"
        message = f"input {name!r} is not declared by the job"
        diagnostics.append(
            Diagnostic("HZ704", message, item.origin.path, pos.line, pos.column, hint=hint)
        )
    return (None if diagnostics else applied), diagnostics


def collect_inputs(
    specs: Mapping[str, InputSpec],
    *,
    inputs_file: Path | None,
    input_args: Sequence[str],
    target: str,
) -> tuple[dict[str, Any] | None, tuple[Diagnostic, ...]]:
    """All input values for one render, or the diagnostics that prevent it. ``target`` is the
    job or contract being rendered (where a missing input is reported without inputs file)."""
    allowance = _Allowance()
    supplied: dict[str, Supplied] = {}
    diagnostics: list[Diagnostic] = []
    unknown: set[str] | None = set()
    if inputs_file is not None:
        from_file, problems = read_inputs_file(inputs_file, allowance)
        supplied.update(from_file)
        diagnostics.extend(problems)
        if problems:
            unknown = None  # the file did not load: any input may have been in it
    for arg in input_args:
        name, item, problems = parse_input_arg(arg, specs, allowance)
        diagnostics.extend(problems)
        if name is not None and item is not None:
            supplied[name] = item
        elif name is not None and unknown is not None:
            unknown.add(name)
            supplied.pop(name, None)
    missing_at = str(inputs_file) if inputs_file is not None else target
    values, problems = apply_inputs(specs, supplied, missing_at=missing_at, unknown=unknown)
    diagnostics.extend(problems)
    return (None if diagnostics else values), sort_diagnostics(diagnostics)
