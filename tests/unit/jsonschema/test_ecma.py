"""ECMA-262 patterns on the bounded engine: what differs from Python's re, and the bounds."""

from __future__ import annotations

import time

import pytest

from hz.runtime.jsonschema.ecma import (
    MAX_GROUP_DEPTH,
    RegexError,
    RegexTimeout,
    compile_ecma,
    deadline,
    search,
    translate,
)


@pytest.mark.parametrize(
    ("pattern", "text", "matches"),
    [
        ("^\\d$", "\u0660", False),  # Arabic-Indic zero: a digit to re, not to ECMA-262
        ("^\\d$", "7", True),
        ("^\\w$", "é", False),
        ("^\\W$", "é", True),
        ("^[\\D]$", "é", True),
        ("^[\\D]$", "5", False),
        ("^\\s$", "\u00a0", True),
        ("^\\s$", "\ufeff", True),
        ("^\\S$", "\u00a0", False),
        ("^[\\S]$", "\u2028", False),
        ("^abc$", "abc\n", False),  # $ is the end, not "before a final newline"
        ("^.$", "\r", False),
        ("^.$", "\u2028", False),
        ("^.$", "😀", True),
        ("^\\p{Letter}+$", "héllo", True),
        ("^\\p{L}+$", "a1", False),
        ("^\\P{L}$", "1", True),
        ("^\\p{Script=Greek}$", "α", True),
        ("^\\p{General_Category=Lu}$", "A", True),
        ("^\\cJ$", "\n", True),
        ("^\\u{1F600}$", "😀", True),
        ("^\\uD83D\\uDE00$", "😀", True),
        ("^[^]$", "\n", True),
        ("[]", "anything", False),
        ("^(?<x>a)\\k<x>$", "aa", True),
        ("\\bfoo\\b", "é foo", True),
        ("\\Bfoo", "éfoo", False),
        ("^a{2}$", "aa", True),
        ("^a{$", "a{", True),
        ("^[a|b&]$", "&", True),
        ("^(a)\\1$", "aa", True),
        ("^[\\d]$", "٣", False),
        ("^[\\w-]$", "-", True),
        ("^[\\b]$", "\b", True),
        ("^\\0$", "\x00", True),
        ("^\\x41\\t\\/$", "A\t/", True),
        ("^a*?b+?c??$", "bc", True),
        ("^(?:a|b)(?=c)(?!d)(?<=b)c$", "bc", True),
        ("^\\p{sc=Greek}$", "α", True),
    ],
)
def test_ecma_semantics(pattern: str, text: str, matches: bool) -> None:
    assert search(pattern, text) is matches


@pytest.mark.parametrize(
    ("pattern", "message"),
    [
        ("(?P<x>a)", "invalid group at position 0"),
        ("(?i)a", "invalid group at position 0"),
        ("\\a", "invalid escape \\a at position 0"),
        ("\\Z", "invalid escape \\Z at position 0"),
        ("a++", "nothing to repeat at position 2"),
        ("a{2}*", "nothing to repeat at position 4"),
        ("[a-", "unterminated character class at position 3"),
        ("\\", "\\ at end of pattern at position 0"),
        ("\\p{Foo=Bar}", "unknown Unicode property name 'Foo'"),
        ("\\c1", "invalid escape \\c at position 0"),
        ("\\x4", "invalid escape \\x at position 0"),
        ("\\u12", "invalid escape \\u at position 2"),
        ("\\u{110000}", "invalid escape \\u{…} at position 2"),
        ("\\p", "invalid escape \\p at position 0"),
        ("\\p{L", "unterminated \\p{ at position 0"),
        ("\\k<1>", "invalid escape \\k at position 0"),
        ("\\01", "invalid escape \\0 followed by a digit at position 0"),
        ("(a)[\\1]", "invalid back reference in a class at position 4"),
        ("[\\B]", "invalid escape \\B in a class at position 1"),
        ("\\-", "invalid escape \\- at position 0"),
        ("\\é", "invalid escape \\é at position 0"),
        ("a)", "unbalanced parenthesis at position 1"),
        ("(?<1a>x)", "invalid group name at position 0"),
        ("(" * (MAX_GROUP_DEPTH + 1), f"groups nested more than {MAX_GROUP_DEPTH} deep"),
        ("(" * 3000 + ")" * 3000, f"groups nested more than {MAX_GROUP_DEPTH} deep"),
    ],
)
def test_not_ecma_is_refused(pattern: str, message: str) -> None:
    with pytest.raises(RegexError) as caught:
        translate(pattern)
    assert str(caught.value) == message


def test_what_the_engine_refuses_is_a_regex_error_without_positions() -> None:
    with pytest.raises(RegexError) as caught:
        compile_ecma("(unclosed")
    assert str(caught.value) == "missing )"


def test_deep_nesting_within_the_limit_compiles() -> None:
    depth = MAX_GROUP_DEPTH
    assert search("^" + "(" * depth + "a" + ")" * depth + "$", "a")


def test_a_backtracking_pattern_ends_in_a_timeout_within_the_deadline() -> None:
    started = time.monotonic()
    with pytest.raises(RegexTimeout) as caught, deadline(0.2):
        search("^(a|a)*$", "a" * 40 + "b")
    assert caught.value.pattern == "^(a|a)*$"
    assert time.monotonic() - started < 5


def test_nested_repetition_the_engine_handles_is_no_timeout() -> None:
    with deadline(0.2):
        assert search("^(a+)+$", "a" * 40 + "b") is False


def test_every_match_in_a_check_shares_one_deadline() -> None:
    with deadline(0.0), pytest.raises(RegexTimeout):
        search("a", "a")


@pytest.mark.parametrize(
    ("pattern", "message"),
    [
        ("((a{1000}){1000}){1000}", "repetitions expand to more than 100,000 items"),
        ("(ab){50001}", "repetitions expand to more than 100,000 items"),
        ("a{100001}", "repetition count too big at position 1"),
        ("a{" + "9" * 5000 + "}", "repetition count too big at position 1"),
    ],
)
def test_counted_repetition_is_bounded_before_compiling(pattern: str, message: str) -> None:
    # ((a{1000}){1000}){1000} would keep the regex compiler busy for hours.
    with pytest.raises(RegexError) as caught:
        compile_ecma(pattern)
    assert str(caught.value) == message


def test_counted_repetition_within_the_bound_compiles() -> None:
    assert search("^(ab){2,3}$", "ababab")
    assert search("^[a-z]{1,64}$", "x" * 64)


def test_compiling_takes_from_the_check_deadline() -> None:
    compile_ecma.cache_clear()
    with deadline(0.0), pytest.raises(RegexTimeout):
        search("^never compiled$", "x")
