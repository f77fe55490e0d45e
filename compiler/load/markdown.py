"""Load a Markdown contract: a ``---`` YAML frontmatter holding the ``hz:`` block, then a body
that is the contract text.

The frontmatter is read by the YAML contract loader itself (same limits, same problems): the
YAML parser is handed the file from its first line (the opening ``---`` is a YAML document
start) to the last frontmatter line, so every line and column it reports is the file's own.
The body is read by ``body.read_body``. Line ends are normalised to ``\\n`` first (a CRLF
checkout compiles to the same job); that moves no line and no column.

The loaded document has the shape of a YAML contract: the frontmatter's keys (``x-…`` keys
dropped: they are the author's), ``contract`` the body without its HTML comments and, when
the frontmatter has no ``prompt``, the request built from the body's sections
(``built_prompt``).
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

from hz.compiler.diagnostics import Diagnostic
from hz.compiler.load.body import read_body
from hz.compiler.load.loader import MAX_BYTES, Loaded, compose, decode
from hz.compiler.load.problems import LoadProblem
from hz.compiler.load.wording import for_contract
from hz.compiler.rules.registry import HZ015, HZ016
from hz.compiler.source import Body, Pos, SourceDoc

FENCE = "---"
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
NO_FRONTMATTER_HINT = (
    "a Markdown contract starts with a line '---', its hz: block and the other keys, and "
    "another line '---'; the body follows"
)


def frontmatter_end(text: str) -> int | None:
    """The offset of the line that closes the frontmatter opened on the first line of
    ``text``, or None when the first line opens none or nothing closes it. One pass over the
    text, which the caller has capped."""
    if text.split("\n", 1)[0].rstrip(" \t") != FENCE:
        return None
    at = text.find("\n") + 1
    while 0 < at < len(text):
        end = text.find("\n", at)
        line = text[at:] if end < 0 else text[at:end]
        if line.rstrip(" \t") == FENCE:
            return at
        if end < 0:
            return None
        at = end + 1
    return None


def dots_line(text: str) -> int:
    """The number of the first line after the first that holds only ``...`` (YAML's document
    end, with which pandoc closes a frontmatter), or 0. In YAML such a line ends the document
    wherever it stands, so hz's frontmatter cannot go on past it."""
    found = re.search(r"^\.\.\.[ \t]*$", text, re.MULTILINE)
    return text.count("\n", 0, found.start()) + 1 if found and found.start() > 0 else 0


def _closed_with_dots(path: str, line: int) -> Diagnostic:
    message = f"the frontmatter is closed with '...' on line {line}: hz reads it up to a '---'"
    hint = "close the frontmatter with a line holding only '---' instead; the body follows it"
    return Diagnostic(HZ015, message, path, line, 1, hint=hint)


#: A key ``hz`` anywhere in a frontmatter that does not parse: plain, quoted, in a flow
#: mapping or as a complex key (``? hz``).
_ANY_HZ_KEY = re.compile(r"""(?:^|[\s{,?])(?:"|')?hz(?:"|')?(?:[ \t]*)(?::|$)""", re.MULTILINE)


def has_hz_block(text: str) -> bool:
    """Whether ``text`` (a Markdown file) has a frontmatter with a top-level ``hz`` key:
    discovery's test. By lines first (``hz:`` opening a line); else the frontmatter is parsed
    (as the loader does, same limits), so that ``"hz":``, ``{hz: …}`` and ``? hz`` are
    found too; a frontmatter that does not parse is a contract when it names ``hz`` as a key
    anywhere, so that a broken contract is reported rather than skipped."""
    text = text.removeprefix("\ufeff").replace("\r\n", "\n").replace("\r", "\n")
    end = frontmatter_end(text)
    if end is None:
        # An unterminated frontmatter that opens an hz: block is a contract with a problem.
        if text.split("\n", 1)[0].rstrip(" \t") != FENCE:
            return False
        end = len(text)
    front = text[:end]
    if any(re.match(r"hz(?:[ \t]*):", line) for line in front.split("\n")):
        return True
    composer = compose(front, "")
    if composer.problems:
        return _ANY_HZ_KEY.search(front) is not None
    return isinstance(composer.data, dict) and "hz" in composer.data


def load_markdown(data: bytes, path: str) -> Loaded:
    """Load a Markdown contract from its bytes; ``path`` names it in diagnostics."""
    if len(data) > MAX_BYTES:
        return None, [for_contract(LoadProblem("too_large", path, data={"limit": MAX_BYTES}))]
    text, problem = decode(data, path)
    if problem is not None:
        return None, [for_contract(problem)]
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    if text.split("\n", 1)[0].rstrip(" \t") != FENCE:
        message = "not a contract: a Markdown contract starts with a '---' frontmatter"
        return None, [Diagnostic(HZ016, message, path, 1, 1, hint=NO_FRONTMATTER_HINT)]
    end = frontmatter_end(text)
    if end is None:
        dots = dots_line(text)
        if dots:
            return None, [_closed_with_dots(path, dots)]
        message = "the frontmatter opened on line 1 is never closed"
        hint = "end the frontmatter with a line holding only '---'; the body follows it"
        return None, [Diagnostic(HZ015, message, path, 1, 1, hint=hint)]
    composer = compose(text[:end], path)
    if composer.problems or composer.data is None:
        dots = dots_line(text[:end])
        if dots and composer.problems and composer.problems[0].line > dots:
            return None, [_closed_with_dots(path, dots)]
        return None, [for_contract(p) for p in composer.problems]
    front: dict[str, Any] = composer.data
    if "hz" not in front:
        message = "not a contract: the frontmatter has no hz: block"
        return None, [Diagnostic(HZ016, message, path, 2, 1, hint=NO_FRONTMATTER_HINT)]
    close_line = text.count("\n", 0, end) + 1
    body = read_body(text[end:].split("\n", 1)[1] if "\n" in text[end:] else "", close_line + 1)
    doc_data = {k: v for k, v in front.items() if not k.startswith("x-")}
    values, keys = dict(composer.values), dict(composer.keys)
    here = Pos(body.line, 1)
    if "contract" not in doc_data:
        doc_data["contract"] = body.text
        values[("contract",)] = here
    built = "prompt" not in doc_data
    if built:
        doc_data["prompt"] = built_prompt(body, doc_data)
        values[("prompt",)] = here
    body = replace(body, built_prompt=built)
    return SourceDoc(path, text, doc_data, values, keys, dict(composer.scalars), body), []


#: The sentence of the built request for each section the body has (matched without regard
#: to case), in this order.
REQUEST_SENTENCES = (
    ("goal", 'Reach the goal under "{title}".'),
    ("maintains", 'Keep true what "{title}" lists.'),
    ("done when", 'You are done when everything under "{title}" holds.'),
)


def built_prompt(body: Body, data: dict[str, Any]) -> str:
    """The request of a Markdown contract without a ``prompt``: one line that points at the
    body's Goal, Maintains and Done when sections (those it has), then each declared input
    under its own heading. The body itself reaches the agent as the contract text, so the
    request repeats none of it; only input names are put into the template."""
    titles = {s.title.casefold(): s.title for s in reversed(body.sections)}
    said = [
        sentence.format(title=titles[key]) for key, sentence in REQUEST_SENTENCES if key in titles
    ]
    lines = ["Carry out the contract above. " + " ".join(said) if said else _PLAIN]
    hz = data.get("hz")
    inputs = hz.get("inputs") if isinstance(hz, dict) else None
    for name in inputs if isinstance(inputs, dict) else ():
        if isinstance(name, str) and _NAME.match(name):
            lines += ["", f"## Input: {name}", "", f"{{{{ inputs.{name} }}}}"]
    return "\n".join(lines) + "\n"


_PLAIN = "Carry out the contract above."
