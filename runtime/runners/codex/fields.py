"""Reading a field of what Codex printed, defensively: a missing or mistyped field reads as
absent (None, 0 or an empty table), never as an error. Shared by both Codex runners."""

from __future__ import annotations

from typing import Any


def as_str(value: object) -> str | None:
    return value if isinstance(value, str) else None


def as_int(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def as_dict(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}
