"""Checking a receipt chain: every link, every digest, no gaps, no forks."""

from __future__ import annotations

import errno
from collections import defaultdict
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from hz.runtime.artifacts import strict_json
from hz.runtime.artifacts.canonical import digest_of, sha256_hex
from hz.runtime.artifacts.errors import HzError
from hz.runtime.artifacts.receipt import Receipt
from hz.runtime.receipts.files import read_receipt_file
from hz.runtime.receipts.write import receipt_files


def _require_directory(directory: Path) -> None:
    if not directory.exists():
        raise HzError(f"{directory}: no such receipt directory")
    if not directory.is_dir():
        raise HzError(f"{directory}: not a directory")


def verify_chain(directory: Path) -> tuple[int, list[str]]:
    """The number of receipts and one message per problem (empty when the chain is intact)."""
    _require_directory(directory)
    files = receipt_files(directory)
    by_sequence: dict[int, list[Path]] = defaultdict(list)
    for sequence, path in files:
        by_sequence[sequence].append(path)
    problems: list[str] = []
    previous: Path | None = None
    expected = 1
    for sequence in sorted(by_sequence):
        paths = by_sequence[sequence]
        if len(paths) > 1:
            names = " and ".join(p.name for p in paths)
            problems.append(f"{names}: two receipts with sequence {sequence} (the chain forked)")
        path = paths[0]
        if sequence != expected:
            missing = expected if sequence == expected + 1 else f"{expected} to {sequence - 1}"
            problems.append(
                f"{path.name}: missing predecessor (no receipt with sequence {missing})"
            )
            previous = None
        problems += _check_one(path, sequence, previous)
        previous, expected = path, sequence + 1
    return len(files), problems


def _load(path: Path) -> tuple[Any, str | None]:
    """A receipt file's JSON, or why it cannot be one (never an exception for bad content)."""
    try:
        document = strict_json.loads(read_receipt_file(path))
    except strict_json.JsonError as e:
        return None, f"not valid JSON ({e})"
    except OSError as e:
        if e.errno == errno.EFBIG:
            return None, str(e.strerror)
        return None, f"cannot be read ({e.strerror or e})"
    return document, None


def _check_one(path: Path, sequence: int, previous: Path | None) -> list[str]:
    document, error = _load(path)
    if error is not None:
        return [f"{path.name}: {error}"]
    if not isinstance(document, dict) or document.get("kind") != "receipt":
        return [f"{path.name}: not an hz receipt"]
    problems = []
    content = {k: v for k, v in document.items() if k != "digest"}
    if document.get("digest") != digest_of(content):
        problems.append(f"{path.name}: edited after it was written (its digest does not match)")
    else:  # sealed by a writer, so it must be a receipt of the format hz writes
        problems += _format_problems(path, document) or _transcript_problems(path, document)
    if document.get("sequence") != sequence:
        problems.append(f"{path.name}: its sequence field is {document.get('sequence')!r}")
    recorded = document.get("previous_sha256")
    if previous is not None and recorded != _sha256_of(previous):
        problems.append(
            f"{path.name}: previous_sha256 does not match {previous.name} "
            "(that receipt was changed or replaced after this one was written)"
        )
    if sequence == 1 and recorded is not None:
        problems.append(f"{path.name}: the first receipt names a predecessor that is missing")
    return problems


def _sha256_of(path: Path) -> str | None:
    try:
        return sha256_hex(read_receipt_file(path))
    except OSError:
        return None  # reported as that receipt's own problem


def _format_problems(path: Path, document: dict[str, Any]) -> list[str]:
    try:
        Receipt.model_validate(document)
    except ValidationError as e:
        first = e.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "the receipt"
        return [f"{path.name}: not in the receipt format ({where}: {first['msg']})"]
    return []


def _transcript_problems(path: Path, document: dict[str, Any]) -> list[str]:
    name, recorded = document.get("transcript_file"), document.get("transcript_sha256")
    if name is None and recorded is None:
        return []
    if name is None or recorded is None:
        return [f"{path.name}: names half a transcript (its file or its sha256 is missing)"]
    transcript = path.parent / name
    if transcript.is_symlink() or not transcript.is_file():
        return [f"{path.name}: its transcript {name} is missing"]
    try:
        data = read_receipt_file(transcript)
    except OSError as e:
        return [f"{path.name}: its transcript {name} cannot be read ({e.strerror or e})"]
    if sha256_hex(data) != recorded:
        return [
            f"{path.name}: its transcript {name} was changed after it was written "
            "(its sha256 does not match)"
        ]
    return []


def receipt_rows(directory: Path) -> list[dict[str, Any]]:
    """One summary per receipt file, in chain order (unreadable files say so)."""
    _require_directory(directory)
    rows = []
    for _, path in receipt_files(directory):
        document = _load(path)[0] or {}
        rows.append({"file": path.name, **(document if isinstance(document, dict) else {})})
    return rows
