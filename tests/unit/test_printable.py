"""``printable`` and ``printable_json``: what a terminal or a CI log may not be handed."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import pytest

from hz.runtime.artifacts.printable import cut, guarded, pad, printable, printable_json, width


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("plain é 😀", "plain é 😀"),
        ("a\nb\r\t", "a\\nb\\r\\t"),
        ("\x1b[2J\x9b2J\x85\x7f", "\\x1b[2J\\x9b2J\\x85\\x7f"),
        ("\u202egnp.exe\u2066\u2069\u2028\u00a0", "\\u202egnp.exe\\u2066\\u2069\\u2028\\xa0"),
        # GitHub reads "::" after leading blanks, "##[" anywhere in a line.
        ("::warning::x", "\\x3a:warning::x"),
        ("   ::add-mask::x", "   \\x3a:add-mask::x"),
        ("\t::error::x", "\\t::error::x"),  # the tab is escaped: no blank is left before it
        ("a::b", "a::b"),
        ("see ##[set-output name=a;]b", "see ##\\x5bset-output name=a;]b"),
        ("###[[", "###\\x5b["),
    ],
)
def test_printable(text: str, shown: str) -> None:
    assert printable(text) == shown
    assert printable(shown) == shown  # escaping twice changes nothing more


def test_printable_json_escapes_what_printable_does_and_stays_equal_json() -> None:
    value = {"k\x85": ["\u202e", "\U000e0001", "\udcff", "##[add-mask]x", "é\n", 1]}
    text = printable_json(value, indent=2)
    assert text.isascii() or all(c.isprintable() or c == "\n" for c in text)
    assert "\\u0085" in text
    assert "\\u202e" in text
    assert "\\udb40\\udc01" in text
    assert "\\udcff" in text
    assert "##\\u005badd-mask]x" in text
    assert '"é\\n"' in text
    assert json.loads(text) == value


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_guarded_text_is_escaped_on_a_terminal_framed_in_a_github_log_else_as_it_is(
    tmp_path: Path,
) -> None:
    text = "\x1b]52;c;aGk=\x07\tok\n::warning::x"
    assert guarded(text, _Terminal(), {}) == "\\x1b]52;c;aGk=\\x07\tok\n\\x3a:warning::x"
    assert guarded(text, io.StringIO(), {}) == text
    framed = guarded(text, io.StringIO(), {"GITHUB_ACTIONS": "true"})
    match = re.fullmatch(r"::stop-commands::([0-9a-f]{32})\n(.*)\n::\1::\n", framed, re.S)
    assert match is not None
    assert match[2] == text
    with open(tmp_path / "out", "w") as f:  # hz run ... > draft.md: the bytes, even in Actions
        assert guarded(text, f, {"GITHUB_ACTIONS": "true"}) == text


def test_width_counts_a_terminals_columns() -> None:
    assert [width(t) for t in ("abc", "週報", "e\u0301", "")] == [3, 4, 1, 0]
    assert cut("週報週報", 5) == "週報…"
    assert cut("週報", 4) == "週報"
    assert pad("週", 4) + "|" == "週  |"
    assert pad("x", 3, right=True) == "  x"
