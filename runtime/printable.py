"""Showing text from outside hz on a terminal or in a CI log, safely.

Names, paths and values in messages come from contracts, inputs, file names and agents. A raw
newline in one starts a new line that GitHub Actions reads as a workflow command
(``::error::…``, ``::add-mask::…``); an ESC sequence reaches the terminal. ``printable`` writes
every character that is not printable — control characters, line and paragraph separators,
bidirectional overrides — as its Python escape (``\\n``, ``\\x1b``, ``\\u202e``); text that
needs none comes back as it is. Every reporter and every ``hz: error:`` line goes through it.
"""

from __future__ import annotations

__all__ = ["printable"]


def printable(text: str) -> str:
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)
