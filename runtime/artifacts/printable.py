"""Showing text from outside hz on a terminal or in a CI log, safely.

Names, paths and values in messages come from contracts, inputs, file names and agents. A raw
newline in one starts a new line that GitHub Actions reads as a workflow command
(``::error::…``, ``::add-mask::…``); an ESC sequence reaches the terminal. ``printable`` writes
every character that is not printable — control characters (C0, DEL and C1: ``\\x9b`` is a
terminal's CSI), line and paragraph separators, bidirectional overrides — as its Python escape
(``\\n``, ``\\x1b``, ``\\u202e``); text that needs none comes back as it is. Every reporter and
every ``hz: error:`` line goes through it.

It also breaks a GitHub workflow command, which the runner reads after leading blanks
(``::warning::x``; an agent's stderr line is printed indented) and, in the older form, anywhere
in a line (``##[set-output name=x;]y``): a character of the marker is written escaped
(``\\x3a:warning::x``, ``##\\x5bset-output…``). The text may then start a line, after blanks
or not, or stand anywhere in one.

``guarded``: a whole text from outside (an agent's draft, a rendered prompt) for stdout, where
it is data: byte for byte into a file or a pipe. Two readers of stdout act on text, so for them
it is guarded: a terminal (control characters escaped, newlines and tabs kept) and the log of a
GitHub Actions step, which takes every line a step prints for a workflow command (the text is
framed by ``::stop-commands::TOKEN`` ... ``::TOKEN::``, a token the text cannot know, unless
stdout is a regular file: ``hz run ... > draft.md`` keeps the bytes).

``printable_json``: JSON for stdout or a report file. ``json.dumps`` escapes only C0 controls;
the same characters ``printable`` escapes, and the ``[`` of ``##[``, are written as ``\\uXXXX``
here (equal JSON, nothing a terminal or a log viewer acts on).
"""

from __future__ import annotations

import io
import json
import os
import re
import stat
import unicodedata
from collections.abc import Mapping
from typing import Any

__all__ = ["cut", "guarded", "pad", "printable", "printable_json", "width"]


def printable(text: str) -> str:
    if not text.isprintable():
        text = "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)
    if "##[" in text:  # the older command form counts anywhere in a line
        text = text.replace("##[", "##\\x5b")
    rest = text.lstrip(" ")  # the only blanks left: every other one is escaped
    if rest.startswith("::"):
        text = text[: len(text) - len(rest)] + "\\x3a" + rest[1:]
    return text


def width(text: str) -> int:
    """The columns ``text`` (printable: see ``printable``) takes on a terminal: two for a wide
    East Asian character, none for a combining mark, one for the rest."""
    if text.isascii():
        return len(text)
    return sum(_char_width(c) for c in text)


def _char_width(c: str) -> int:
    if unicodedata.combining(c) or unicodedata.category(c) in ("Mn", "Me"):
        return 0
    return 2 if unicodedata.east_asian_width(c) in ("W", "F") else 1


def cut(text: str, columns: int) -> str:
    """``text`` in at most ``columns`` columns: cut short, ending in "…", when it is wider."""
    if width(text) <= columns:
        return text
    kept, used = [], 0
    for c in text:
        used += _char_width(c)
        if used > columns - 1:
            break
        kept.append(c)
    return "".join(kept) + "…"


def pad(text: str, columns: int, *, right: bool = False) -> str:
    """``text`` padded with spaces to ``columns`` columns (aligned right with ``right``)."""
    fill = " " * max(0, columns - width(text))
    return fill + text if right else text + fill


_NOT_ASCII_PRINTABLE = re.compile(r"[^\n\x20-\x7e]")


def _json_escape(match: re.Match[str]) -> str:
    c = match[0]
    if c == "\n" or c.isprintable():
        return c  # a raw newline is the layout's (json.dumps escapes one in a string)
    code = ord(c)
    if code < 0x10000:
        return f"\\u{code:04x}"
    code -= 0x10000
    return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"


def printable_json(value: Any, *, indent: int | None = None, sort_keys: bool = False) -> str:
    """``json.dumps(value, ensure_ascii=False)`` with every unprintable character escaped."""
    text = json.dumps(value, ensure_ascii=False, indent=indent, sort_keys=sort_keys)
    text = _NOT_ASCII_PRINTABLE.sub(_json_escape, text)
    # Only a string can hold "#": the older workflow command form, anywhere in a line of a log.
    return text.replace("##[", "##\\u005b") if "##[" in text else text


def guarded(text: str, stream: Any, environ: Mapping[str, str]) -> str:
    """``text`` as it may be written to ``stream``: see the module docstring."""
    if _isatty(stream):
        lines = text.split("\n")
        return "\n".join("\t".join(map(printable, line.split("\t"))) for line in lines)
    if environ.get("GITHUB_ACTIONS") == "true" and not _regular_file(stream) and text:
        import secrets  # only here: it imports base64, hmac and hashlib

        token = secrets.token_hex(16)
        end = "" if text.endswith("\n") else "\n"
        return f"::stop-commands::{token}\n{text}{end}::{token}::\n"
    return text


def _isatty(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (OSError, ValueError):
        return False


def _regular_file(stream: Any) -> bool:
    try:
        return stat.S_ISREG(os.fstat(stream.fileno()).st_mode)
    except (OSError, ValueError, io.UnsupportedOperation):
        return False  # no file descriptor (a test's buffer): taken for a pipe
