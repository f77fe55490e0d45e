"""Request keys: the name a client gives one request when it wants it run once.

Keys are opt-in, as idempotency keys are (an HTTP API's ``Idempotency-Key``, a workflow
engine's workflow id): without one, every ``hz run``, ``hz submit`` and ``hz run -j`` target is
a new run, and the ledger gives it a key of its own (``new_key``) that its automatic retries
share. With one, the key has one run (live or ended): the same key again is refused and names
the run that holds it (``--force-new`` runs the request again under it), and the same key with
another request is refused, naming what differs (``hz.runtime.ledger.store.Ledger.create``).

A key is text a person can read and type: 1 to ``MAX_KEY`` characters that are letters,
digits, punctuation marks, symbols or spaces between them. Control and invisible characters
(bidirectional marks, zero-width joiners), surrogates (bytes that were not UTF-8 on the command
line) and spaces at either end are refused: two keys that print alike must be one key. So a key
is taken in Unicode's composed form (NFC, ``normal_key``) before it is checked or used: ``café``
typed with one character or with ``e`` and a combining accent (macOS names files so), ``Å``
as U+00C5 or U+212B ANGSTROM SIGN, are one key. (Letters of other scripts that look alike —
a Cyrillic ``і`` in ``nіghtly`` — are other keys: no normal form joins them.) The check is
the caller's, before any database is touched (a PostgreSQL index cannot hold an unbounded key).

This module needs nothing but the standard library: the CLI checks a key as it parses it.
"""

from __future__ import annotations

import secrets
import unicodedata

#: The longest key, in characters (at most 4 bytes each in UTF-8: far below what an index row
#: of either backend holds).
MAX_KEY = 256
#: What a key may be, for messages and docs.
KEY_RULE = (
    f"1 to {MAX_KEY} letters, digits, punctuation marks, symbols and spaces (not at either "
    "end); no control or invisible characters"
)
#: Characters Unicode says to show as nothing (Default_Ignorable_Code_Point) that are letters
#: or marks, so not refused by their category: a Hangul filler, a variation selector, the
#: combining grapheme joiner. "k" and "k" followed by one of them print alike.
_INVISIBLE = (
    (0x034F, 0x034F),
    (0x115F, 0x1160),
    (0x17B4, 0x17B5),
    (0x180B, 0x180F),
    (0x3164, 0x3164),
    (0xFE00, 0xFE0F),
    (0xFFA0, 0xFFA0),
    (0xE0100, 0xE01EF),
)
#: The prefix of the keys the ledger gives runs that were not given one.
NEW_KEY_PREFIX = "auto:"
#: The prefixes of the keys a worker gives the runs it fires (``schedule:JOB:SLOT``,
#: ``after:RUN:JOB``): a client's key under one would mark a slot as fired, or silence a
#: schedule until the date it names (docs/schedules.md).
RESERVED_PREFIXES = ("schedule:", "after:")


def new_key() -> str:
    """A key no other request has: a run asked for without one (its retries share it)."""
    return NEW_KEY_PREFIX + secrets.token_hex(16)


def normal_key(key: str) -> str:
    """``key`` as hz takes it: in Unicode's composed normal form (NFC), so that two spellings
    that print alike name one request. Checked (``key_problem``) in this form."""
    return unicodedata.normalize("NFC", key)


def key_problem(key: str) -> str | None:
    """Why ``key`` cannot name a request, or None when it can. The reason never quotes the
    key (it may be long, or made to look like something else); it names the first character
    that is refused and where it is."""
    if not key.strip(" "):
        return "an empty key names no request"
    if len(key) > MAX_KEY:
        return f"a key of {len(key)} characters is too long"
    for position, char in enumerate(key, 1):
        if not _allowed(char):
            return f"the key holds {_describe(char)} at character {position}"
    if key[0] == " " or key[-1] == " ":
        return "the key starts or ends with a space"
    if all(unicodedata.category(c)[0] == "M" or c == " " for c in key):
        return "the key holds only combining marks"
    return None


def reserved_problem(key: str) -> str | None:
    """Why a client may not give ``key`` (it starts as the keys a worker fires under), or
    None. Case-blind: SQLite's LIKE, which finds a job's fired slots, is."""
    if key.casefold().startswith(RESERVED_PREFIXES):
        return (
            "a key starting schedule: or after: is the worker's (a schedule's slot, a chain's "
            "follower): choose another key"
        )
    return None


def _allowed(char: str) -> bool:
    if char == " ":
        return True
    code = ord(char)
    if any(low <= code <= high for low, high in _INVISIBLE):
        return False
    return unicodedata.category(char)[0] in "LMNPS"


def _describe(char: str) -> str:
    code = ord(char)
    if 0xDC80 <= code <= 0xDCFF:  # os.fsdecode's escape of a byte that is not UTF-8
        return f"the byte \\x{code - 0xDC00:02x}, which is not UTF-8,"
    name = unicodedata.name(char, "")
    shown = f"U+{code:04X}" + (f" {name}" if name else "")
    if unicodedata.category(char) == "Zs":
        return f"{shown} (a space other than U+0020)"
    if any(low <= code <= high for low, high in _INVISIBLE):
        return f"{shown} (shown as nothing)"
    return shown
