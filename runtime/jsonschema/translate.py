"""ECMA-262 pattern syntax (with the ``u`` flag) translated to the ``regex`` module's.

- ``\\d``, ``\\w``, ``\\b`` are ASCII (``[0-9]``, ``[A-Za-z0-9_]``); ``\\s`` is ECMA's list
  of white space and line terminators;
- ``.`` matches anything but a line terminator (``\\n``, ``\\r``, U+2028, U+2029);
- ``$`` is the end of the string only, ``^`` its start;
- ``\\p{…}``/``\\P{…}`` are Unicode properties (``\\p{Letter}``, ``\\p{Script=Greek}``);
- ``\\cX``, ``\\u{…}``, surrogate pairs ``\\uD83D\\uDE00``, ``\\k<name>``, ``[^]``, ``[]``;
- Python-only syntax (``(?P<…>``, inline flags, ``\\A``, ``\\Z``, ``\\a``, possessive ``a++``)
  is refused as ECMA-262 refuses it, and so is nesting deeper than ``MAX_GROUP_DEPTH`` (the
  ``regex`` compiler recurses once per level).
"""

from __future__ import annotations

import re

#: Group nesting the translation accepts.
MAX_GROUP_DEPTH = 100
#: Items the pattern may have with its counted repetitions written out (a{3} is three).
MAX_EXPANDED = 100_000


class RegexError(ValueError):
    """A pattern that is not an ECMA-262 regular expression hz can evaluate."""


_RANGES = {
    "d": ((0x30, 0x39),),
    "w": ((0x30, 0x39), (0x41, 0x5A), (0x5F, 0x5F), (0x61, 0x7A)),
    "s": (
        (0x09, 0x0D),
        (0x20, 0x20),
        (0xA0, 0xA0),
        (0x1680, 0x1680),
        (0x2000, 0x200A),
        (0x2028, 0x2029),
        (0x202F, 0x202F),
        (0x205F, 0x205F),
        (0x3000, 0x3000),
        (0xFEFF, 0xFEFF),
    ),
}
_WORD = "[0-9A-Z_a-z]"
_BOUNDS = re.compile(r"\{([0-9]+)(?:,([0-9]*))?\}")
_BOUNDARY = f"(?:(?<={_WORD})(?!{_WORD})|(?<!{_WORD})(?={_WORD}))"
_NOT_BOUNDARY = f"(?:(?<={_WORD})(?={_WORD})|(?<!{_WORD})(?!{_WORD}))"
_LINE_TERMINATORS = "\\n\\r\\u2028\\u2029"
_CONTROL = {"f": "\\f", "n": "\\n", "r": "\\r", "t": "\\t", "v": "\\v"}


def _char(code: int) -> str:
    return f"\\U{code:08x}"


def _class_body(letter: str) -> str:
    """The class body (without brackets) of ``\\d``, ``\\D``, ``\\w``, … in ECMA's sense."""
    ranges = _RANGES[letter.lower()]
    if letter.islower():
        pairs = ranges
    else:  # the complement, for use inside a class where [^…] cannot nest
        pairs_list: list[tuple[int, int]] = []
        start = 0
        for low, high in ranges:
            if low > start:
                pairs_list.append((start, low - 1))
            start = high + 1
        pairs_list.append((start, 0x10FFFF))
        pairs = tuple(pairs_list)
    return "".join(_char(a) if a == b else f"{_char(a)}-{_char(b)}" for a, b in pairs)


def _property(body: str) -> str:
    """ECMA property names to the ``regex`` module's: ``General_Category=L`` -> ``L``."""
    name, sep, value = body.partition("=")
    if not sep:
        return body
    if name in ("General_Category", "gc"):
        return value
    if name in ("Script", "sc", "Script_Extensions", "scx"):
        return f"{name}={value}"
    raise RegexError(f"unknown Unicode property name {name!r}")


def _hex(text: str) -> int | None:
    return int(text, 16) if text and all(c in "0123456789abcdefABCDEF" for c in text) else None


class _Translator:
    def __init__(self, pattern: str) -> None:
        self.p = pattern
        self.i = 0
        self.out: list[str] = []
        # The size of the pattern with counted repetitions written out, per open group: the
        # regex compiler expands a{1000} into a thousand nodes, and ((a{1000}){1000}){1000}
        # would take it hours.
        self.sizes = [0]
        self.last = 0

    def fail(self, what: str, at: int | None = None) -> RegexError:
        return RegexError(f"{what} at position {self.i if at is None else at}")

    def grow(self, size: int) -> None:
        self.sizes[-1] += size
        if self.sizes[-1] > MAX_EXPANDED:
            raise RegexError(f"repetitions expand to more than {MAX_EXPANDED:,} items")

    def atom(self, text: str, width: int = 1) -> None:
        self.out.append(text)
        self.i += width
        self.last = 1
        self.grow(1)

    def run(self) -> str:
        p = self.p
        while self.i < len(p):
            c = p[self.i]
            if c == "\\":
                self.escape(in_class=False)
                self.last = 1
                self.grow(1)
            elif c == "[":
                self.char_class()
                self.last = 1
                self.grow(1)
            elif c == "(":
                if len(self.sizes) > MAX_GROUP_DEPTH:
                    raise RegexError(f"groups nested more than {MAX_GROUP_DEPTH} deep")
                self.sizes.append(0)
                self.group()
            elif c == ")":
                if len(self.sizes) == 1:
                    raise self.fail("unbalanced parenthesis")
                self.last = max(self.sizes.pop(), 1)
                self.out.append(c)
                self.i += 1
                self.grow(self.last)
            elif c == ".":
                self.atom(f"[^{_LINE_TERMINATORS}]")
            elif c == "$":
                self.atom("\\Z")
            elif c in "*+?":
                self.out.append(c)
                self.i += 1
                self.after_quantifier()
            elif c == "{":
                bounds = _BOUNDS.match(p, self.i)
                if bounds is None:
                    self.atom("\\{")  # a literal brace (ECMA-262 Annex B)
                else:
                    self.repeat(bounds)
            elif c == "}":
                self.atom("\\}")
            elif c == "|":
                self.out.append(c)
                self.i += 1
                self.last = 0
            else:
                self.atom(c)
        return "".join(self.out)

    def repeat(self, bounds: re.Match[str]) -> None:
        low, high = bounds.group(1), bounds.group(2)
        count = high or low
        if len(count) > 9 or int(count) > MAX_EXPANDED:
            raise self.fail("repetition count too big")
        self.grow(self.last * max(int(count) - 1, 0))
        self.last *= max(int(count), 1)
        self.out.append(bounds.group())
        self.i = bounds.end()
        self.after_quantifier()

    def after_quantifier(self) -> None:
        """A lazy ``?`` may follow a quantifier; another quantifier may not (``a++``)."""
        if self.p.startswith("?", self.i):
            self.out.append("?")
            self.i += 1
        nxt = self.p[self.i : self.i + 1]
        if nxt in ("*", "+", "?") or (nxt == "{" and _BOUNDS.match(self.p, self.i)):
            raise self.fail("nothing to repeat")

    def group(self) -> None:
        p = self.p
        rest = p[self.i + 1 : self.i + 4]
        if not rest.startswith("?"):
            self.out.append("(")
            self.i += 1
            return
        for opener in ("?:", "?=", "?!", "?<=", "?<!"):
            if rest.startswith(opener):
                self.out.append("(" + opener)
                self.i += 1 + len(opener)
                return
        if rest.startswith("?<"):
            end = p.find(">", self.i)
            name = p[self.i + 3 : end] if end > 0 else ""
            if not name.isidentifier():
                raise self.fail("invalid group name")
            self.out.append(f"(?P<{name}>")
            self.i = end + 1
            return
        raise self.fail("invalid group")

    def char_class(self) -> None:
        p = self.p
        self.i += 1
        negated = p.startswith("^", self.i)
        if negated:
            self.i += 1
        if p.startswith("]", self.i):  # [] matches nothing, [^] anything
            self.out.append("(?s:.)" if negated else "(?!)")
            self.i += 1
            return
        self.out.append("[^" if negated else "[")
        while self.i < len(p):
            c = p[self.i]
            if c == "]":
                self.out.append("]")
                self.i += 1
                return
            if c == "\\":
                self.escape(in_class=True)
            else:
                # Characters the regex module could read as set operators or nested sets.
                self.out.append("\\" + c if c in "[&~|" else c)
                self.i += 1
        raise self.fail("unterminated character class")

    def escape(self, *, in_class: bool) -> None:
        p = self.p
        start = self.i
        if self.i + 1 >= len(p):
            raise self.fail("\\ at end of pattern", start)
        d = p[self.i + 1]
        self.i += 2
        if d in "dDwWsS":
            body = _class_body(d)
            self.out.append(body if in_class else f"[{body}]")
        elif d == "b":
            self.out.append("\\x08" if in_class else _BOUNDARY)
        elif d == "B":
            if in_class:
                raise self.fail("invalid escape \\B in a class", start)
            self.out.append(_NOT_BOUNDARY)
        elif d in _CONTROL:
            self.out.append(_CONTROL[d])
        elif d == "c":
            letter = p[self.i : self.i + 1]
            if not (letter.isascii() and letter.isalpha()):
                raise self.fail("invalid escape \\c", start)
            self.out.append(f"\\x{ord(letter) % 32:02x}")
            self.i += 1
        elif d == "x":
            code = _hex(p[self.i : self.i + 2])
            if code is None or len(p[self.i : self.i + 2]) < 2:
                raise self.fail("invalid escape \\x", start)
            self.out.append(_char(code))
            self.i += 2
        elif d == "u":
            self.out.append(_char(self.unicode_escape()))
        elif d in "pP":
            if not p.startswith("{", self.i):
                raise self.fail(f"invalid escape \\{d}", start)
            end = p.find("}", self.i)
            if end < 0:
                raise self.fail(f"unterminated \\{d}{{", start)
            self.out.append(f"\\{d}{{{_property(p[self.i + 1 : end])}}}")
            self.i = end + 1
        elif d == "k":
            end = p.find(">", self.i)
            name = p[self.i + 1 : end] if p.startswith("<", self.i) and end > 0 else ""
            if not name.isidentifier():
                raise self.fail("invalid escape \\k", start)
            self.out.append(f"(?P={name})")
            self.i = end + 1
        elif d == "0":
            if p[self.i : self.i + 1].isdigit():
                raise self.fail("invalid escape \\0 followed by a digit", start)
            self.out.append("\\x00")
        elif d.isdigit():  # a back reference
            while self.i < len(p) and p[self.i].isdigit():
                self.i += 1
            if in_class:
                raise self.fail("invalid back reference in a class", start)
            self.out.append(f"(?:\\{p[start + 1 : self.i]})")
        elif (d.isascii() and d.isalnum()) or d == "_":
            raise self.fail(f"invalid escape \\{d}", start)
        elif d == "-" and not in_class:
            raise self.fail("invalid escape \\-", start)
        elif d.isascii() and not d.isalnum():
            self.out.append("\\" + d)
        else:
            raise self.fail(f"invalid escape \\{d}", start)

    def unicode_escape(self) -> int:
        p = self.p
        if p.startswith("{", self.i):
            end = p.find("}", self.i)
            code = _hex(p[self.i + 1 : end]) if end > 0 else None
            if code is None or code > 0x10FFFF:
                raise self.fail("invalid escape \\u{…}")
            self.i = end + 1
            return code
        code = _hex(p[self.i : self.i + 4])
        if code is None or len(p[self.i : self.i + 4]) < 4:
            raise self.fail("invalid escape \\u")
        self.i += 4
        # A surrogate pair written as two escapes is one code point (ECMA-262, u flag).
        if 0xD800 <= code <= 0xDBFF and p.startswith("\\u", self.i):
            low = _hex(p[self.i + 2 : self.i + 6])
            if low is not None and 0xDC00 <= low <= 0xDFFF:
                self.i += 6
                return 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
        return code


def translate(pattern: str) -> str:
    """The ``regex``-module syntax of an ECMA-262 pattern; ``RegexError`` when it is not one."""
    return _Translator(pattern).run()
