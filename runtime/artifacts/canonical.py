"""Canonical JSON: the byte-stable form of every artifact hz writes."""

from __future__ import annotations

import hashlib
import json
from typing import Any


def canonical_json(value: Any) -> str:
    """Sorted keys, two-space indent, UTF-8 text, trailing newline."""
    return json.dumps(value, sort_keys=True, indent=2, ensure_ascii=False) + "\n"


def sha256_hex(data: str | bytes) -> str:
    raw = data.encode("utf-8") if isinstance(data, str) else data
    return hashlib.sha256(raw).hexdigest()


def digest_of(value: Any) -> str:
    """sha256 of the compact canonical form of a JSON value."""
    compact = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return sha256_hex(compact)
