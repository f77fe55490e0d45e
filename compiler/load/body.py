"""A Markdown contract's body: HTML comments, ``##`` sections, the inputs it names.

The body is parsed as CommonMark by markdown-it-py; the parse only finds things, and every
change is made on the body's own lines, so everything but a comment stays byte for byte.

- A comment is an HTML comment that CommonMark sees as one: an HTML block that opens with
  ``<!--`` (with every comment inside it) or an inline ``<!-- … -->``, in any container
  (list item, blockquote). Inside code (fenced, indented, a code span) nothing is a comment.
  A comment is taken out of the text the agent gets; a line that held only comment goes too.
- A ``<!--`` that CommonMark does not close (an HTML block running to the end of its
  container, or a ``<!--`` that stays literal text) is reported as an unclosed comment.
- A section is a level-2 ATX heading (``## Goal``) at the top level of the body (not in a
  list item or a blockquote); it runs to the next top-level ATX heading of level 1 or 2. A
  body without level-2 headings has its sections one level down (``### Goal``, as
  Heinzelmännchen writes them): the shallowest top-level heading level below 1 is the
  sections' level.

The loader has capped the body (256 KiB); markdown-it-py's parse is linear on the
pathological shapes measured in docs/decisions/0015-markdown-contracts.md. Its nesting limit
leaves deeper containers unparsed (their comments would stay): ``too_deep`` says where.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import replace

from markdown_it import MarkdownIt
from markdown_it.rules_block import StateBlock
from markdown_it.rules_inline import StateInline
from markdown_it.rules_inline import html_inline as markdown_it_html_inline
from markdown_it.token import Token

from hz.compiler.source import Body, Pos, Section

_HEADING = re.compile(r" {0,3}(#{1,6})(?:[ \t]+|$)")
_CLOSING_HASHES = re.compile(r"[ \t]+#+[ \t]*$|^#+[ \t]*$")
_INPUT = re.compile(r"\binputs\.([A-Za-z_][A-Za-z0-9_]*)")
_OPEN, _CLOSE = "<!--", "-->"
_COMMENT_AT = "hz_at"  # an inline comment token's offset in its inline content
_LITERALS = "hz_literal_openers"  # offsets of a "<!--" the inline parser left as text
_SRC = "hz_src"  # the inline content being parsed
_TOO_DEEP = "hz_too_deep"  # offsets where markdown-it's nesting limit left lines unparsed


#: markdown-it reads no block nested this deep (its commonmark preset's limit, set here so
#: the number is hz's): a blockquote counts one level, a list two (the list and its item).
NESTING = 20


def _parser() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"maxNesting": NESTING})
    md.disable("inline")  # run per inline token below, to know each one's offsets

    def html_inline(state: StateInline, silent: bool) -> bool:
        at = state.pos
        found = markdown_it_html_inline(state, silent)
        # Only the inline token's own content: an image's alt text is parsed from a copy,
        # whose offsets are not the content's (a comment there is kept).
        if silent or state.src is not state.env.get(_SRC) or not state.src.startswith(_OPEN, at):
            return found
        if found:
            state.tokens[-1].meta[_COMMENT_AT] = at
        else:
            state.env[_LITERALS].append(at)
        return found

    md.inline.ruler.at("html_inline", html_inline)
    tokenize = md.block.tokenize

    def block_tokenize(state: StateBlock, start: int, end: int) -> None:
        # markdown-it skips, without a word, what is nested deeper than its limit: say where.
        line = state.skipEmptyLines(start)
        if state.level >= NESTING and line < end and state.sCount[line] >= state.blkIndent:
            state.env.setdefault(_TOO_DEEP, []).append(state.bMarks[line] + state.tShift[line])
        tokenize(state, start, end)

    md.block.tokenize = block_tokenize  # type: ignore[method-assign,assignment]
    return md


_MD = _parser()


def read_body(text: str, first_line: int) -> Body:
    """The body ``text`` (line breaks as ``\\n``), whose first line is file line
    ``first_line``."""
    lines = text.split("\n")
    starts = [0]
    for line in lines[:-1]:
        starts.append(starts[-1] + len(line) + 1)
    spans: list[tuple[int, int]] = []
    unclosed: list[int] = []
    headings: dict[int, int] = {}  # line index -> level, top-level ATX headings
    env: dict[str, list[int]] = {}
    for token in _MD.parse(text, env):
        if token.map is None:
            continue
        if token.type == "html_block" and token.content.lstrip(" \t").startswith(_OPEN):
            _block_comments(text, lines, starts, token.map, spans, unclosed)
        elif token.type == "inline":
            _inline_comments(token, lines, starts, spans, unclosed)
        elif token.type == "heading_open" and token.level == 0 and token.markup.startswith("#"):
            headings[token.map[0]] = int(token.tag[1])
    spans.sort()
    body = _Lines(text, lines, starts, spans).body(first_line, headings, unclosed)
    if _TOO_DEEP in env:
        body = replace(body, too_deep=_pos(text, starts, min(env[_TOO_DEEP]), first_line))
    return body


def _pos(text: str, starts: list[int], at: int, first_line: int) -> Pos:
    index = bisect_right(starts, at) - 1
    return Pos(first_line + index, at - starts[index] + 1)


def _block_comments(
    text: str,
    lines: list[str],
    starts: list[int],
    where: list[int],
    spans: list[tuple[int, int]],
    unclosed: list[int],
) -> None:
    """The comments of an HTML block that opens with ``<!--``: the one it opens with and
    any other inside it; the block ends where CommonMark ends it (a ``-->`` line, or the end
    of its container)."""
    first, last = where[0], where[1] - 1
    at = starts[first] + lines[first].find(_OPEN)
    end = starts[last] + len(lines[last])
    while True:
        opened = text.find(_OPEN, at, end)
        if opened < 0:
            return
        # "<!-->" and "<!--->" are whole comments (CommonMark 0.31 §6.6).
        closed = text.find(_CLOSE, opened + 2, end)
        if closed < 0:
            unclosed.append(opened)
            spans.append((opened, end))
            return
        spans.append((opened, closed + len(_CLOSE)))
        at = closed + len(_CLOSE)


def _inline_comments(
    token: Token,
    lines: list[str],
    starts: list[int],
    spans: list[tuple[int, int]],
    unclosed: list[int],
) -> None:
    """Parse an inline token's content; its comments and literal ``<!--`` by file offset.

    The content is the token's lines without their container prefixes (and the last one
    without trailing blanks), so each content line, without its leading blanks, ends where its
    file line does, or is the last occurrence on it: that maps a content offset to a file
    offset."""
    assert token.map is not None
    literals: list[int] = []
    env = {_SRC: token.content, _LITERALS: literals}
    children: list[Token] = []
    _MD.inline.parse(token.content, _MD, env, children)
    token.children = children
    content = token.content.split("\n")
    bases: list[int] = []  # where each content line starts in its content, and in the file
    files: list[int] = []
    offset = 0
    for number, part in enumerate(content):
        line = lines[token.map[0] + number] if token.map[0] + number < len(lines) else ""
        # Leading blanks may be rewritten (a tab split by a container's indentation becomes
        # spaces); no comment starts or ends in them, so the line is found without them.
        text = part.lstrip(" \t")
        column = line.rfind(text)
        bases.append(offset)
        files.append(
            -1 if column < 0 else starts[token.map[0] + number] + column - len(part) + len(text)
        )
        offset += len(part) + 1

    def to_file(at: int) -> int:
        index = bisect_right(bases, at) - 1
        return -1 if files[index] < 0 else files[index] + at - bases[index]

    for child in children:
        if child.type == "html_inline" and _COMMENT_AT in child.meta:
            start = to_file(child.meta[_COMMENT_AT])
            end = to_file(child.meta[_COMMENT_AT] + len(child.content) - 1)
            if start >= 0 and end >= 0:  # else kept: a line not found (none is known)
                spans.append((start, end + 1))
    for at in literals:
        where = to_file(at)
        if where >= 0:
            unclosed.append(where)


class _Lines:
    """The body line by line with its comment spans: the text kept, sections, names."""

    def __init__(
        self, text: str, lines: list[str], starts: list[int], spans: list[tuple[int, int]]
    ) -> None:
        self.text, self.lines, self.starts, self.spans = text, lines, starts, spans

    def _cut(self, index: int, first: int) -> tuple[str, str, bool]:
        """Line ``index`` with its comments as spaces (columns kept), without them, and
        whether it held any; ``first`` is the first span that may reach it."""
        line, a = self.lines[index], self.starts[index]
        b = a + len(line)
        visible, kept, at, commented = [], [], a, False
        for span in range(first, len(self.spans)):
            start, end = self.spans[span]
            if start > b:
                break
            if end <= a:
                continue
            commented = True
            cut_from, cut_to = max(start, a), min(end, b)
            visible += [self.text[at:cut_from], " " * (cut_to - cut_from)]
            kept.append(self.text[at:cut_from])
            at = max(at, cut_to)
        visible.append(self.text[at:b])
        kept.append(self.text[at:b])
        return "".join(visible), "".join(kept), commented

    def body(self, first_line: int, headings: dict[int, int], unclosed: list[int]) -> Body:
        out: list[str] = []
        sections: list[tuple[str, Pos, bool]] = []  # title, where, has content
        inputs: dict[str, Pos] = {}
        dropped = False  # the line before was a comment only, and left out
        first = 0  # the first span not wholly before the current line
        section_level = min((lv for lv in headings.values() if lv >= 2), default=2)
        for index in range(len(self.lines)):
            while first < len(self.spans) and self.spans[first][1] <= self.starts[index]:
                first += 1
            number = first_line + index
            visible, kept, commented = self._cut(index, first)
            for match in _INPUT.finditer(visible):
                inputs.setdefault(match.group(1), Pos(number, match.start() + 1))
            if commented and not kept.strip():
                dropped = True  # a line of comment only leaves no line behind
                continue
            if dropped and not kept.strip() and out and not out[-1].strip():
                continue  # nor two blank lines where it stood between blank lines
            dropped = False
            out.append(kept)
            level = headings.get(index)
            heading = _HEADING.match(visible) if level is not None else None
            if heading is None or level is None or level > section_level:
                if visible.strip() and sections and not sections[-1][2]:
                    sections[-1] = (sections[-1][0], sections[-1][1], True)
                continue
            if level == section_level:
                title = _CLOSING_HASHES.sub("", visible[heading.end() :]).strip()
                indent = len(visible) - len(visible.lstrip(" "))
                sections.append((title, Pos(number, indent + 1), False))
            else:
                sections.append(("", Pos(number, 1), True))  # a level-1 heading ends a section
        while out and not out[0].strip():
            out = out[1:]
        text = "\n".join(out).rstrip()
        return Body(
            line=first_line,
            text=text + "\n" if text else "",
            sections=tuple(Section(t, p, not content) for t, p, content in sections if t),
            comments=tuple(self.text[start:end] for start, end in self.spans),
            inputs=tuple(inputs.items()),
            unclosed_comment=(
                _pos(self.text, self.starts, min(unclosed), first_line) if unclosed else None
            ),
        )
