"""A quick yes for the common prompt template, without importing Jinja2.

``certainly_clean`` reads a template in a small subset of Jinja2's syntax — text, comments,
``{{ expression }}``, ``{% for NAME in expression %}`` … ``{% endfor %}`` and ``{% if %}`` /
``{% elif %}`` / ``{% else %}`` / ``{% endif %}`` over references to ``inputs.NAME``, loop
variables and ``loop``, with filters, tests, ``not``/``and``/``or``, subscripts and string or
integer literals — and says True only when Jinja2's parse and hz's walk of it
(``template_walk.analyse``) would find nothing to report. Anything it cannot decide (other
syntax, an undeclared or unused input, a name out of its loop, an unknown filter) is False,
which only sends the template to Jinja2, which decides. Like the schema's fast path, it may
only ever say "clean" where Jinja2 agrees: tests/unit/test_template_scan.py holds it to that
over the corpus, tests/cases, generated contracts and a list of near misses.
"""

from __future__ import annotations

import re

#: Jinja2's built-in filters (less ``random`` and ``shuffle``, which hz removes: HZ504) and a
#: few of its tests; a test checks each against the environment hz validates with.
FILTERS = frozenset(
    [
        "abs",
        "attr",
        "batch",
        "capitalize",
        "center",
        "count",
        "d",
        "default",
        "dictsort",
        "e",
        "escape",
        "filesizeformat",
        "first",
        "float",
        "forceescape",
        "format",
        "groupby",
        "indent",
        "int",
        "items",
        "join",
        "last",
        "length",
        "list",
        "lower",
        "map",
        "max",
        "min",
        "pprint",
        "reject",
        "rejectattr",
        "replace",
        "reverse",
        "round",
        "safe",
        "select",
        "selectattr",
        "slice",
        "sort",
        "string",
        "striptags",
        "sum",
        "title",
        "tojson",
        "trim",
        "truncate",
        "unique",
        "upper",
        "urlencode",
        "urlize",
        "wordcount",
        "wordwrap",
        "xmlattr",
    ]
)
TESTS = frozenset(
    [
        "boolean",
        "callable",
        "defined",
        "escaped",
        "even",
        "float",
        "integer",
        "iterable",
        "lower",
        "mapping",
        "number",
        "odd",
        "sequence",
        "string",
        "undefined",
        "upper",
    ]
)
#: Names that are not plain variables to Jinja2 (constants, operators, statement words) or
#: that hz's walk treats specially: never a loop variable here.
RESERVED = frozenset(
    [
        "true",
        "false",
        "none",
        "True",
        "False",
        "None",
        "and",
        "or",
        "not",
        "in",
        "is",
        "if",
        "else",
        "elif",
        "endif",
        "for",
        "endfor",
        "recursive",
        "loop",
        "inputs",
        "caller",
        "varargs",
        "kwargs",
        "self",
        "super",
    ]
)

#: The word that closes each kind of open block.
_END = {"for": "endfor", "if": "endif", "else": "endif"}
_TAG = re.compile(r"\{[{%#]")
_TOKEN = re.compile(
    r"""\s*(?:
      (?P<name>[A-Za-z_][A-Za-z0-9_]*)
    | (?P<int>[0-9]+)(?![0-9A-Za-z_.])
    | (?P<str>"[^"\\]*"|'[^'\\]*')
    | (?P<op>[.|(),\[\]:])
    )""",
    re.VERBOSE,
)
_WS = re.compile(r"\s*")

Token = tuple[str, str]  # (kind, text): kind is name, int, str or op


class _Undecided(Exception):
    """Outside the subset: Jinja2 decides."""


def certainly_clean(source: str, declared: tuple[str, ...]) -> bool:
    """True when Jinja2 would parse ``source`` and hz's template check would report nothing
    for it, given the declared input names; False when this cannot tell."""
    try:
        used = _Scanner(source, frozenset(declared)).run()
    except _Undecided:
        return False
    return used >= set(declared)


class _Scanner:
    def __init__(self, source: str, declared: frozenset[str]) -> None:
        self.source = source
        self.declared = declared
        self.used: set[str] = set()
        #: open blocks: ("for", loop variable) or ("if", "") / ("else", "")
        self.blocks: list[tuple[str, str]] = []

    def run(self) -> set[str]:
        src, pos = self.source, 0
        while (m := _TAG.search(src, pos)) is not None:
            kind, start = m.group()[1], m.end()
            if kind == "#":
                end = src.find("#}", start)
                if end < 0:
                    raise _Undecided
                pos = end + 2
                continue
            if src.startswith("+", start):
                raise _Undecided
            if src.startswith("-", start):
                start += 1
            tokens, pos = self._tokens(start, "}}" if kind == "{" else "%}")
            if kind == "{":
                self._expression(_Stream(tokens), tests=True).done()
            else:
                self._statement(_Stream(tokens))
        if self.blocks:
            raise _Undecided  # an unclosed block: a syntax error
        return self.used

    def _tokens(self, pos: int, end: str) -> tuple[list[Token], int]:
        """The tokens of one tag from ``pos``, and the position after its end delimiter."""
        src, depth = self.source, 0
        out: list[Token] = []
        while True:
            space = _WS.match(src, pos)
            pos = space.end() if space is not None else pos
            if src.startswith(end, pos) or src.startswith("-" + end, pos):
                if depth:
                    raise _Undecided  # Jinja2 reads on past it inside brackets
                return out, pos + len(end) + (src[pos] == "-")
            m = _TOKEN.match(src, pos)
            if m is None or m.lastgroup is None:
                raise _Undecided
            text = m.group(m.lastgroup)
            if text in "([":
                depth += 1
            elif text in ")]":
                depth -= 1
            out.append((m.lastgroup, text))
            pos = m.end()

    def _statement(self, s: _Stream) -> None:
        word = s.name()
        if word == "for":
            var = s.name()
            if var in RESERVED or s.name() != "in":
                raise _Undecided
            self._expression(s, tests=False).done()
            self.blocks.append(("for", var))
        elif word == "if":
            self._expression(s, tests=True).done()
            self.blocks.append(("if", ""))
        elif word in ("elif", "else"):
            if not self.blocks or self.blocks[-1][0] != "if":
                raise _Undecided  # else of a for, or after else
            if word == "elif":
                self._expression(s, tests=True).done()
            else:
                s.done()
                self.blocks[-1] = ("else", "")
        elif word in ("endfor", "endif"):
            s.done()
            opened = self.blocks.pop()[0] if self.blocks else None
            if word != _END.get(opened or ""):
                raise _Undecided
        else:
            raise _Undecided

    def _expression(self, s: _Stream, *, tests: bool) -> _Stream:
        """``[not] operand [(and|or) [not] operand]...`` with tests; a filtered reference
        alone without (a for loop's iterable)."""
        while True:
            if tests and s.peek() == ("name", "not"):
                s.next()
            self._filtered(s)
            if not tests:
                return s
            if s.peek() == ("name", "is"):
                s.next()
                if s.peek() == ("name", "not"):
                    s.next()
                if s.name() not in TESTS:
                    raise _Undecided
            if s.peek() not in (("name", "and"), ("name", "or")):
                return s
            s.next()

    def _filtered(self, s: _Stream) -> None:
        self._reference(s)
        while s.peek() == ("op", "|"):
            s.next()
            if s.name() not in FILTERS:
                raise _Undecided
            if s.peek() == ("op", "("):
                s.next()
                if s.peek() != ("op", ")"):
                    s.literal()
                    while s.peek() == ("op", ","):
                        s.next()
                        s.literal()
                s.expect("op", ")")

    def _reference(self, s: _Stream) -> None:
        root = s.name()
        if root == "inputs":
            s.expect("op", ".")
            name = s.name()
            if name not in self.declared:
                raise _Undecided  # HZ502
            self.used.add(name)
        elif not any(kind == "for" and root in (var, "loop") for kind, var in self.blocks):
            raise _Undecided  # not a name in scope here
        while (nxt := s.peek()) in (("op", "."), ("op", "[")):
            s.next()
            if nxt[1] == ".":
                s.name()
                continue
            # [index], ["key"], [a:b], [:b], [a:]
            if s.peek() != ("op", ":"):
                s.literal()
            if s.peek() == ("op", ":"):
                s.next()
                if s.peek() != ("op", "]"):
                    s.expect("int")
            s.expect("op", "]")


class _Stream:
    def __init__(self, tokens: list[Token]) -> None:
        self.tokens = tokens
        self.at = 0

    def peek(self) -> Token | None:
        return self.tokens[self.at] if self.at < len(self.tokens) else None

    def next(self) -> Token:
        token = self.peek()
        if token is None:
            raise _Undecided
        self.at += 1
        return token

    def expect(self, kind: str, text: str | None = None) -> str:
        got_kind, got = self.next()
        if got_kind != kind or (text is not None and got != text):
            raise _Undecided
        return got

    def name(self) -> str:
        return self.expect("name")

    def literal(self) -> None:
        kind, _ = self.next()
        if kind not in ("int", "str"):
            raise _Undecided

    def done(self) -> None:
        if self.peek() is not None:
            raise _Undecided
