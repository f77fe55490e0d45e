"""The prompt template: Jinja2 syntax, and names it may use, reported at lines of the file.

A template sees exactly one variable, ``inputs`` (the declared input values), plus Jinja's
own globals (``range``, ``loop`` inside a for, …), names it sets itself, and the built-in
filters and tests, less those that would make packets differ between renders (``lipsum``,
``random``). Anything else would be undefined at render time, so it is an error here.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, NamedTuple

from hz.compiler.checks.common import get
from hz.compiler.checks.publishes import inputs_used
from hz.compiler.checks.template_scan import certainly_clean
from hz.compiler.checks.template_walk import UNUSED, analyse
from hz.compiler.diagnostics import Diagnostic
from hz.compiler.rules.registry import HZ501, RULES
from hz.compiler.source import SourceDoc

if TYPE_CHECKING:
    from jinja2 import Environment

PROMPT = ("prompt",)


class Finding(NamedTuple):
    """One problem in a template, located by template line (1-based) and a text to find."""

    code: str
    line: int
    needle: str | None
    message: str
    hint: str | None


@functools.cache
def environment() -> Environment:
    from jinja2 import Environment

    from hz.compiler.render.sandbox import NONDETERMINISTIC_FILTERS, NONDETERMINISTIC_GLOBALS

    # A prompt is plain text for a model, not HTML: escaping would corrupt it.
    env = Environment(autoescape=False)  # noqa: S701
    # The names the render environment removes, so that validate reports them (HZ503/HZ504).
    for name in NONDETERMINISTIC_GLOBALS:
        env.globals.pop(name, None)
    for name in NONDETERMINISTIC_FILTERS:
        env.filters.pop(name, None)
    return env


@functools.lru_cache(maxsize=256)
def findings(source: str, declared: tuple[str, ...]) -> tuple[Finding, ...]:
    """Every problem of ``source`` given the declared input names (pure, so cached)."""
    from jinja2 import TemplateSyntaxError

    try:
        tree = environment().parse(source)
    except TemplateSyntaxError as e:
        hint = (
            "the prompt is a Jinja2 template: {{ expression }}, "
            "{% statement %} … {% endstatement %}, {# comment #}"
        )
        msg = f"prompt: template syntax error: {e.message}"
        return (Finding(HZ501, e.lineno or 1, None, msg, hint),)
    return tuple(Finding(*f) for f in analyse(tree, environment(), declared))


def check_template(doc: SourceDoc) -> list[Diagnostic]:
    source = doc.data.get("prompt")
    if not isinstance(source, str):
        return []  # the schema reports it
    inputs = get(doc.data, "hz", "inputs")
    declared = tuple(str(k) for k in inputs) if isinstance(inputs, dict) else ()
    if certainly_clean(source, declared):
        return []  # the common case, without importing (or parsing with) Jinja2
    out = []
    elsewhere = inputs_used(doc)
    for f in findings(source, declared):
        if f.code == UNUSED and f.needle in elsewhere:
            continue  # a publish's argument uses it
        if f.code == UNUSED and f.needle is not None:
            pos = doc.pos(("hz", "inputs", f.needle), key=True)
            hint = f"use it in the prompt as {{{{ inputs.{f.needle} }}}}, or remove it"
            out.append(
                Diagnostic(
                    f.code, f.message, doc.path, pos.line, pos.column, RULES[f.code].severity, hint
                )
            )
            continue
        line, col = locate(doc, f.line, f.needle)
        out.append(Diagnostic(f.code, f.message, doc.path, line, col, hint=f.hint))
    return out


def locate(doc: SourceDoc, template_line: int, needle: str | None) -> tuple[int, int]:
    """File line and column of ``template_line`` of the prompt (and of ``needle`` on it)."""
    info = doc.scalars.get(PROMPT)
    start = doc.pos(PROMPT)
    lines = doc.text.splitlines()
    if info is None or info.style not in ("|", ">"):
        # A flow scalar folds or escapes its line breaks: only its first line is reliable.
        text = lines[start.line - 1] if 0 < start.line <= len(lines) else ""
        at = text.find(needle, start.column - 1) if needle and template_line == 1 else -1
        return start.line, at + 1 if at >= 0 else start.column
    line = info.content_line + template_line - 1
    text = lines[line - 1] if 0 < line <= len(lines) else ""
    if needle and needle in text:
        return line, text.index(needle) + 1
    return line, len(text) - len(text.lstrip(" ")) + 1
