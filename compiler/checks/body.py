"""The rules of a Markdown contract's body (HZ111–HZ117) and the frontmatter keys it replaces.

The sections a body must have depend on its ``kind`` (``REQUIRED``); a body without a
``prompt`` in its frontmatter needs Goal and Done when whatever its kind, since the request
hz builds points at them. Each section title is matched without regard to case.

HZ115 (a declared input the body never names) is for a contract without a ``prompt``: the
request hz builds hands every input over under its bare name, so the body is the only place
that says what it is for. A contract with a prompt of its own uses its inputs in that
template, which the template check judges (HZ506 for one it never uses).
"""

from __future__ import annotations

from hz.compiler.checks.common import get
from hz.compiler.diagnostics import Diagnostic
from hz.compiler.rules.registry import HZ101, HZ111, HZ112, HZ113, HZ114, HZ115, HZ116, HZ117, RULES
from hz.compiler.source import Body, SourceDoc

#: The sections a contract of a kind must have, in the order they are reported.
REQUIRED: dict[str, tuple[str, ...]] = {"responsibility": ("Goal", "Maintains", "Done when")}
#: The sections a Markdown contract without a prompt must have: its request names them.
FOR_BUILT_PROMPT = ("Goal", "Done when")


def required_sections(doc: SourceDoc, body: Body) -> tuple[tuple[str, ...], str]:
    """The sections ``doc`` must have, and why (for the message)."""
    kind = doc.data.get("kind")
    if isinstance(kind, str) and kind in REQUIRED:
        return REQUIRED[kind], f"a contract of kind {kind!r}"
    if body.built_prompt:
        return FOR_BUILT_PROMPT, "a Markdown contract without a prompt"
    return (), ""


def check_body(doc: SourceDoc) -> list[Diagnostic]:
    body = doc.body
    if body is None:
        return []
    out: list[Diagnostic] = []
    if ("contract",) in doc.keys:  # the frontmatter has one
        pos = doc.pos(("contract",), key=True)
        out.append(
            Diagnostic(
                HZ101,
                "'contract' is not a frontmatter key: the body of a Markdown contract is its text",
                doc.path,
                pos.line,
                pos.column,
                hint="move the text below the frontmatter's closing '---'",
            )
        )
    if body.unclosed_comment is not None:
        at = body.unclosed_comment
        out.append(
            Diagnostic(
                HZ116,
                "'<!--' opens an HTML comment that is not closed before its paragraph or "
                "block ends",
                doc.path,
                at.line,
                at.column,
                hint=(
                    "close it with '-->' in the same paragraph or block; to show '<!--' as "
                    "text, write '&lt;!--'"
                ),
            )
        )
    if body.too_deep is not None:
        # Only a Markdown contract has a body, and loading it imported markdown-it already.
        from hz.compiler.load.body import NESTING

        at = body.too_deep
        out.append(
            Diagnostic(
                HZ117,
                f"the body nests lists and blockquotes {NESTING} levels deep: hz cannot read "
                "what is inside, nor take its comments out",
                doc.path,
                at.line,
                at.column,
                hint=f"nest at most {NESTING - 1} levels (a blockquote counts one, a list two)",
            )
        )
    out += _sections(doc, body)
    out += _inputs(doc, body)
    return out


def _sections(doc: SourceDoc, body: Body) -> list[Diagnostic]:
    needed, who = required_sections(doc, body)
    out = []
    for title in needed:
        found = [s for s in body.sections if s.title.casefold() == title.casefold()]
        if not found:
            out.append(
                Diagnostic(
                    HZ111,
                    f"{who} needs a '## {title}' section",
                    doc.path,
                    body.line,
                    1,
                    hint=f"add a heading '## {title}' and what belongs under it",
                )
            )
            continue
        first = found[0]
        if first.empty:
            out.append(
                Diagnostic(
                    HZ112,
                    f"the section '{first.title}' is empty",
                    doc.path,
                    first.pos.line,
                    first.pos.column,
                    hint="write what belongs under it; a comment does not count",
                )
            )
        for again in found[1:]:
            out.append(
                Diagnostic(
                    HZ113,
                    f"the section '{again.title}' is given twice (first at line {first.pos.line})",
                    doc.path,
                    again.pos.line,
                    again.pos.column,
                    hint="merge the two into one section",
                )
            )
    return out


def _inputs(doc: SourceDoc, body: Body) -> list[Diagnostic]:
    declared = get(doc.data, "hz", "inputs")
    names = set(declared) if isinstance(declared, dict) else set()
    named = dict(body.inputs)
    out = []
    for name, pos in body.inputs:
        if name not in names:
            out.append(
                Diagnostic(
                    HZ114,
                    f"the body names inputs.{name}, which the frontmatter does not declare",
                    doc.path,
                    pos.line,
                    pos.column,
                    RULES[HZ114].severity,
                    hint=f"declare it under hz.inputs.{name}, or correct the name",
                )
            )
    if not isinstance(declared, dict) or not body.built_prompt:
        # With a prompt of its own, the prompt says what an input is for: one it uses is
        # used, one it does not is HZ506's (the template check), not the body's.
        return out
    for name in declared:
        if name not in named:
            pos = doc.pos(("hz", "inputs", name), key=True)
            out.append(
                Diagnostic(
                    HZ115,
                    f"input {name!r} is declared but the body never names it",
                    doc.path,
                    pos.line,
                    pos.column,
                    RULES[HZ115].severity,
                    hint=f"say in the body what inputs.{name} is for, or remove the input",
                )
            )
    return out
