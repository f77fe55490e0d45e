"""The prompt template: Jinja2 syntax, and names it may use, reported at lines of the file.

A template sees exactly one variable, ``inputs`` (the declared input values), plus Jinja's
own globals (``range``, ``loop`` inside a for, …) and built-in filters and tests. Anything
else would be undefined at render time, so it is an error here, before any run.
"""

from __future__ import annotations

import functools
from collections.abc import Collection
from typing import TYPE_CHECKING

from compiler.checks.common import get
from compiler.diagnostics import Diagnostic
from compiler.source import SourceDoc
from compiler.suggest import closest, did_you_mean

if TYPE_CHECKING:
    from jinja2 import Environment, nodes

PROMPT = ("prompt",)
#: Names Jinja itself provides inside templates, besides its globals.
_SPECIAL = frozenset({"inputs", "loop", "caller", "varargs", "kwargs", "self", "super"})


@functools.cache
def environment() -> Environment:
    from jinja2 import Environment

    # A prompt is plain text for a model, not HTML: escaping would corrupt it.
    return Environment(autoescape=False)  # noqa: S701


@functools.cache
def _builtin_names() -> frozenset[str]:
    return _SPECIAL | frozenset(environment().globals)


def check_template(doc: SourceDoc) -> list[Diagnostic]:
    from jinja2 import TemplateSyntaxError

    source = doc.data.get("prompt")
    if not isinstance(source, str):
        return []  # the schema reports it
    inputs = get(doc.data, "hz", "inputs")
    declared = [str(k) for k in inputs] if isinstance(inputs, dict) else []
    try:
        tree = environment().parse(source)
    except TemplateSyntaxError as e:
        line, col = _locate(doc, e.lineno or 1, None)
        return [
            Diagnostic(
                "HZ501",
                f"prompt: template syntax error: {e.message}",
                doc.path,
                line,
                col,
                hint="the prompt is a Jinja2 template: {{ expression }}, "
                "{% statement %} … {% endstatement %}, {# comment #}",
            )
        ]
    out = _input_refs(doc, tree, declared)
    out += _free_names(doc, tree, declared)
    out += _unknown_helpers(doc, tree)
    return out


def _locate(doc: SourceDoc, template_line: int, needle: str | None) -> tuple[int, int]:
    """File line and column of ``template_line`` of the prompt (and of ``needle`` on it)."""
    info = doc.scalars.get(PROMPT)
    start = doc.pos(PROMPT)
    if info is None or info.style not in ("|", ">"):
        # A flow scalar folds or escapes its line breaks: only its start is reliable.
        return start.line, start.column
    line = info.content_line + template_line - 1
    lines = doc.text.splitlines()
    text = lines[line - 1] if 0 < line <= len(lines) else ""
    if needle and needle in text:
        return line, text.index(needle) + 1
    return line, len(text) - len(text.lstrip(" ")) + 1


def _at(
    doc: SourceDoc, node: nodes.Node, needle: str, code: str, msg: str, hint: str | None
) -> Diagnostic:
    line, col = _locate(doc, node.lineno, needle)
    return Diagnostic(code, msg, doc.path, line, col, hint=hint)


def _input_refs(doc: SourceDoc, tree: nodes.Template, declared: list[str]) -> list[Diagnostic]:
    from jinja2 import nodes

    out = []
    for node in tree.find_all((nodes.Getattr, nodes.Getitem)):
        assert isinstance(node, (nodes.Getattr, nodes.Getitem))
        if not (isinstance(node.node, nodes.Name) and node.node.name == "inputs"):
            continue
        if isinstance(node, nodes.Getattr):
            name, needle = str(node.attr), f"inputs.{node.attr}"
        elif isinstance(node.arg, nodes.Const) and isinstance(node.arg.value, str):
            name, needle = node.arg.value, "inputs["
        else:
            continue  # a computed key cannot be checked before render
        if name in declared:
            continue
        hint = did_you_mean(name, declared) or (
            "declared inputs: " + ", ".join(declared) if declared else "declare it under hz.inputs"
        )
        msg = f"prompt: inputs.{name} is not a declared input"
        out.append(_at(doc, node, needle, "HZ502", msg, hint))
    return out


def _free_names(doc: SourceDoc, tree: nodes.Template, declared: list[str]) -> list[Diagnostic]:
    from jinja2 import nodes

    # Scope-insensitive on purpose (a name set anywhere counts as defined): cheaper than
    # jinja2.meta, which runs the code generator, and it never flags a valid template.
    names = list(tree.find_all(nodes.Name))
    bound = {n.name for n in names if n.ctx in ("store", "param")}
    bound |= {str(m.name) for m in tree.find_all(nodes.Macro)}
    unknown = {n.name for n in names if n.ctx == "load"} - bound - _builtin_names()
    out = []
    seen: set[str] = set()
    for node in tree.find_all(nodes.Name):
        if node.name not in unknown or node.name in seen:
            continue
        seen.add(node.name)
        if node.name in declared:
            hint = f"inputs are reached through `inputs`: write inputs.{node.name}"
        else:
            guess = closest(node.name, ["inputs", *declared])
            hint = (
                f"did you mean {'inputs' if guess == 'inputs' else 'inputs.' + str(guess)}?"
                if guess
                else "the template sees only `inputs` (the declared input values)"
            )
        msg = f"prompt: {node.name!r} is not defined in the template"
        out.append(_at(doc, node, node.name, "HZ503", msg, hint))
    return out


def _unknown_helpers(doc: SourceDoc, tree: nodes.Template) -> list[Diagnostic]:
    from jinja2 import nodes

    env = environment()
    out = []
    kinds: tuple[tuple[type[nodes.Node], Collection[str], str], ...] = (
        (nodes.Filter, env.filters, "filter"),
        (nodes.Test, env.tests, "test"),
    )
    for cls, known, what in kinds:
        for node in tree.find_all(cls):
            name = getattr(node, "name", "")
            if name in known:
                continue
            hint = did_you_mean(name, known) or f"Jinja2's built-in {what}s are available"
            msg = f"prompt: unknown {what} {name!r}"
            out.append(_at(doc, node, name, "HZ504", msg, hint))
    statements = (nodes.Include, nodes.Import, nodes.FromImport, nodes.Extends)
    for node in tree.find_all(statements):
        word = type(node).__name__.lower().replace("fromimport", "from")
        msg = f"prompt: {word} is not available: a prompt is one self-contained template"
        out.append(_at(doc, node, word, "HZ505", msg, "put the text into the prompt itself"))
    return out
