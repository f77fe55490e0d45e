"""What every command's ``--help`` ends with: one or two examples of it."""

from __future__ import annotations


def examples(*lines: str) -> str:
    """A click epilog: ``Examples:`` and each command line, as written (``\\b``: not rewrapped)."""
    return "\b\nExamples:\n" + "\n".join(f"  {line}" for line in lines)
