"""The three places a schema meets a value — a default at validate, an input value at render,
the model's JSON answer at run — end in a diagnostic or a typed result, never a hang or a
crash, and agree with each other."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

from hz.compiler.checks.io_schemas import check_inputs, check_output
from hz.compiler.diagnostics import Diagnostic
from hz.compiler.inputs.values import collect_inputs
from hz.compiler.load.loader import load_bytes
from hz.runtime.artifacts.canonical import sha256_hex
from hz.runtime.artifacts.models import (
    Budget,
    InputSpec,
    Job,
    OutputSpec,
    Packet,
    SourceRef,
    ToolProfile,
)
from hz.runtime.execution.execute import bind, execute
from hz.runtime.runners.protocol import RunRequest
from tests.helpers.run_request import runner_config

BACKTRACKING = "^(a|a)*$"
SLOW_VALUE = "a" * 40 + "b"


def validate(schema: Any, default: Any) -> list[tuple[str, int, int, str]]:
    text = textwrap.dedent(
        f"""\
        hz:
          inputs:
            v:
              schema: {json.dumps(schema)}
              default: {json.dumps(default)}
          output:
            format: json
            schema: {json.dumps(schema)}
        """
    )
    doc, diags = load_bytes(text.encode(), "c.yaml")
    assert (diags, doc is not None) == ([], True)
    assert doc is not None
    return [(d.code, d.line, d.column, d.message) for d in check_inputs(doc) + check_output(doc)]


def render(schema: Any, value: Any, tmp_path: Path) -> tuple[Diagnostic, ...]:
    (tmp_path / "in.json").write_text(json.dumps({"v": value}), encoding="utf-8")
    specs = {"v": InputSpec(schema_=schema)}
    return collect_inputs(
        specs, inputs_file=tmp_path / "in.json", input_args=(), target="job.json"
    )[1]


def answer(schema: Any, value: Any, tmp_path: Path) -> tuple[str, str | None, str | None]:
    draft = json.dumps(value)
    job = Job(
        name="answer",
        source=SourceRef(path="answer.yaml", sha256="0" * 64),
        timeout_seconds=30,
        tools=ToolProfile(tools=()),
        budget=Budget(max_usd=0.5),
        output=OutputSpec(format="json", schema_=schema),
        contract="Answer.",
        template=draft,
        hz_version="0.1.0",
    ).sealed()
    packet = Packet(
        job=job,
        prompt=draft,
        contract="Answer.",
        inputs_sha256="1" * 64,
        job_digest=job.digest,
        prompt_sha256=sha256_hex(draft),
    )
    result = execute(
        bind(runner_config("echo", {})), RunRequest.for_packet(packet, workdir=tmp_path)
    )
    return result.status, result.failure_kind, result.reason


def test_a_backtracking_pattern_is_a_diagnostic_at_validate() -> None:
    assert validate({"pattern": BACKTRACKING}, SLOW_VALUE) == [
        (
            "HZ401",
            4,
            15,
            "not a valid JSON Schema: hz.inputs.v.schema: the pattern '^(a|a)*$' took too long "
            "to evaluate (over 1 second of regex time); simplify it (nested repetition such as "
            "(a|a)* backtracks)",
        )
    ]


def test_a_backtracking_pattern_is_a_diagnostic_at_render(tmp_path: Path) -> None:
    assert render({"pattern": BACKTRACKING}, SLOW_VALUE, tmp_path) == (
        Diagnostic(
            "HZ702",
            "input 'v': cannot be checked against its schema: the pattern '^(a|a)*$' took too "
            "long to evaluate (over 1 second of regex time); simplify it (nested repetition "
            "such as (a|a)* backtracks)",
            str(tmp_path / "in.json"),
            1,
            7,
        ),
    )


def test_a_backtracking_pattern_is_schema_invalid_at_run(tmp_path: Path) -> None:
    schema = {"properties": {"v": {"pattern": BACKTRACKING}}}
    assert answer(schema, {"v": SLOW_VALUE}, tmp_path) == (
        "failed",
        "schema_invalid",
        "the draft could not be checked against the output schema: the pattern '^(a|a)*$' "
        "took too long to evaluate (over 1 second of regex time); simplify it (nested "
        "repetition such as (a|a)* backtracks)",
    )


def test_the_pattern_of_the_report_completes_everywhere(tmp_path: Path) -> None:
    # ^(a+)+$ hung Python's re; the engine answers it at once.
    assert validate({"pattern": "^(a+)+$"}, "a" * 40) == []
    assert render({"pattern": "^(a+)+$"}, SLOW_VALUE, tmp_path)[0].message == (
        f'input \'v\': "{SLOW_VALUE}" does not match the pattern "^(a+)+$"'
    )
    assert answer({"pattern": "^(a+)+$"}, SLOW_VALUE, tmp_path)[:2] == ("failed", "schema_invalid")


def test_a_pattern_of_3000_nested_groups_is_a_diagnostic() -> None:
    pattern = "(" * 3000 + "a" + ")" * 3000
    shown = "'" + "(" * 36 + "..."
    assert validate({"pattern": pattern}, "a") == [
        (
            "HZ401",
            4,
            27,
            f"not a valid JSON Schema: hz.inputs.v.schema.pattern: {shown} is not a valid regex: "
            "groups nested more than 100 deep",
        ),
        (
            "HZ403",
            8,
            25,
            f"not a valid JSON Schema: hz.output.schema.pattern: {shown} is not a valid regex: "
            "groups nested more than 100 deep",
        ),
    ]


def test_boolean_schemas_are_schemas(tmp_path: Path) -> None:
    assert validate(True, 1) == []
    assert validate(False, 1) == [
        (
            "HZ402",
            5,
            16,
            "the default does not match its schema: hz.inputs.v.default: the schema is false, "
            "which allows no value",
        )
    ]
    assert render(True, 1, tmp_path) == ()
    assert [d.message for d in render(False, 1, tmp_path)] == [
        "input 'v': the schema is false, which allows no value"
    ]
    assert answer(True, 1, tmp_path) == ("completed", None, None)
    assert answer(False, 1, tmp_path) == (
        "failed",
        "schema_invalid",
        "the draft does not match the output schema at $: False schema does not allow 1",
    )


def test_the_metaschema_resolves_offline() -> None:
    schema = {"$ref": "https://json-schema.org/draft/2020-12/schema"}
    assert validate(schema, {"type": "string"}) == []
    assert [d[:3] for d in validate(schema, {"type": 12})] == [("HZ402", 5, 25)]


def test_embedded_ids_resolve_and_other_documents_are_located_errors() -> None:
    embedded = {
        "$id": "https://example.com/root.json",
        "items": {"$ref": "item.json"},
        "$defs": {"i": {"$id": "item.json", "type": "integer"}},
    }
    assert validate(embedded, ["x"]) == [
        (
            "HZ402",
            5,
            17,
            "the default does not match its schema: hz.inputs.v.default[0]: expected an integer, "
            "got a string ('x')",
        )
    ]
    remote = {"$id": "https://example.com/root.json", "items": {"$ref": "tree.json"}}
    message = "hz.{}.schema.items.$ref: the reference 'tree.json' is outside this schema"
    assert validate(remote, [1]) == [
        ("HZ401", 4, 74, "not a valid JSON Schema: " + message.format("inputs.v")),
        ("HZ403", 8, 72, "not a valid JSON Schema: " + message.format("output")),
    ]


def test_a_format_regex_value_of_5000_nested_groups_is_a_diagnostic(tmp_path: Path) -> None:
    value = "(" * 5000 + ")" * 5000
    (diag,) = render({"format": "regex"}, value, tmp_path)
    assert (diag.code, diag.message) == (
        "HZ702",
        f"input 'v': \"{'(' * 58}… is not a valid regex: groups nested more than 100 deep",
    )


def test_a_boolean_output_schema_is_checked_by_hz_not_sent_to_the_agent_cli() -> None:
    from hz.runtime.runners.claude_code.argv import json_schema

    assert json_schema(OutputSpec(format="json", schema_=True)) is None
    assert json_schema(OutputSpec(format="json", schema_={"type": "object"})) == (
        '{"type":"object"}'
    )


def test_an_id_that_is_no_uri_is_a_diagnostic_not_a_crash() -> None:
    assert validate({"$id": "http://[x/", "$ref": "a.json"}, 1) == [
        (
            "HZ401",
            4,
            23,
            "not a valid JSON Schema: hz.inputs.v.schema.$id: 'http://[x/' is not a valid URI",
        ),
        (
            "HZ403",
            8,
            21,
            "not a valid JSON Schema: hz.output.schema.$id: 'http://[x/' is not a valid URI",
        ),
    ]


def test_a_schema_that_refers_to_itself_without_end_is_a_diagnostic(tmp_path: Path) -> None:
    endless = (
        "the schema refers to itself without end, or it or the value is nested too deeply to check"
    )
    assert validate({"$ref": "#"}, 1) == [
        ("HZ401", 4, 15, f"not a valid JSON Schema: hz.inputs.v.schema: {endless}")
    ]
    assert [d.message for d in render({"$ref": "#"}, 1, tmp_path)] == [
        f"input 'v': cannot be checked against its schema: {endless}"
    ]
    assert answer({"$ref": "#"}, 1, tmp_path) == (
        "failed",
        "schema_invalid",
        f"the draft could not be checked against the output schema: {endless}",
    )
