"""Diagnostics are data: every problem hz finds in a user's files is one of these.

A diagnostic is the runtime's located ``Problem`` (the project-file checks report the same
value), so the compiler and the runtime share one type without the runtime importing the
compiler.
"""

from __future__ import annotations

from hz.runtime.artifacts.problem import Problem, Severity

Diagnostic = Problem

__all__ = ["Diagnostic", "Severity", "sort_diagnostics"]


def sort_diagnostics(diagnostics: list[Diagnostic]) -> tuple[Diagnostic, ...]:
    """Order by file and position, dropping exact repeats."""
    return tuple(sorted(set(diagnostics), key=Diagnostic.sort_key))
