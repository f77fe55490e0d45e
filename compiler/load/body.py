"""A Markdown contract's body: fenced code, HTML comments, ``##`` sections, the inputs it names.

A line scanner, not a Markdown parser: it knows the few constructs the body rules need. Inside
a fenced code block everything is text, kept verbatim (a ``<!--``, a ``## `` or a ``---``
there means nothing). Outside, an HTML comment is the author's: it is taken out of the text
the agent gets. A section is an ATX heading of level 2 (``## Goal``); it runs to the next
heading of level 1 or 2. The scan is linear in the body, which the loader has capped.
"""

from __future__ import annotations

import re

from hz.compiler.source import Body, Pos, Section

#: A fence opens a code block; a backtick fence's info string holds no backtick (CommonMark
#: 0.31 §4.5: "``` `x`" is inline code, not a fence).
_FENCE = re.compile(r" {0,3}(?:(`{3,})(?=[^`]*$)|(~{3,}))")
_HEADING = re.compile(r" {0,3}(#{1,6})(?:[ \t]+|$)")
_CLOSING_HASHES = re.compile(r"[ \t]+#+[ \t]*$|^#+[ \t]*$")
_INPUT = re.compile(r"\binputs\.([A-Za-z_][A-Za-z0-9_]*)")
_OPEN, _CLOSE = "<!--", "-->"


def read_body(text: str, first_line: int) -> Body:
    """The body ``text`` (line breaks as ``\\n``), whose first line is file line
    ``first_line``."""
    scan = _Scan()
    for number, line in enumerate(text.split("\n"), start=first_line):
        scan.line(line, number)
    return scan.body(first_line)


class _Scan:
    def __init__(self) -> None:
        self.fence: str | None = None  # the opening fence's characters while inside one
        self.comment: list[str] | None = None  # the open comment's text so far
        self.comment_at: Pos | None = None
        self.comments: list[str] = []
        self.out: list[str] = []
        self.sections: list[tuple[str, Pos, bool]] = []  # title, where, has content
        self.inputs: dict[str, Pos] = {}
        self.dropped = False  # the line before was a comment only, and left out

    def line(self, line: str, number: int) -> None:
        if self.fence is not None:
            self._in_fence(line)
            self._names(line, number)
            return
        if self.comment is None:
            opened = _FENCE.match(line)
            if opened is not None:
                self.dropped = False
                self.fence = opened.group(1) or opened.group(2)
                self.out.append(line)
                self._content()
                self._names(line, number)
                return
        visible, kept, commented = self._uncomment(line, number)
        if commented and not kept.strip():
            self.dropped = True  # a line of comment only leaves no line behind
            return
        if self.dropped and not kept.strip() and self.out and not self.out[-1].strip():
            return  # nor two blank lines where it stood between blank lines
        self.dropped = False
        self.out.append(kept)
        self._names(visible, number)
        heading = _HEADING.match(visible)
        if heading is None:
            if visible.strip():
                self._content()
            return
        level = len(heading.group(1))
        if level > 2:
            self._content()
            return
        title = _CLOSING_HASHES.sub("", visible[heading.end() :]).strip()
        if level == 2:
            indent = len(visible) - len(visible.lstrip(" "))
            self.sections.append((title, Pos(number, indent + 1), False))
        else:
            self.sections.append(("", Pos(number, 1), True))  # a level-1 heading ends a section

    def _in_fence(self, line: str) -> None:
        self.out.append(line)
        assert self.fence is not None
        stripped = line.strip(" ")
        char = self.fence[0]
        if (
            len(line) - len(line.lstrip(" ")) <= 3
            and stripped.startswith(self.fence)
            and not stripped.strip(char)
        ):
            self.fence = None

    def _content(self) -> None:
        if self.sections and not self.sections[-1][2]:
            title, pos, _ = self.sections[-1]
            self.sections[-1] = (title, pos, True)

    def _uncomment(self, line: str, number: int) -> tuple[str, str, bool]:
        """The line with its comments as spaces (columns kept), without them, and whether it
        held any comment."""
        visible: list[str] = []
        kept: list[str] = []
        at, commented = 0, False
        while at <= len(line):
            if self.comment is not None:
                commented = True
                end = line.find(_CLOSE, at)
                if end < 0:
                    self.comment.append(line[at:])
                    visible.append(" " * (len(line) - at))
                    return "".join(visible), "".join(kept), commented
                self.comment.append(line[at : end + len(_CLOSE)])
                visible.append(" " * (end + len(_CLOSE) - at))
                self.comments.append("\n".join(self.comment))
                self.comment, at = None, end + len(_CLOSE)
                continue
            start = line.find(_OPEN, at)
            if start < 0:
                visible.append(line[at:])
                kept.append(line[at:])
                break
            visible.append(line[at:start])
            kept.append(line[at:start])
            self.comment, self.comment_at = [], Pos(number, start + 1)
            at = start
            # "<!-->" and "<!--->" are whole comments (CommonMark 0.31 §6.6): the "-->" may
            # share the opening's dashes.
            end = line.find(_CLOSE, start + 2)
            if end < 0:
                self.comment.append(line[start:])
                visible.append(" " * (len(line) - start))
                return "".join(visible), "".join(kept), True
            self.comment.append(line[start : end + len(_CLOSE)])
            visible.append(" " * (end + len(_CLOSE) - start))
            self.comments.append("".join(self.comment))
            self.comment, at, commented = None, end + len(_CLOSE), True
        return "".join(visible), "".join(kept), commented

    def _names(self, text: str, number: int) -> None:
        for match in _INPUT.finditer(text):
            self.inputs.setdefault(match.group(1), Pos(number, match.start() + 1))

    def body(self, first_line: int) -> Body:
        lines = self.out
        while lines and not lines[0].strip():
            lines = lines[1:]
        text = "\n".join(lines).rstrip()
        return Body(
            line=first_line,
            text=text + "\n" if text else "",
            sections=tuple(Section(t, p, not content) for t, p, content in self.sections if t),
            comments=tuple(self.comments),
            inputs=tuple(self.inputs.items()),
            unclosed_comment=self.comment_at if self.comment is not None else None,
        )
