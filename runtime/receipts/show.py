"""Receipts and transcripts as text for a terminal or a CI log (``hz receipts show``).

Every value from a run — the agent's text, tool inputs and outputs, names — goes through
``printable``: a control character or an escape sequence is shown escaped, never sent.
Multi-line text is kept as lines, each indented under its event.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hz.runtime.artifacts import strict_json
from hz.runtime.artifacts.canonical import sha256_hex
from hz.runtime.artifacts.errors import HzError
from hz.runtime.artifacts.printable import printable
from hz.runtime.artifacts.receipt import Receipt
from hz.runtime.receipts.files import read_receipt_file
from hz.runtime.receipts.write import receipt_files
from hz.runtime.transcript.build import read_transcript

_INDENT = "    "


def find_receipt(target: Path, number: int | None = None) -> Path:
    """``target`` itself (a receipt file), or receipt ``number`` of the directory ``target``
    (the newest without a number)."""
    if target.is_file():
        if number is not None:
            raise HzError(f"{target}: a receipt file takes no receipt number")
        return target
    if not target.is_dir():
        raise HzError(f"{target}: no such receipt or receipt directory")
    files = receipt_files(target)
    if not files:
        raise HzError(f"{target}: no receipts in this directory")
    if number is None:
        return files[-1][1]
    for sequence, path in files:
        if sequence == number:
            return path
    raise HzError(f"{target}: no receipt with sequence {number} (there are 1 to {files[-1][0]})")


def load_json(path: Path) -> dict[str, Any]:
    try:
        # A receipt file given by name may be the operator's own link; one found in a
        # directory is none (receipt_files).
        document = strict_json.loads(read_receipt_file(path, follow_link=True))
    except OSError as e:
        raise HzError(f"{path}: cannot be read ({e.strerror or e})") from e
    except strict_json.JsonError as e:
        raise HzError(f"{path}: cannot be read as JSON ({e})") from e
    if not isinstance(document, dict):
        raise HzError(f"{path}: not a JSON object")
    return document


def load_transcript(receipt_path: Path, receipt: dict[str, Any]) -> tuple[dict[str, Any], str]:
    """The transcript a receipt names, and a warning ("" when its sha256 matches)."""
    name = receipt.get("transcript_file")
    if not isinstance(name, str) or "/" in name or name in ("", ".", ".."):
        raise HzError(f"{receipt_path}: names no transcript")
    path = receipt_path.parent / name
    if path.is_symlink() or not path.is_file():
        raise HzError(f"{receipt_path}: its transcript {name} is missing")
    try:
        data = read_receipt_file(path)
    except OSError as e:
        raise HzError(f"{path}: cannot be read ({e.strerror or e})") from e
    warning = ""
    if sha256_hex(data) != receipt.get("transcript_sha256"):
        warning = f"{name} does not match the receipt's transcript_sha256 (changed after the run)"
    try:
        transcript = read_transcript(data)
    except ValueError as e:
        raise HzError(f"{path}: {e}") from e
    document = transcript.model_dump(mode="json", exclude={"events"})
    document["events"] = [e.model_dump(mode="json", exclude_none=True) for e in transcript.events]
    return document, warning


def _value(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def format_receipt(name: str, receipt: dict[str, Any]) -> str:
    """One ``key: value`` line per field of the receipt, in the order of the format."""
    order = {key: n for n, key in enumerate(Receipt.model_fields)}
    keys = sorted(receipt, key=lambda key: (order.get(key, len(order)), key))
    lines = [f"receipt {printable(name)}"]
    lines += [f"  {printable(str(k))}: {printable(_value(receipt[k]))}" for k in keys]
    return "\n".join(lines) + "\n"


def _block(text: str) -> list[str]:
    lines = text[:-1] if text.endswith("\n") else text
    return [_INDENT + printable(line) for line in lines.split("\n")]


def _usage(usage: Any) -> str:
    if not isinstance(usage, dict):
        return "?"
    names = {
        "input_tokens": "in",
        "output_tokens": "out",
        "cache_read_input_tokens": "cache read",
        "cache_creation_input_tokens": "cache write",
    }
    return ", ".join(f"{label} {usage.get(key, 0)}" for key, label in names.items())


def _event_lines(event: dict[str, Any]) -> list[str]:
    kind = str(event.get("type", "?"))
    turn = event.get("turn")
    head = f"[turn {turn}] " if isinstance(turn, int) and kind != "end" else ""
    name = printable(str(event.get("name") or "?"))
    error = " (error)" if event.get("is_error") is True else ""
    text = event.get("text")
    body = _block(text) if isinstance(text, str) and text else []
    if kind == "message":
        return [f"{head}{name if event.get('name') else 'assistant'}:", *body]
    if kind == "tool_call":
        return [f"{head}tool call {name}{error}", *_block(_value(event.get("input")))]
    if kind == "tool_result":
        return [f"{head}tool result {name}{error}", *body]
    if kind == "usage":
        return [f"{head}usage: {_usage(event.get('usage'))}"]
    if kind == "end":
        status = printable(str(event.get("status", "?")))
        exit_code = event.get("exit_code")
        facts = [status, f"exit {exit_code}" if exit_code is not None else "no exit code"]
        if isinstance(turn, int):
            facts.append(f"{turn} turn" + ("" if turn == 1 else "s"))
        lines = [f"end: {', '.join(facts)}; usage: {_usage(event.get('usage'))}"]
        return lines + (["  draft:", *body] if body else [])
    if kind == "stderr":
        return ["stderr (tail):", *body]
    return [f"{head}{printable(kind)}", *body]


def format_transcript(name: str, transcript: dict[str, Any]) -> str:
    """The transcript's events, one block each, after a line saying what was left out."""
    events = [e for e in transcript.get("events", ()) if isinstance(e, dict)]
    facts = [f"{len(events)} event" + ("" if len(events) == 1 else "s")]
    for key, label in (
        ("events_dropped", "dropped"),
        ("fields_truncated", "fields truncated"),
        ("redacted", "secrets redacted"),
    ):
        if transcript.get(key):
            facts.append(f"{transcript[key]} {label}")
    runner = printable(str(transcript.get("runner", "?")))
    lines = [f"transcript {printable(name)} ({runner}: {', '.join(facts)})"]
    for event in events:
        lines += _event_lines(event)
    return "\n".join(lines) + "\n"
