"""Input values: files and --input arguments, schema checks located in the inputs file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hz.compiler.diagnostics import Diagnostic
from hz.compiler.inputs.values import collect_inputs
from hz.runtime.artifacts.models import InputSpec

SPECS = {
    "issues": InputSpec(
        schema_={
            "type": "array",
            "items": {
                "type": "object",
                "required": ["title"],
                "properties": {"title": {"type": "string"}},
            },
        }
    ),
    "week": InputSpec(schema_={"type": "string"}, required=False, default="2026-W48"),
    "limit": InputSpec(schema_={"type": "integer"}, required=False, default=5),
}
TYPED = "input 'limit' has a schema type other than string, so its value is JSON"


@pytest.fixture(autouse=True)
def _here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # diagnostics name files as given: relative here


def collect(
    file: str | None = None, *args: str, specs: dict[str, InputSpec] = SPECS
) -> tuple[object, tuple[Diagnostic, ...]]:
    return collect_inputs(
        specs,
        inputs_file=Path(file) if file else None,
        input_args=args,
        target="job.json",
    )


def write(name: str, text: str) -> str:
    Path(name).write_text(text, encoding="utf-8")
    return name


def test_yaml_file_with_defaults_applied() -> None:
    write("in.yaml", "issues:\n  - title: One\n")
    assert collect("in.yaml") == (
        {"issues": [{"title": "One"}], "limit": 5, "week": "2026-W48"},
        (),
    )


def test_json_file_and_command_line_precedence(tmp_path: Path) -> None:
    write("in.json", json.dumps({"issues": [], "week": "W1", "limit": 1}))
    values, found = collect("in.json", "week=W2", "limit=7")
    assert (values, found) == ({"issues": [], "limit": 7, "week": "W2"}, ())


def test_yaml_value_fails_schema_at_its_line() -> None:
    write("in.yaml", "week: W1\nissues:\n  - title: ok\n  - title: 5\n  - {}\n")
    assert collect("in.yaml") == (
        None,
        (
            Diagnostic(
                "HZ702",
                "input 'issues[1].title': expected a string, got an integer (5)",
                "in.yaml",
                4,
                12,
                hint='quote it, as in "5"',
            ),
            Diagnostic(
                "HZ702", "input 'issues[2]': missing required key \"title\"", "in.yaml", 5, 5
            ),
        ),
    )


def test_json_value_fails_schema_at_its_position() -> None:
    write("in.json", '{\n  "issues": [{"title": "a"}, {"title": null}],\n  "limit": "3"\n}\n')
    assert collect("in.json")[1] == (
        Diagnostic(
            "HZ702", "input 'issues[1].title': expected a string, got null", "in.json", 2, 40
        ),
        Diagnostic(
            "HZ702", "input 'limit': expected an integer, got a string (\"3\")", "in.json", 3, 12
        ),
    )


def test_missing_required_input_is_reported_at_the_inputs_file() -> None:
    write("in.yaml", "week: W1\n")
    assert collect("in.yaml")[1] == (
        Diagnostic(
            "HZ703",
            "required input 'issues' has no value",
            "in.yaml",
            hint="set it in the inputs file or pass --input issues=…",
        ),
    )


def test_missing_required_input_without_inputs_file_is_reported_at_the_job() -> None:
    assert [(d.code, d.file) for d in collect()[1]] == [("HZ703", "job.json")]


def test_undeclared_inputs_are_located_at_their_key() -> None:
    write("in.yaml", "issues: []\nweeks: W1\nother: 1\n")
    assert collect("in.yaml", "extra=1")[1] == (
        Diagnostic(
            "HZ704",
            "input 'extra' is not declared by the job",
            "--input extra=1",
            hint="declared inputs: issues, limit, week",
            argument=True,
        ),
        Diagnostic(
            "HZ704",
            "input 'weeks' is not declared by the job",
            "in.yaml",
            2,
            1,
            hint="did you mean 'week'?",
        ),
        Diagnostic(
            "HZ704",
            "input 'other' is not declared by the job",
            "in.yaml",
            3,
            1,
            hint="declared inputs: issues, limit, week",
        ),
    )


@pytest.mark.parametrize(
    ("name", "text", "expected"),
    [
        (
            "in.json",
            '{"issues": [}',
            Diagnostic("HZ701", "not valid JSON: Expecting value", "in.json", 1, 13),
        ),
        (
            "in.json",
            "[1]",
            Diagnostic(
                "HZ701",
                "an inputs file holds one JSON object: input names to values",
                "in.json",
                1,
                1,
            ),
        ),
        (
            "in.json",
            '{"issues": [],\n "issues": []}',
            Diagnostic("HZ701", "duplicate key 'issues' in a JSON object", "in.json", 2, 2),
        ),
        (
            "in.json",
            '{"issues": [{"title": "a"},\n {"title": "b", "x": 1,\n  "title": "c"}]}',
            Diagnostic("HZ701", "duplicate key 'title' in a JSON object", "in.json", 3, 3),
        ),
        (
            "in.json",
            '{"limit": NaN}',
            Diagnostic("HZ701", "not valid JSON: NaN is not a JSON value", "in.json"),
        ),
        (
            "in.json",
            '{"week": "\\ud800"}',
            Diagnostic(
                "HZ701",
                "not valid JSON: a string holds a lone surrogate (\\ud800), which is not text",
                "in.json",
            ),
        ),
        (
            "in.json",
            '{"limit": ' + "1" * 4301 + "}",
            Diagnostic(
                "HZ701",
                "not valid JSON: an integer of 4301 digits (at most 4300 are read)",
                "in.json",
            ),
        ),
        (
            "in.json",
            '{"issues": ' + "[" * 65 + "]" * 65 + "}",
            Diagnostic("HZ701", "not valid JSON: nested more than 64 levels deep", "in.json"),
        ),
        (
            "in.yaml",
            "issues: [\n",
            Diagnostic(
                "HZ004",
                "YAML syntax error: did not find expected node content "
                "(while parsing a flow node at line 2, column 1)",
                "in.yaml",
                2,
                1,
            ),
        ),
    ],
)
def test_unusable_inputs_file(name: str, text: str, expected: Diagnostic) -> None:
    write(name, text)
    values, found = collect(name)
    assert values is None
    assert [(d.code, d.message, d.file, d.line, d.column) for d in found] == [
        (expected.code, expected.message, expected.file, expected.line, expected.column)
    ]


def test_unreadable_inputs_file() -> None:
    assert collect("absent.json") == (
        None,
        (Diagnostic("HZ701", "cannot read file: No such file or directory", "absent.json"),),
    )


def test_yaml_inputs_over_256_kib_point_to_json() -> None:
    write("big.yaml", "issues: []\n" + "#" * 300_000 + "\n")
    assert collect("big.yaml")[1] == (
        Diagnostic(
            "HZ701",
            "a YAML inputs file is limited to 256 KiB; write larger inputs as JSON",
            "big.yaml",
            hint="JSON inputs may be 8 MiB",
        ),
    )


def test_inputs_over_8_mib_in_total() -> None:
    half = json.dumps({"issues": [{"title": "x" * (4 * 1024 * 1024)}]})
    write("a.json", half)
    write("b.json", json.dumps([{"title": "y" * (4 * 1024 * 1024)}]))
    assert collect("a.json", "issues=@b.json")[1] == (
        Diagnostic(
            "HZ705",
            "inputs are larger than 8 MiB (8,388,608 bytes) in total",
            "b.json",
            hint="pass a smaller extract of the data; the prompt is capped at 1 MiB anyway",
        ),
    )


def test_a_large_json_file_within_the_cap_is_fine() -> None:
    issues = [{"title": f"issue {i}"} for i in range(100_000)]
    write("big.json", json.dumps({"issues": issues}))
    values, found = collect("big.json")
    assert found == ()
    assert isinstance(values, dict)
    assert len(values["issues"]) == 100_000


def test_command_line_values() -> None:
    write("issues.json", '[{"title": "from a file"}]')
    write("week.txt", "W9")
    values, found = collect(None, "issues=@issues.json", "week=@week.txt", "limit=2")
    assert (values, found) == (
        {"issues": [{"title": "from a file"}], "limit": 2, "week": "W9"},
        (),
    )


def test_string_inputs_stay_strings_and_at_at_escapes() -> None:
    values, _ = collect(None, "issues=[]", "week=@@home", "limit=3")
    assert values == {"issues": [], "limit": 3, "week": "@home"}
    values, _ = collect(None, "issues=[]", "week=5")
    assert values == {"issues": [], "limit": 5, "week": "5"}


def test_value_read_from_a_file_is_located_in_it() -> None:
    write("issues.json", '[\n  {"title": 1}\n]\n')
    assert collect(None, "issues=@issues.json")[1] == (
        Diagnostic(
            "HZ702",
            "input 'issues[0].title': expected a string, got an integer (1)",
            "issues.json",
            2,
            13,
            hint='quote it, as in "1"',
        ),
    )


def test_bad_input_arguments() -> None:
    write("bad.json", "[1,")
    found = collect(None, "issues=[]", "nonsense", "=x", "limit=ten", "week=@absent.txt")[1]
    found += collect(None, "issues=@bad.json")[1]
    assert found == (
        Diagnostic("HZ706", "not NAME=VALUE or NAME=@FILE", "--input =x", argument=True),
        Diagnostic(
            "HZ706",
            "not valid JSON: Expecting value",
            "--input limit=ten",
            hint=TYPED,
            argument=True,
        ),
        Diagnostic("HZ706", "not NAME=VALUE or NAME=@FILE", "--input nonsense", argument=True),
        Diagnostic("HZ701", "cannot read file: No such file or directory", "absent.txt"),
        Diagnostic(
            "HZ706",
            "--input issues: not valid JSON: Expecting value",
            "bad.json",
            1,
            4,
            hint="input 'issues' has a schema type other than string, so its value is JSON",
        ),
    )


def test_non_finite_numbers_are_not_json() -> None:
    specs = {"x": InputSpec(schema_={"type": "object"})}
    write("in.yaml", "x:\n  a: [1, .nan]\n")
    assert collect("in.yaml", specs=specs)[1] == (
        Diagnostic(
            "HZ702", "input 'x.a[1]': NaN and infinity are not JSON values", "in.yaml", 2, 10
        ),
    )


def test_many_errors_are_capped_per_input() -> None:
    write("in.json", json.dumps({"issues": [{"title": i} for i in range(25)]}))
    found = collect("in.json")[1]
    assert len(found) == 21
    more = Diagnostic("HZ702", "input 'issues': 5 more errors not shown", "in.json", 1, 12)
    assert more in found
    # The first twenty in index order are shown: items 0-19, not 20-24.
    assert "input 'issues[19].title': expected a string, got an integer (19)" in {
        d.message for d in found
    }
    assert "input 'issues[20].title': expected a string, got an integer (20)" not in {
        d.message for d in found
    }


def test_long_values_are_shortened_in_messages() -> None:
    specs = {"x": InputSpec(schema_={"type": "string", "not": {"type": "string"}})}
    write("in.json", json.dumps({"x": list(range(1000))}))
    (message,) = [d.message for d in collect("in.json", specs=specs)[1]]
    assert message == "input 'x': expected a string, got a list"
    specs = {"x": InputSpec(schema_={"type": "array", "items": {"type": "string"}, "maxItems": 2})}
    write("in.json", json.dumps({"x": ["x" * 1000] * 3}))
    (message,) = [d.message for d in collect("in.json", specs=specs)[1]]
    assert message == "input 'x': must have at most 2 items"
    specs = {"x": InputSpec(schema_={"enum": ["a"]})}
    write("in.json", json.dumps({"x": "y" * 1000}))
    (message,) = [d.message for d in collect("in.json", specs=specs)[1]]
    assert message == f'input \'x\': expected one of "a", got "{"y" * 58}…'


@pytest.mark.parametrize(
    ("schema", "value", "message"),
    [
        ({"type": "integer"}, True, "input 'x': expected an integer, got a boolean (true)"),
        ({"type": "string"}, None, "input 'x': expected a string, got null"),
        ({"type": "string", "format": "email"}, "nope", "input 'x': \"nope\" is not a valid email"),
        ({"const": False}, True, "input 'x': expected false, got true"),
        (
            {"type": "object", "additionalProperties": False},
            {"a": 1},
            "input 'x': unexpected key \"a\"",
        ),
        (
            {"type": "string", "pattern": "^[a-z]+$"},
            "A1",
            'input \'x\': "A1" does not match the pattern "^[a-z]+$"',
        ),
    ],
)
def test_values_are_written_as_json_in_messages(
    schema: dict[str, object], value: object, message: str
) -> None:
    specs = {"x": InputSpec(schema_=schema)}
    write("in.json", json.dumps({"x": value}))
    assert [d.message for d in collect("in.json", specs=specs)[1]] == [message]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "- week: W1\n",
            Diagnostic(
                "HZ701", "an inputs file holds one mapping: input names to values", "in.yaml", 1, 1
            ),
        ),
        (
            "",
            Diagnostic(
                "HZ701",
                "the inputs file is empty; it holds one mapping: input names to values",
                "in.yaml",
            ),
        ),
        (
            "issues:\n" + "  - 1\n" * 10_001,
            Diagnostic(
                "HZ701",
                "more than 10,000 YAML nodes in the file",
                "in.yaml",
                9_999,
                5,
                hint="write large inputs as JSON",
            ),
        ),
    ],
)
def test_yaml_loader_problems_are_worded_for_inputs(text: str, expected: Diagnostic) -> None:
    write("in.yaml", text)
    assert collect("in.yaml") == (None, (expected,))


def test_yaml_anchor_in_inputs_keeps_the_loader_code() -> None:
    write("in.yaml", "issues: &a []\nweek: *a\n")
    assert [d.code for d in collect("in.yaml")[1]] == ["HZ005"]


def test_text_that_is_not_utf8() -> None:
    Path("week.txt").write_bytes(b"W\xff")
    Path("in.json").write_bytes(b'{"week": "\xff"}')
    found = collect(None, "issues=[]", "week=@week.txt")[1] + collect("in.json")[1]
    assert found == (
        Diagnostic("HZ706", "--input week: the file is not UTF-8 text", "week.txt"),
        Diagnostic("HZ701", "file is not valid UTF-8: byte 0xff cannot be decoded", "in.json"),
    )


@pytest.mark.parametrize(
    ("fmt", "value", "valid"),
    [
        ("email", "nope", False),
        ("email", "me@example.org", True),
        ("date", "2026-13-45", False),
        ("date", "2026-11-29", True),
        ("ipv4", "300.1.1.1", False),
        ("uri-reference", "no spaces allowed", True),  # not asserted without rfc3987
    ],
)
def test_a_default_and_a_render_value_meet_the_same_format_checks(
    fmt: str, value: str, valid: bool
) -> None:
    from hz.compiler.checks.io_schemas import check_inputs
    from hz.compiler.load.loader import load_bytes

    schema = {"type": "string", "format": fmt}
    contract = (
        f"hz:\n  inputs:\n    x: {{schema: {json.dumps(schema)}, default: {json.dumps(value)}}}\n"
    )
    doc, _ = load_bytes(contract.encode(), "c.yaml")
    assert doc is not None
    as_default = check_inputs(doc)
    _, as_value = collect_inputs(
        {"x": InputSpec(schema_=schema)},
        inputs_file=None,
        input_args=[f"x={value}"],
        target="job.json",
    )
    assert (as_default == [], as_value == ()) == (valid, valid)
