"""Input and output declarations (HZ401-HZ404): schemas are JSON Schema, defaults fit."""

from __future__ import annotations

import textwrap

from hz.compiler.checks.io_schemas import check_inputs, check_output
from hz.compiler.load.loader import load_bytes


def found(text: str) -> list[tuple[str, int, int, str]]:
    doc, diags = load_bytes(textwrap.dedent(text).encode(), "c.yaml")
    assert diags == []
    assert doc is not None
    return [(d.code, d.line, d.column, d.message) for d in check_inputs(doc) + check_output(doc)]


def test_metaschema_errors_at_the_offending_sub_node() -> None:
    text = """\
    hz:
      inputs:
        items:
          schema:
            type: array
            items:
              type: object
              properties:
                n: {type: integr}
    """
    assert found(text) == [
        (
            "HZ401",
            9,
            23,
            "not a valid JSON Schema: hz.inputs.items.schema.items.properties.n.type: expected "
            "one of 'array', 'boolean', 'integer', 'null', 'number', 'object', 'string', got "
            "'integr' (and 1 other alternative did not match)",
        )
    ]


def test_default_checked_only_against_a_valid_schema() -> None:
    text = """\
    hz:
      inputs:
        a: {schema: {type: nope}, default: 1}
        b: {schema: {type: object, required: [x]}, default: {y: 1}}
        c: {schema: {type: array, items: {maximum: 3}}, default: [1, 5]}
        d: {schema: {type: string}, default: ok}
    """
    assert [(c, line, col) for c, line, col, _ in found(text)] == [
        ("HZ401", 3, 24),
        ("HZ402", 4, 57),
        ("HZ402", 5, 66),
    ]
    assert found(text)[1][3] == (
        "the default does not match its schema: hz.inputs.b.default: missing required key 'x'"
    )


def test_each_missing_required_key_is_named() -> None:
    text = """\
    hz:
      inputs:
        b: {schema: {type: object, required: [x, "it's", y]}, default: {y: 1}}
    """
    assert [message for _, _, _, message in found(text)] == [
        "the default does not match its schema: hz.inputs.b.default: missing required key 'x'",
        'the default does not match its schema: hz.inputs.b.default: missing required key "it\'s"',
    ]


def test_references_must_resolve_inside_the_schema() -> None:
    text = """\
    hz:
      inputs:
        a:
          schema: {$ref: "https://example.invalid/schema.json"}
          default: 1
        b:
          schema:
            items: {$ref: "#/$defs/item"}
            $defs: {thing: {}}
        c:
          schema:
            items: {$ref: "#/$defs/item"}
            $defs: {item: {type: string}}
            enum: [{$ref: "data, not a reference"}]
    """
    assert found(text) == [
        (
            "HZ401",
            4,
            22,
            "not a valid JSON Schema: hz.inputs.a.schema.$ref: the reference "
            "'https://example.invalid/schema.json' is outside this schema",
        ),
        (
            "HZ401",
            8,
            23,
            "not a valid JSON Schema: hz.inputs.b.schema.items.$ref: the reference "
            "'#/$defs/item' points at nothing",
        ),
    ]


def test_an_unresolvable_anchor_is_found_statically_at_the_reference() -> None:
    text = """\
    hz:
      inputs:
        a:
          schema: {$ref: "#nowhere"}
          default: 1
    """
    assert found(text) == [
        (
            "HZ401",
            4,
            22,
            "not a valid JSON Schema: hz.inputs.a.schema.$ref: the reference '#nowhere' "
            "points at nothing",
        )
    ]


def test_broken_regex_is_a_schema_error() -> None:
    text = """\
    hz:
      inputs:
        a: {schema: {pattern: "[a-"}, default: x}
    """
    assert found(text) == [
        (
            "HZ401",
            3,
            27,
            "not a valid JSON Schema: hz.inputs.a.schema.pattern: '[a-' is not a valid regex: "
            "unterminated character class at position 3",
        )
    ]


def test_output_schema_needs_json_and_must_be_valid() -> None:
    text = """\
    hz:
      output:
        format: text
        schema: {type: object, properties: []}
    """
    assert found(text) == [
        ("HZ404", 4, 5, "hz.output.schema needs format json, but the format is 'text'"),
        (
            "HZ403",
            4,
            40,
            "not a valid JSON Schema: hz.output.schema.properties: expected a mapping, got a list",
        ),
    ]


def test_output_schema_with_json_is_fine() -> None:
    assert found("hz: {output: {format: json, schema: {type: object}}}\n") == []


def test_shapes_left_to_the_schema_are_skipped() -> None:
    text = """\
    hz:
      inputs: {a: 1, b: {schema: 2}, c: {default: 1}}
      output: {format: 3, schema: 4}
    """
    assert found(text) == []


def test_defaults_are_checked_with_format_assertions() -> None:
    text = """\
    hz:
      inputs:
        to: {schema: {type: string, format: email}, default: nope}
        day: {schema: {type: string, format: date}, default: "2026-13-45"}
        ok: {schema: {type: string, format: date}, default: "2026-11-29"}
        me: {schema: {type: string, format: email}, default: me@example.org}
    """
    assert found(text) == [
        (
            "HZ402",
            3,
            58,
            "the default does not match its schema: hz.inputs.to.default: 'nope' is not a "
            "valid email",
        ),
        (
            "HZ402",
            4,
            58,
            "the default does not match its schema: hz.inputs.day.default: '2026-13-45' is not "
            "a valid date",
        ),
    ]
