"""A problem in a user's file, located: the one value the compiler's diagnostics and the
runtime's project-file checks (``hz.toml``) share. Errors as data, collected rather than raised;
``hz.compiler.diagnostics.Diagnostic`` is this type."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Severity = Literal["error", "warning"]


@dataclass(frozen=True, slots=True)
class Problem:
    """One located problem. ``line`` and ``column`` are 1-based; 0 means "the whole file".

    With ``argument``, ``file`` is a command-line argument (``--input week=x``), not a file: it
    is shown as it is, without a position, and not counted among the files."""

    code: str
    message: str
    file: str
    line: int = 0
    column: int = 0
    severity: Severity = "error"
    hint: str | None = None
    argument: bool = False

    def sort_key(self) -> tuple[str, int, int, str, str]:
        return (self.file, self.line, self.column, self.code, self.message)

    @property
    def where(self) -> str:
        """``FILE:LINE:COLUMN``, or the argument itself."""
        return self.file if self.argument else f"{self.file}:{self.line}:{self.column}"

    def __str__(self) -> str:
        where = self.file if not self.line else f"{self.file}:{self.line}:{self.column}"
        return f"{where}: {self.code} {self.message}"
