"""One walk over a parsed Jinja2 template, collecting what the template check reports.

Each result is ``(code, template_line, needle, message, hint)``; ``needle`` is text to look
for on that line to find the column.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from hz.compiler.rules.registry import HZ502, HZ503, HZ504, HZ505, HZ506
from hz.runtime.artifacts.suggest import closest, did_you_mean

if TYPE_CHECKING:
    from jinja2 import Environment, nodes

Raw = tuple[str, int, str | None, str, str | None]

#: The code of the one warning the template check gives: a declared input the prompt never uses.
UNUSED = HZ506
#: Mapping methods people reach for; values have none, so name the filters instead.
MAPPING_METHODS = frozenset({"items", "keys", "values", "get"})
#: Helpers Jinja has that hz removes: a packet must be the same on every render.
CHANCE_HINT = "{what} {name!r} is not available: it gives different output on every render"
#: Names Jinja itself provides inside templates, besides its globals.
SPECIAL = frozenset({"inputs", "loop", "caller", "varargs", "kwargs", "self", "super"})


def walk(tree: nodes.Node) -> Iterator[nodes.Node]:
    """Every node, depth first in source order, without recursion."""
    stack = [tree]
    while stack:
        node = stack.pop()
        yield node
        stack.extend(reversed(list(node.iter_child_nodes())))


def analyse(tree: nodes.Template, env: Environment, declared: tuple[str, ...]) -> list[Raw]:
    from jinja2 import nodes

    from hz.compiler.render.sandbox import NONDETERMINISTIC_FILTERS

    everything = list(walk(tree))
    out = []
    used: set[str] = set()
    for node in everything:
        if isinstance(node, (nodes.Getattr, nodes.Getitem)):
            ref = input_key(node)  # inputs.items is the input "items": values have no methods
            if ref is not None:
                # A misspelt reference counts as a use of the input it was meant for:
                # its error already says so, an "unused" warning would only repeat it.
                used.add(closest(ref[0], declared) or ref[0] if ref[0] not in declared else ref[0])
                out += _input_ref(node, ref, declared)
        elif isinstance(node, nodes.Filter) and node.name in NONDETERMINISTIC_FILTERS:
            hint = CHANCE_HINT.format(what="the filter", name=node.name)
            msg = f"prompt: unknown filter {node.name!r}"
            out.append((HZ504, node.lineno, node.name, msg, hint))
        elif isinstance(node, (nodes.Filter, nodes.Test)):
            out += _helper(node, env)
        elif isinstance(node, (nodes.Include, nodes.Import, nodes.FromImport, nodes.Extends)):
            word = {"FromImport": "from"}.get(type(node).__name__, type(node).__name__.lower())
            msg = f"prompt: {word} is not available: a prompt is one self-contained template"
            out.append((HZ505, node.lineno, word, msg, "put the text into the prompt itself"))
    out += _free_names(everything, env, declared)
    used |= {n.name for n in everything if isinstance(n, nodes.Name) and n.name in declared}
    uses = sum(1 for n in everything if isinstance(n, nodes.Name) and n.name == "inputs")
    keyed = sum(
        1 for n in everything if isinstance(n, (nodes.Getattr, nodes.Getitem)) and input_key(n)
    )
    if uses == keyed:  # every use names its input: an unnamed one is really unused
        out += [
            (UNUSED, 0, name, _unused_message(name), None) for name in declared if name not in used
        ]
    return out


def _unused_message(name: str) -> str:
    return f"hz.inputs.{name} is declared but the prompt never uses it"


def input_key(node: nodes.Getattr | nodes.Getitem) -> tuple[str, str] | None:
    """``(name, needle)`` when ``node`` is ``inputs.name`` or ``inputs['name']``."""
    from jinja2 import nodes

    if not (isinstance(node.node, nodes.Name) and node.node.name == "inputs"):
        return None
    if isinstance(node, nodes.Getattr):
        return str(node.attr), f"inputs.{node.attr}"
    if isinstance(node.arg, nodes.Const) and isinstance(node.arg.value, str):
        return node.arg.value, "inputs["
    return None  # a computed key cannot be checked before render


def _input_ref(
    node: nodes.Getattr | nodes.Getitem, ref: tuple[str, str], declared: tuple[str, ...]
) -> list[Raw]:
    name, needle = ref
    if name in declared:
        return []
    if name in MAPPING_METHODS:
        hint = (
            "values are data without methods: use filters, e.g. `inputs | items` or "
            "`inputs | dictsort`, and inputs[name] for a computed name"
        )
        return [
            (HZ502, node.lineno, needle, f"prompt: inputs.{name} is not a declared input", hint)
        ]
    hint = did_you_mean(name, declared) or (
        "declared inputs: " + ", ".join(declared) if declared else "declare it under hz.inputs"
    )
    return [(HZ502, node.lineno, needle, f"prompt: inputs.{name} is not a declared input", hint)]


def _helper(node: nodes.Filter | nodes.Test, env: Environment) -> list[Raw]:
    from jinja2 import nodes

    what, known = ("filter", env.filters) if isinstance(node, nodes.Filter) else ("test", env.tests)
    if node.name in known:
        return []
    hint = did_you_mean(node.name, known) or f"Jinja2's built-in {what}s are available"
    return [(HZ504, node.lineno, node.name, f"prompt: unknown {what} {node.name!r}", hint)]


def _free_names(
    everything: list[nodes.Node], env: Environment, declared: tuple[str, ...]
) -> list[Raw]:
    from jinja2 import nodes

    from hz.compiler.render.sandbox import NONDETERMINISTIC_GLOBALS

    # Scope-insensitive on purpose (a name set anywhere counts as defined): cheaper than
    # jinja2.meta, which runs the code generator, and it never flags a valid template.
    names = [n for n in everything if isinstance(n, nodes.Name)]
    bound = {n.name for n in names if n.ctx in ("store", "param")}
    bound |= {str(m.name) for m in everything if isinstance(m, nodes.Macro)}
    out: list[Raw] = []
    seen = set(bound) | SPECIAL | set(env.globals)
    for node in names:
        if node.ctx != "load" or node.name in seen:
            continue
        seen.add(node.name)
        if node.name in declared:
            hint = f"inputs are reached through `inputs`: write inputs.{node.name}"
        elif node.name in NONDETERMINISTIC_GLOBALS:
            hint = CHANCE_HINT.format(what="the function", name=node.name)
        else:
            guess = closest(node.name, ["inputs", *declared])
            hint = (
                f"did you mean {'inputs' if guess == 'inputs' else 'inputs.' + str(guess)}?"
                if guess
                else "the template sees only `inputs` (the declared input values)"
            )
        msg = f"prompt: {node.name!r} is not defined in the template"
        out.append((HZ503, node.lineno, node.name, msg, hint))
    return out
