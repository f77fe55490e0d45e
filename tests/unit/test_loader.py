"""The loader: JSON data, positions, YAML 1.2 core scalars and every HZ0xx refusal."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from hz.compiler.diagnostics import Diagnostic
from hz.compiler.load import loader
from hz.compiler.load.loader import MAX_BYTES, load_bytes, load_path, read_bytes
from hz.compiler.load.problems import LoadProblem
from hz.compiler.source import Pos, ScalarInfo

ANCHOR_HINT = "write the value out in full; hz refuses anchors and aliases"
UTF8_HINT = "hz reads contracts as UTF-8; save the file with that encoding"
DEPTH_HINT = "a contract is a shallow document; flatten this structure"
EMPTY = "the file is empty; a contract is a mapping with 'hz:', 'contract:' and 'prompt:'"


@pytest.fixture(params=["libyaml", "pure"])
def parser(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Run a test with libyaml's parser and again with PyYAML's pure-Python one."""
    if request.param == "pure":
        monkeypatch.setattr(loader, "_CParser", None)
    return str(request.param)


def errors(text: str | bytes) -> list[Diagnostic]:
    data = text.encode() if isinstance(text, str) else text
    doc, diagnostics = load_bytes(data, "c.yaml")
    assert doc is None
    return diagnostics


def one(text: str | bytes) -> Diagnostic:
    (diagnostic,) = errors(text)
    return diagnostic


def test_data_and_positions(parser: str) -> None:
    text = 'hz:\n  name: x\n  tools: [Read, "Grep"]\nprompt: |\n  Hello\n  world\n'
    doc, diagnostics = load_bytes(text.encode(), "c.yaml")
    assert diagnostics == []
    assert doc is not None
    assert doc.path == "c.yaml"
    assert doc.text == text
    assert doc.data == {
        "hz": {"name": "x", "tools": ["Read", "Grep"]},
        "prompt": "Hello\nworld\n",
    }
    assert doc.values == {
        (): Pos(1, 1),
        ("hz",): Pos(2, 3),
        ("hz", "name"): Pos(2, 9),
        ("hz", "tools"): Pos(3, 10),
        ("hz", "tools", 0): Pos(3, 11),
        ("hz", "tools", 1): Pos(3, 17),
        ("prompt",): Pos(4, 9),
    }
    assert doc.keys == {
        ("hz",): Pos(1, 1),
        ("hz", "name"): Pos(2, 3),
        ("hz", "tools"): Pos(3, 3),
        ("prompt",): Pos(4, 1),
    }
    assert doc.scalars == {
        ("hz", "name"): ScalarInfo(None, 2),
        ("hz", "tools", 0): ScalarInfo(None, 3),
        ("hz", "tools", 1): ScalarInfo('"', 3),
        ("prompt",): ScalarInfo("|", 5),
    }


def test_folded_block_scalar_content_line(parser: str) -> None:
    doc, _ = load_bytes(b"a: 1\nb: >-  # note\n\n  folded\n", "c.yaml")
    assert doc is not None
    assert doc.data["b"] == "\nfolded"
    assert doc.scalars[("b",)] == ScalarInfo(">", 3)


@pytest.mark.parametrize(
    ("plain", "value"),
    [
        ("", None),
        ("~", None),
        ("null", None),
        ("NULL", None),
        ("true", True),
        ("False", False),
        ("yes", "yes"),
        ("no", "no"),
        ("on", "on"),
        ("off", "off"),
        ("y", "y"),
        ("0", 0),
        ("-12", -12),
        ("+7", 7),
        ("012", 12),
        ("0o17", 15),
        ("0x1F", 31),
        ("0b101", "0b101"),
        ("1_000", "1_000"),
        ("1:30", "1:30"),
        ("1.5", 1.5),
        ("-.5e3", -500.0),
        ("1e3", 1000.0),
        ("+.inf", math.inf),
        ("-.Inf", -math.inf),
        ("2026-01-02", "2026-01-02"),
        ("2026-01-02T10:00:00Z", "2026-01-02T10:00:00Z"),
        ("nULL", "nULL"),
        ("tRUE", "tRUE"),
        ("0.5.1", "0.5.1"),
        ("1" * 5000, "1" * 5000),
    ],
)
def test_core_schema_scalars(plain: str, value: object, parser: str) -> None:
    doc, diagnostics = load_bytes(f"v: {plain}\nq: '{plain}'\n".encode(), "c.yaml")
    assert diagnostics == []
    assert doc is not None
    assert doc.data["v"] == value
    assert type(doc.data["v"]) is type(value)
    assert doc.data["q"] == plain


def test_nan_is_a_float(parser: str) -> None:
    doc, _ = load_bytes(b"v: .NaN\n", "c.yaml")
    assert doc is not None
    assert math.isnan(doc.data["v"])


def test_utf8_bom_is_dropped() -> None:
    doc, diagnostics = load_bytes("\ufeffa: é\n".encode(), "c.yaml")
    assert diagnostics == []
    assert doc is not None
    assert doc.data == {"a": "é"}
    assert doc.values[("a",)] == Pos(1, 4)


def test_unreadable_file(tmp_path: Path) -> None:
    missing = tmp_path / "gone.yaml"
    assert load_path(missing, "gone.yaml") == (
        None,
        [Diagnostic("HZ001", "cannot read file: No such file or directory", "gone.yaml")],
    )
    assert load_path(tmp_path) == (
        None,
        [Diagnostic("HZ001", "cannot read file: Is a directory", str(tmp_path))],
    )


def test_load_path_reads_a_file(tmp_path: Path) -> None:
    file = tmp_path / "c.yaml"
    file.write_text("a: 1\n")
    doc, diagnostics = load_path(file, "c.yaml")
    assert diagnostics == []
    assert doc is not None
    assert doc.path == "c.yaml"
    assert doc.data == {"a": 1}


def test_invalid_utf8_is_located() -> None:
    assert one(b"a: 1\nbb: \xc3\xa9\xff\n") == Diagnostic(
        "HZ002",
        "file is not valid UTF-8: byte 0xff cannot be decoded",
        "c.yaml",
        2,
        6,
        hint=UTF8_HINT,
    )


def test_utf16_gets_its_own_hint() -> None:
    assert one("a: 1\n".encode("utf-16")) == Diagnostic(
        "HZ002",
        "file is not valid UTF-8: byte 0xff cannot be decoded",
        "c.yaml",
        1,
        1,
        hint="the file looks like UTF-16; " + UTF8_HINT,
    )


def test_nul_and_control_characters() -> None:
    assert one(b"a: 1\nb: x\x00y\n") == Diagnostic(
        "HZ002",
        "file is binary, not UTF-8 text: it contains a NUL byte",
        "c.yaml",
        2,
        5,
        hint=UTF8_HINT,
    )
    assert one("é: \x1b[0m\n") == Diagnostic(
        "HZ002",
        "file is not UTF-8 text: control character U+001B is not allowed",
        "c.yaml",
        1,
        4,
        hint=UTF8_HINT,
    )


def test_size_limit() -> None:
    exact = b"a: " + b"x" * (MAX_BYTES - 4) + b"\n"
    assert len(exact) == MAX_BYTES
    assert load_bytes(exact, "c.yaml")[1] == []
    assert one(exact + b" ") == Diagnostic(
        "HZ003",
        "file is larger than 256 KiB (262,144 bytes), the limit for a contract",
        "c.yaml",
        hint="keep bulk data out of the contract: declare an input and pass it at render time",
    )


def test_syntax_error_libyaml(parser: str) -> None:
    message = {
        "libyaml": "YAML syntax error: mapping values are not allowed in this context",
        "pure": "YAML syntax error: mapping values are not allowed here",
    }[parser]
    hint = 'a value that holds ": " must be quoted, as in b: "c: d"'
    assert one("a: 1\nb: c: d\n") == Diagnostic("HZ004", message, "c.yaml", 2, 5, hint=hint)


@pytest.mark.parametrize(
    ("text", "where", "hint"),
    [
        (  # one space too many: read as the value of `name` going on, then a stray `:`
            "hz:\n  contract: 1\n  name: a\n   timeout: 1m\n",
            (4, 11),
            "check the indentation of line 4: it starts in column 4, line 3 above it in column 3; "
            "the keys of one mapping start in the same column",
        ),
        (  # one space too few, past a comment and a blank line
            "hz:\n  contract: 1\n  name: a\n  # the limit\n\n timeout: 1m\n",
            (6, 2),
            "check the indentation of line 6: it starts in column 2, line 3 above it in column 3; "
            "the keys of one mapping start in the same column",
        ),
        (  # a block scalar's text, then a key indented into nowhere
            "prompt: |\n  x\n y: 1\n",
            (3, 2),
            "check the indentation of line 3: it starts in column 2, line 2 above it in column 3; "
            "the keys of one mapping start in the same column",
        ),
        (  # a key in the column of a list's items
            "hz:\n  - a\n  b: 1\n",
            (3, 3),
            "check the indentation of line 3: it starts in column 3, line 2 above it in column 3; "
            'the items of one list start with "- " in the same column, and no key of a mapping '
            "stands in that column",
        ),
    ],
)
def test_bad_indentation_gets_a_hint_naming_the_columns(
    parser: str, text: str, where: tuple[int, int], hint: str
) -> None:
    diagnostic = one(text)
    assert (diagnostic.code, (diagnostic.line, diagnostic.column), diagnostic.hint) == (
        "HZ004",
        where,
        hint,
    )


def test_a_colon_in_a_long_or_quoted_value_is_hinted_without_an_example(parser: str) -> None:
    assert one('a: 1\nb: say "hi": now\n').hint == 'a value that holds ": " must be quoted'
    long = "x" * 70
    assert one(f"b: {long}: y\n").hint == 'a value that holds ": " must be quoted'


def test_an_error_past_the_layout_has_no_indentation_hint(parser: str) -> None:
    assert one("a: [1, 2\n").hint is None
    assert one('a: "open\n').hint is None


def test_syntax_error_with_context(parser: str) -> None:
    message = {
        "libyaml": "YAML syntax error: did not find expected ',' or ']' "
        "(while parsing a flow sequence at line 1, column 4)",
        "pure": "YAML syntax error: expected ',' or ']', but got '<stream end>' "
        "(while parsing a flow sequence at line 1, column 4)",
    }[parser]
    assert one("a: [1, 2\n") == Diagnostic("HZ004", message, "c.yaml", 2, 1)


def test_tab_indentation_gets_a_hint(parser: str) -> None:
    diagnostic = one("a:\n\tb: 1\n")
    assert (diagnostic.code, diagnostic.line, diagnostic.column, diagnostic.hint) == (
        "HZ004",
        2,
        1,
        "indent with spaces: YAML does not allow tabs for indentation",
    )


def test_anchor_and_alias(parser: str) -> None:
    assert errors("a: &x 1\nb: *x\n") == [
        Diagnostic(
            "HZ005", "anchor '&x' is not allowed in a contract", "c.yaml", 1, 4, hint=ANCHOR_HINT
        )
    ]
    # An alias to an undefined anchor is a syntax error in PyYAML only after composing; here
    # the alias event itself is refused.
    assert errors("a: 1\nb: [*y]\n") == [
        Diagnostic(
            "HZ005", "alias '*y' is not allowed in a contract", "c.yaml", 2, 5, hint=ANCHOR_HINT
        )
    ]


def test_billion_laughs_stops_at_the_first_anchor(parser: str) -> None:
    lines = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    lines += [
        f"{c}: &{c} [{','.join(['*' + p] * 9)}]"
        for p, c in zip("abcdefgh", "bcdefghi", strict=True)
    ]
    assert errors("\n".join(lines)) == [
        Diagnostic(
            "HZ005", "anchor '&a' is not allowed in a contract", "c.yaml", 1, 4, hint=ANCHOR_HINT
        )
    ]


def test_tags_are_collected(parser: str) -> None:
    hint = "remove the tag; quote the value if you mean a string"
    assert errors("a: !!str 1\nb: [!x y]\n") == [
        Diagnostic(
            "HZ006",
            "tag 'tag:yaml.org,2002:str' is not allowed in a contract",
            "c.yaml",
            1,
            4,
            hint=hint,
        ),
        Diagnostic("HZ006", "tag '!x' is not allowed in a contract", "c.yaml", 2, 5, hint=hint),
    ]


def test_duplicate_keys_at_the_second_occurrence(parser: str) -> None:
    hint = "YAML would silently keep only one of them; remove or rename one"
    assert errors("a: 1\nb:\n  c: 1\n  c: 2\na: 3\n") == [
        Diagnostic(
            "HZ007",
            "duplicate key 'c' (first defined at line 3, column 3)",
            "c.yaml",
            4,
            3,
            hint=hint,
        ),
        Diagnostic(
            "HZ007",
            "duplicate key 'a' (first defined at line 1, column 1)",
            "c.yaml",
            5,
            1,
            hint=hint,
        ),
    ]


def test_non_string_keys(parser: str) -> None:
    text = "1: a\ntrue: b\n~: c\n?\n: d\n'2': ok\n1.5: e\n? [x]\n: f\n{k: v}: g\n"
    scalar_keys = [("1", "an integer", 1, 1), ("true", "a boolean", 2, 1)]
    scalar_keys += [("~", "null", 3, 1), ("1.5", "a number", 7, 1)]
    expected = [
        Diagnostic(
            "HZ008",
            f"key '{key}' is {what}, not a string",
            "c.yaml",
            line,
            column,
            hint=f'quote the key ("{key}") if you mean it as text',
        )
        for key, what, line, column in scalar_keys
    ]
    expected.append(
        Diagnostic(
            "HZ008",
            "an empty key is null, not a string",
            "c.yaml",
            4,
            2,
            hint='quote the key ("") if you mean it as text',
        )
    )
    hint = "mapping keys in a contract are plain strings"
    expected.append(
        Diagnostic("HZ008", "key is a sequence, not a string", "c.yaml", 8, 3, hint=hint)
    )
    expected.append(
        Diagnostic("HZ008", "key is a mapping, not a string", "c.yaml", 10, 1, hint=hint)
    )
    assert sorted(errors(text), key=Diagnostic.sort_key) == sorted(
        expected, key=Diagnostic.sort_key
    )


@pytest.mark.parametrize(
    ("text", "found", "column"),
    [("- a\n", "a sequence", 1), ("hello\n", "a string", 1), ("--- 42\n", "an integer", 5)],
)
def test_top_level_must_be_a_mapping(text: str, found: str, column: int, parser: str) -> None:
    assert one(text) == Diagnostic(
        "HZ009",
        f"the top level of a contract must be a mapping, not {found}",
        "c.yaml",
        1,
        column,
        hint="a contract starts with the keys 'hz:', 'contract:' and 'prompt:'",
    )


@pytest.mark.parametrize("text", ["", "\n\n", "# only a comment\n", "---\n", "---\n...\n"])
def test_empty_document(text: str, parser: str) -> None:
    assert one(text) == Diagnostic("HZ010", EMPTY, "c.yaml")


def test_more_than_one_document(parser: str) -> None:
    assert one("a: 1\n---\nb: [\n") == Diagnostic(
        "HZ011",
        "more than one YAML document in the file; a contract is exactly one",
        "c.yaml",
        2,
        1,
        hint="remove this '---' and what follows, or put it in its own file",
    )


def test_depth_32_is_allowed_33_is_not(parser: str) -> None:
    # The top-level mapping is level 1, so 31 brackets make 32 levels.
    doc, diagnostics = load_bytes(b"a: " + b"[" * 31 + b"]" * 31, "c.yaml")
    assert diagnostics == []
    assert doc is not None
    assert one("a: " + "[" * 32 + "]" * 32) == Diagnostic(
        "HZ012", "nesting is deeper than 32 levels", "c.yaml", 1, 35, hint=DEPTH_HINT
    )


def test_deep_block_nesting(parser: str) -> None:
    text = "".join(" " * i + "k:\n" for i in range(40))
    assert one(text) == Diagnostic(
        "HZ012", "nesting is deeper than 32 levels", "c.yaml", 33, 33, hint=DEPTH_HINT
    )


def test_node_limit(parser: str) -> None:
    # The top mapping, the key and the sequence are 3 nodes; 9,997 items reach 10,000.
    doc, diagnostics = load_bytes(("a:\n" + "- 1\n" * 9997).encode(), "c.yaml")
    assert diagnostics == []
    assert doc is not None
    assert one("a:\n" + "- 1\n" * 9998) == Diagnostic(
        "HZ013",
        "more than 10,000 YAML nodes in the file",
        "c.yaml",
        9999,
        3,
        hint="a contract is small; move bulk data into an input fetched at render time",
    )


def test_problems_are_collected_until_a_fatal_one(parser: str) -> None:
    assert [d.code for d in errors("a: !t 1\na: 2\nb: &x 3\nc: !u 4\n")] == [
        "HZ006",
        "HZ007",
        "HZ005",
    ]


@pytest.mark.parametrize(
    ("text", "code", "line", "column"),
    [
        ("a: " + "[" * 5000, "HZ012", 1, 35),
        ("a: " + "{b: " * 5000, "HZ012", 1, 128),
        ("a:\n" + "  [\n" * 5000, "HZ012", 33, 3),
        ("[" * 5000, "HZ009", 1, 1),
    ],
)
def test_deeper_than_libyaml_allows(
    text: str, code: str, line: int, column: int, parser: str
) -> None:
    # libyaml gives up at 1000 levels before the 33rd reaches the composer; the loader
    # still reports the 33rd level (or whatever stops it first) at its position.
    diagnostic = one(text)
    assert (diagnostic.code, diagnostic.line, diagnostic.column) == (code, line, column)


def test_the_loader_reports_problems_as_data_for_its_caller_to_word() -> None:
    assert read_bytes(b"- a\n", "f.yaml") == (
        None,
        [LoadProblem("not_a_mapping", "f.yaml", 1, 1, {"found": "a sequence"})],
    )
    assert read_bytes(b"a: 1\na: 2\n", "f.yaml")[1] == [
        LoadProblem(
            "duplicate_key", "f.yaml", 2, 1, {"key": "a", "first_line": 1, "first_column": 1}
        )
    ]
