"""The prompt template (HZ501-HZ505): syntax errors and names at lines of the YAML file."""

from __future__ import annotations

import textwrap

import pytest

from hz.compiler.checks.template import check_template, findings
from hz.compiler.load.loader import load_bytes


def found(text: str) -> list[tuple[str, int, int, str]]:
    doc, diags = load_bytes(textwrap.dedent(text).encode(), "c.yaml")
    assert diags == []
    assert doc is not None
    return [(d.code, d.line, d.column, d.message) for d in check_template(doc)]


HEAD = """\
hz:
  inputs:
    week: {schema: {}}
    issues: {schema: {}}
"""


def test_syntax_error_at_the_file_line_of_a_literal_block() -> None:
    text = HEAD + "prompt: |\n  line one\n  line two {{ inputs.week }\n  line three\n"
    assert found(text) == [
        ("HZ501", 7, 3, "prompt: template syntax error: unexpected '}'"),
    ]


def test_syntax_error_in_an_indented_block_with_indicator() -> None:
    text = HEAD + "prompt: |2\n    {% if %}\n"
    assert found(text) == [
        (
            "HZ501",
            6,
            5,
            "prompt: template syntax error: Expected an expression, got 'end of statement block'",
        ),
    ]


def test_flow_scalars_report_at_their_start() -> None:
    text = HEAD + 'prompt: "first {{ inputs.week }\\nsecond"\n'
    assert found(text) == [("HZ501", 5, 9, "prompt: template syntax error: unexpected '}'")]


def test_undeclared_inputs_in_both_forms_at_their_column() -> None:
    text = HEAD + "prompt: |\n  {{ inputs.weak }}\n  x {{ inputs['isues'] }} {{ inputs[k] }}\n"
    text = text.replace("prompt: |\n", "prompt: |\n  {% set k = 'week' %}\n")
    assert found(text) == [
        ("HZ502", 7, 6, "prompt: inputs.weak is not a declared input"),
        ("HZ502", 8, 8, "prompt: inputs.isues is not a declared input"),
    ]


def test_what_a_template_may_use() -> None:
    text = HEAD + textwrap.indent(
        textwrap.dedent(
            """\
            prompt: |
              {% set total = inputs.issues | length %}
              {% for issue in inputs.issues %}{{ loop.index }}/{{ total }} {{ issue.title }}
              {% endfor %}{% for i in range(3) %}{{ i is odd }}{% endfor %}
              {% macro bullet(text) %}- {{ text }}{% endmacro %}{{ bullet(inputs.week) }}
              {% set ns = namespace(n=0) %}{{ ns.n }} {{ inputs.week | tojson }}
            """
        ),
        "",
    )
    assert found(text) == []


def test_free_names_with_suggestions() -> None:
    doc, _ = load_bytes(
        (HEAD + "prompt: |\n  {{ week }} {{ input.week }} {{ zzz }}\n").encode(), "c"
    )
    assert doc is not None
    diags = [d for d in check_template(doc) if d.code == "HZ503"]
    assert [(d.code, d.column, d.message, d.hint) for d in diags] == [
        (
            "HZ503",
            6,
            "prompt: 'week' is not defined in the template",
            "inputs are reached through `inputs`: write inputs.week",
        ),
        ("HZ503", 17, "prompt: 'input' is not defined in the template", "did you mean inputs?"),
        (
            "HZ503",
            34,
            "prompt: 'zzz' is not defined in the template",
            "the template sees only `inputs` (the declared input values)",
        ),
    ]


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (
            "{% include 'a' %}",
            "prompt: include is not available: a prompt is one self-contained template",
        ),
        (
            "{% import 'a' as b %}",
            "prompt: import is not available: a prompt is one self-contained template",
        ),
        (
            "{% from 'a' import b %}",
            "prompt: from is not available: a prompt is one self-contained template",
        ),
        (
            "{% extends 'a' %}",
            "prompt: extends is not available: a prompt is one self-contained template",
        ),
        ("{{ inputs.week | shout }}", "prompt: unknown filter 'shout'"),
        ("{% filter shout %}x{% endfilter %}", "prompt: unknown filter 'shout'"),
        ("{{ inputs.week is loud }}", "prompt: unknown test 'loud'"),
    ],
)
def test_unavailable_statements_filters_and_tests(body: str, message: str) -> None:
    codes = found(HEAD + f"prompt: |\n  {body}\n")
    assert [(c, m) for c, _, _, m in codes if c in ("HZ504", "HZ505")] == [
        ("HZ505" if "available" in message else "HZ504", message)
    ]


def test_analysis_is_cached_per_text_and_inputs() -> None:
    findings.cache_clear()
    first = findings("{{ inputs.a }}", ("a",))
    assert findings("{{ inputs.a }}", ("a",)) is first
    assert findings("{{ inputs.a }}", ()) != first


def test_unused_input_is_a_warning_at_its_key() -> None:
    doc, _ = load_bytes((HEAD + "prompt: |\n  {{ inputs.week }}\n").encode(), "c.yaml")
    assert doc is not None
    (diag,) = check_template(doc)
    assert (diag.code, diag.severity, diag.line, diag.column) == ("HZ506", "warning", 4, 5)
    assert diag.message == "hz.inputs.issues is declared but the prompt never uses it"
    assert diag.hint == "use it in the prompt as {{ inputs.issues }}, or remove it"


@pytest.mark.parametrize(
    "body",
    [
        "{{ inputs.week }} {{ inputs['issues'] }}",
        "{{ inputs.week }} {{ inputs.isues }}",  # the typo is the error; no warning as well
        "{{ inputs.week }} {{ issues }}",
        "{% for k, v in inputs | items %}{{ v }}{% endfor %}",  # every input may be used
        "{{ inputs | tojson }}",
        "{% set k = 'issues' %}{{ inputs[k] }}",
    ],
)
def test_no_unused_warning_when_every_input_may_be_used(body: str) -> None:
    codes = [code for code, *_ in found(HEAD + f"prompt: |\n  {body}\n")]
    assert "HZ506" not in codes


def test_chance_helpers_are_refused_so_packets_stay_deterministic() -> None:
    body = "{{ lipsum(2) }} {{ inputs.issues | random }} {{ inputs.week | shuffle }}"
    doc, _ = load_bytes((HEAD + f"prompt: |\n  {body}\n").encode(), "c.yaml")
    assert doc is not None
    assert [(d.code, d.line, d.column, d.message, d.hint) for d in check_template(doc)] == [
        (
            "HZ504",
            6,
            38,
            "prompt: unknown filter 'random'",
            "the filter 'random' is not available: it gives different output on every render",
        ),
        (
            "HZ504",
            6,
            65,
            "prompt: unknown filter 'shuffle'",
            "the filter 'shuffle' is not available: it gives different output on every render",
        ),
        (
            "HZ503",
            6,
            6,
            "prompt: 'lipsum' is not defined in the template",
            "the function 'lipsum' is not available: it gives different output on every render",
        ),
    ]


@pytest.mark.parametrize("method", ["items", "keys", "values", "get"])
def test_mapping_methods_are_inputs_by_those_names(method: str) -> None:
    body = f"{{{{ inputs.week }}}} {{{{ inputs.issues }}}} {{{{ inputs.{method}() }}}}"
    doc, _ = load_bytes((HEAD + f"prompt: |\n  {body}\n").encode(), "c.yaml")
    assert doc is not None
    assert [(d.code, d.line, d.column, d.message, d.hint) for d in check_template(doc)] == [
        (
            "HZ502",
            6,
            44,
            f"prompt: inputs.{method} is not a declared input",
            "values are data without methods: use filters, e.g. `inputs | items` or "
            "`inputs | dictsort`, and inputs[name] for a computed name",
        )
    ]


def test_an_input_named_items_is_used_by_inputs_items() -> None:
    text = "hz:\n  inputs:\n    items: {schema: {}}\nprompt: |\n  {{ inputs.items }}\n"
    assert found(text) == []
