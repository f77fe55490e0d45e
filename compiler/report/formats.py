"""Print diagnostics for people (text) and machines (json, GitHub annotations, SARIF).

The report goes to ``out``; a one-line summary, mypy style, to ``err``. Output is
deterministic: diagnostics are sorted by file and position, JSON keys in a fixed order.
Line and column 0 mean "the whole file": text and JSON print them as they are, GitHub and
SARIF (which have no such position) leave the position out.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TextIO

from hz.compiler.diagnostics import Diagnostic, sort_diagnostics
from hz.runtime.artifacts.printable import printable, printable_json

FORMATS = ("text", "json", "github", "sarif")


def write_report(
    diagnostics: Sequence[Diagnostic],
    *,
    fmt: str,
    files_checked: int,
    out: TextIO,
    err: TextIO,
    tool_version: str,
    checked: str | None = None,
) -> None:
    """Write ``diagnostics`` to ``out`` in ``fmt`` and the summary line to ``err``. ``checked``
    says what the ``files_checked`` were when "N files" would not (``2 contracts and 2 job
    files``)."""
    ordered = sort_diagnostics(list(diagnostics))
    writer = _WRITERS.get(fmt)
    if writer is None:
        raise ValueError(f"unknown report format {fmt!r}; expected one of {', '.join(FORMATS)}")
    writer(ordered, files_checked, tool_version, out)
    err.write(summary(ordered, files_checked, checked) + "\n")


def summary(
    diagnostics: Sequence[Diagnostic], files_checked: int, checked: str | None = None
) -> str:
    errors = sum(1 for d in diagnostics if d.severity == "error")
    warnings = len(diagnostics) - errors
    checked = checked or _plural(files_checked, "file")
    if errors:
        found = _plural(errors, "error")
        if warnings:
            found += " and " + _plural(warnings, "warning")
        return f"Found {found} {_where(diagnostics)} (checked {checked})"
    if warnings:
        return f"Success: no errors found in {checked} ({_plural(warnings, 'warning')})"
    return f"Success: no issues found in {checked}"


def _where(diagnostics: Sequence[Diagnostic]) -> str:
    """Where the problems are: the files of every problem ("1 error and 1 warning" in two files
    is two), and the command line, which is no file."""
    files = len({d.file for d in diagnostics if not d.argument})
    in_files = f"in {_plural(files, 'file')}"
    if not any(d.argument for d in diagnostics):
        return in_files
    return f"{in_files} and on the command line" if files else "on the command line"


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def _text(diagnostics: Sequence[Diagnostic], _files: int, _version: str, out: TextIO) -> None:
    for d in diagnostics:
        out.write(f"{printable(d.where)}: {d.severity}: {printable(d.message)} [{d.code}]\n")
        if d.hint:
            out.write(f"  hint: {printable(d.hint)}\n")


def _as_dict(d: Diagnostic) -> dict[str, Any]:
    found = {
        "file": d.file,
        "line": d.line,
        "column": d.column,
        "severity": d.severity,
        "code": d.code,
        "message": d.message,
        "hint": d.hint,
    }
    # Only then: "file" holds a command-line argument (--input week=x), not a path.
    return {**found, "argument": True} if d.argument else found


def _json(diagnostics: Sequence[Diagnostic], files: int, _version: str, out: TextIO) -> None:
    errors = sum(1 for d in diagnostics if d.severity == "error")
    report = {
        "version": 1,
        "files_checked": files,
        "errors": errors,
        "warnings": len(diagnostics) - errors,
        "diagnostics": [_as_dict(d) for d in diagnostics],
    }
    out.write(printable_json(report, indent=2) + "\n")


def _escape_data(text: str) -> str:
    # GitHub's workflow-command escaping (actions/toolkit, command.ts escapeData).
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def _github(diagnostics: Sequence[Diagnostic], _files: int, _version: str, out: TextIO) -> None:
    for d in diagnostics:
        # An argument is no file to annotate: the message names it.
        props = [] if d.argument else [f"file={_escape_property(printable(d.file))}"]
        if d.line:
            props.append(f"line={d.line}")
            if d.column:
                props.append(f"col={d.column}")
        props.append(f"title={_escape_property(d.code)}")
        out.write(f"::{d.severity} {','.join(props)}::{_escape_data(_full_message(d))}\n")


def _full_message(d: Diagnostic) -> str:
    message = printable(f"{d.file}: {d.message}" if d.argument else d.message)
    return f"{message}\nhint: {printable(d.hint)}" if d.hint else message


def _sarif(diagnostics: Sequence[Diagnostic], _files: int, version: str, out: TextIO) -> None:
    from hz.compiler.report.sarif import sarif_log

    out.write(printable_json(sarif_log(diagnostics, version), indent=2) + "\n")


_WRITERS: dict[str, Callable[[Sequence[Diagnostic], int, str, TextIO], None]] = {
    "text": _text,
    "json": _json,
    "github": _github,
    "sarif": _sarif,
}
