"""Diagnostics are data: every problem hz finds in a user's files is one of these."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Severity = Literal["error", "warning"]


@dataclass(frozen=True, slots=True)
class Diagnostic:
    """One located problem. ``line`` and ``column`` are 1-based; 0 means "the whole file"."""

    code: str
    message: str
    file: str
    line: int = 0
    column: int = 0
    severity: Severity = "error"
    hint: str | None = None

    def sort_key(self) -> tuple[str, int, int, str, str]:
        return (self.file, self.line, self.column, self.code, self.message)


def sort_diagnostics(diagnostics: list[Diagnostic]) -> tuple[Diagnostic, ...]:
    """Order by file and position, dropping exact repeats."""
    return tuple(sorted(set(diagnostics), key=Diagnostic.sort_key))
