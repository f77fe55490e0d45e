"""The render sandbox: values are data, sizes are checked first, output is deterministic."""

from __future__ import annotations

import time
from typing import Any

import pytest

from hz.compiler.diagnostics import Diagnostic
from hz.compiler.render.packet import TemplatePlace, render_prompt

HINTS = {
    "dict": "e.g. | items, | dictsort, | length",
    "str": "e.g. | upper, | replace, | trim, | format",
    "list": "e.g. | join, | sort, | length",
}


def _render(template: str, **values: Any) -> tuple[str | None, list[Diagnostic]]:
    return render_prompt(template, values, TemplatePlace("demo.job.json"))


def _fails(code: str, message: str) -> tuple[None, list[Diagnostic]]:
    return None, [Diagnostic(code, message, "demo.job.json")]


METHOD_NAMES = ["items", "keys", "values", "get", "pop", "copy", "update", "clear", "setdefault"]


@pytest.mark.parametrize("name", METHOD_NAMES)
def test_inputs_named_after_dict_methods_are_their_values(name: str) -> None:
    assert _render(f"[{{{{ inputs.{name} }}}}]", **{name: "VAL"}) == ("[VAL]", [])
    assert _render(f"[{{{{ inputs['{name}'] }}}}]", **{name: "VAL"}) == ("[VAL]", [])


@pytest.mark.parametrize("name", METHOD_NAMES)
def test_keys_named_after_dict_methods_inside_values(name: str) -> None:
    template = f"{{% for x in inputs.rows %}}{{{{ x.{name} }}}},{{% endfor %}}"
    assert _render(template, rows=[{name: 1}, {name: None}]) == ("1,null,", [])


def test_an_array_input_named_items_is_iterated() -> None:
    template = "{% for x in inputs.items %}- {{ x }}\n{% endfor %}{{ inputs.items | length }}"
    assert _render(template, items=["a", "b"]) == ("- a\n- b\n2", [])


@pytest.mark.parametrize(
    ("template", "kind", "attribute"),
    [
        ("{{ inputs.items() }}", "dict", "items"),
        ("x\n{{ inputs.d.keys }}", "dict", "keys"),
        ("{{ inputs.d['get'] }}", "dict", "get"),
        ("{{ inputs | attr('values') }}", "dict", "values"),
        ("{{ inputs.s.upper() }}", "str", "upper"),
        ("{{ '{0:>5000000000}'.format(1) }}", "str", "format"),
        ("{{ inputs.l.append(1) }}", "list", "append"),
    ],
)
def test_values_have_no_methods(template: str, kind: str, attribute: str) -> None:
    line = template.count("\n") + 1
    message = (
        f"prompt line {line}: undefined: '{kind} object' has no attribute '{attribute}' "
        f"(values are data without methods: use a filter, {HINTS[kind]})"
    )
    assert _render(template, d={"a": 1}, s="x", l=[1]) == _fails("HZ707", message)


def test_a_missing_key_is_the_usual_undefined_error() -> None:
    assert _render("{{ inputs.d.nope }}", d={"a": 1}) == _fails(
        "HZ707", "prompt line 1: undefined: 'dict object' has no attribute 'nope'"
    )
    assert _render("{{ inputs.d.nope is defined }} {{ inputs.d.keys is defined }}", d={}) == (
        "false false",
        [],
    )


def test_underscored_keys_are_data_and_internals_stay_refused() -> None:
    assert _render("{{ inputs.d._id }}", d={"_id": 7}) == ("7", [])
    assert _render("{{ inputs.d.__class__ }}", d={"_id": 7}) == _fails(
        "HZ708",
        "prompt line 1: refused by the template sandbox: "
        "access to attribute '__class__' of 'dict' object is unsafe.",
    )


def test_filters_do_what_methods_did() -> None:
    template = (
        "{{ inputs.s | upper }} {% for k, v in inputs.d | items %}{{ k }}={{ v }}{% endfor %} "
        "{{ inputs.rows | map(attribute='items') | join(',') }} {{ '%s-%d' | format('a', 3) }}"
    )
    assert _render(template, s="x", d={"a": 1}, rows=[{"items": 2}, {"items": 3}]) == (
        "X a=1 2,3 a-3",
        [],
    )


def test_json_values_print_the_json_way() -> None:
    template = (
        "{{ inputs.n }} {{ inputs.t }} {{ inputs.f }} {{ inputs.l }} {{ inputs.d }} {{ 1.5 }}"
    )
    assert _render(template, n=None, t=True, f=False, l=[None, "é"], d={"k": [True]}) == (
        'null true false [null, "é"] {"k": [true]} 1.5',
        [],
    )
    # Values still act as themselves in tests and filters: only printing changes.
    assert _render(
        "{% if inputs.n is none %}{{ inputs.n | default('-', true) }}{% endif %}", n=None
    ) == (
        "-",
        [],
    )


BIG_WORK = [
    (
        "{{ ((10**1000)**1000)**1000 }}",
        "HZ708",
        "refused by the template sandbox: a power with more than 100,000 bits is not allowed",
    ),
    (
        "{% set n = 10**1000 %}{% set m = n*n*n*n*n*n*n*n*n*n %}{{ m * m * m * m }}",
        "HZ708",
        "refused by the template sandbox: a product of more than 100,000 bits is not allowed",
    ),
    (
        "{{ 'a'|indent(1000000000) }}",
        "HZ708",
        "refused by the template sandbox: "
        "the indent filter's argument 1,000,000,000 is larger than 100,000",
    ),
    (
        "{{ ('a\\n' * 500000) | indent('x' * 1000) }}",
        "HZ708",
        "refused by the template sandbox: the indented text would be larger than the prompt "
        "cap (1 MiB)",
    ),
    (
        "{{ ''|center(5000000000) }}",
        "HZ708",
        "refused by the template sandbox: "
        "the center filter's argument 5,000,000,000 is larger than 100,000",
    ),
    (
        "{{ range(100000)|map('string')|join('x'*100000) }}",
        "HZ708",
        "refused by the template sandbox: the joined text would be larger than the prompt "
        "cap (1 MiB)",
    ),
    (
        "{{ ('a' * 1000000) | replace('a', 'b' * 1000) }}",
        "HZ708",
        "refused by the template sandbox: the replaced text would be larger than the prompt "
        "cap (1 MiB)",
    ),
    (
        "{{ '%5000000000d' | format(1) }}",
        "HZ708",
        "refused by the template sandbox: "
        "a format width or precision of 5,000,000,000 is larger than 100,000",
    ),
    (
        "{{ '%.*f' | format(5000000000, 1) }}",
        "HZ708",
        "refused by the template sandbox: "
        "a format width or precision of 5,000,000,000 is larger than 100,000",
    ),
    (
        "{{ '%99999d' * 100 % 1 }}",
        "HZ708",
        "refused by the template sandbox: the formatted text would be larger than the prompt "
        "cap (1 MiB)",
    ),
    (
        "{{ range(1000000) | list | length }}",
        "HZ708",
        "refused by the template sandbox: range() argument 1,000,000 is larger than 100,000",
    ),
    (
        "{% set s = 'x' * 1000000 %}{{ s + s }}",
        "HZ708",
        "refused by the template sandbox: the concatenation would be larger than the prompt "
        "cap (1 MiB)",
    ),
    (
        # ~ is not an interceptable operator: the child's memory limit stops the doubling.
        "{% set ns = namespace(s='x') %}{% for i in range(40) %}"
        "{% set ns.s = ns.s ~ ns.s %}{% endfor %}{{ ns.s | length }}",
        "HZ708",
        "refused by the template sandbox: rendering needs more than 512 MiB of memory",
    ),
    ("{{ lipsum(1000000000) }}", "HZ707", "undefined: 'lipsum' is undefined"),
    ("{{ [1, 2] | random }}", "HZ707", "template syntax error: No filter named 'random'."),
]


@pytest.mark.parametrize(("template", "code", "message"), BIG_WORK)
def test_big_work_is_refused_promptly(template: str, code: str, message: str) -> None:
    started = time.monotonic()
    assert _render(template) == _fails(code, f"prompt line 1: {message}")
    assert time.monotonic() - started < 30  # bounded, not a speed goal


def test_data_numbers_of_any_size_still_format() -> None:
    template = (
        "{{ inputs.n }} {{ inputs.n | filesizeformat }} "
        "{{ '%d' | format(inputs.n) }} {{ '%d' % inputs.n }}"
    )
    assert _render(template, n=5_000_000_000) == (
        "5000000000 5.0 GB 5000000000 5000000000",
        [],
    )
    assert _render("{{ 10 ** 1000 > 0 }} {{ range(100000) | sum }}") == ("true 4999950000", [])
