"""Inputs read through a capability operation (HZ410-HZ415): each rule's exact message, hint
and position, against hz's catalog or one passed in."""

from __future__ import annotations

import json
import re
import textwrap
from collections.abc import Mapping

import pytest

from hz.compiler.load.loader import load_bytes
from hz.compiler.validate import validate_source
from hz.runtime.artifacts.operations import CATALOG, Operation

Found = tuple[str, int, int, str, str | None]
LISTS = "`hz providers` lists every operation with its arguments"
TAKERS = "code-host.merged_pull_requests, git.changed_files, git.log, tracker.issues_updated"


def contract(inputs: str) -> str:
    """A contract whose ``hz.inputs`` is ``inputs`` (its lines start at line 6, column 5)."""
    body = textwrap.indent(textwrap.dedent(inputs), "    ")
    return (
        "hz:\n  contract: 1\n  name: digest\n  timeout: 10m\n  inputs:\n"
        f"{body}  agent:\n    max_usd: 0.5\n"
        "contract: Be brief.\nprompt: '{{ inputs | tojson }}'\n"
    )


def found(inputs: str, operations: Mapping[str, Operation] = CATALOG) -> list[Found]:
    doc, problems = load_bytes(contract(inputs).encode(), "c.yaml")
    assert problems == []
    assert doc is not None
    _, diags = validate_source(doc, operations=operations)
    return [(d.code, d.line, d.column, d.message, d.hint) for d in diags]


def test_a_contract_with_reads_is_valid() -> None:
    assert (
        found("""\
        merged:
          read: code-host.merged_pull_requests
          args: {repository: acme/app}
          window: 7d
        commits:
          read: git.log
          window: since-last-success
        notes:
          read: files.glob
          args: {pattern: "docs/*.md"}
          schema: {type: array, items: {type: object}}
        """)
        == []
    )


def test_hz410_unknown_operation_with_did_you_mean() -> None:
    assert found("""\
    merged:
      read: code-host.merged_pulls
    commits:
      read: Git.Log
    notes:
      read: wiki.pages
    """) == [
        (
            "HZ410",
            7,
            13,
            "hz.inputs.merged.read: unknown operation 'code-host.merged_pulls'",
            "did you mean 'code-host.merged_pull_requests'? (code-host's operations: "
            f"code-host.merged_pull_requests, code-host.pull_request; {LISTS})",
        ),
        (
            "HZ410",
            9,
            13,
            "hz.inputs.commits.read: unknown operation 'Git.Log'",
            f"did you mean 'git.log'? ({LISTS})",
        ),
        ("HZ410", 11, 13, "hz.inputs.notes.read: unknown operation 'wiki.pages'", LISTS),
    ]


def test_hz410_an_operation_name_out_of_form_is_unknown_not_a_pattern_error() -> None:
    # The schema's pattern error is HZ410's: one diagnostic, with the did-you-mean.
    assert found("""\
    merged:
      read: code_host.merged_pull_requests
    """) == [
        (
            "HZ410",
            7,
            13,
            "hz.inputs.merged.read: unknown operation 'code_host.merged_pull_requests'",
            f"did you mean 'code-host.merged_pull_requests'? ({LISTS})",
        )
    ]


def test_a_read_that_is_no_string_or_too_long_is_the_schemas() -> None:
    long = "a." + "b" * 130
    assert [(c, m) for c, _, _, m, _ in found(f"x: {{read: 7}}\ny: {{read: {long}}}\n")] == [
        ("HZ103", "hz.inputs.x.read: expected a string, got an integer (7)"),
        ("HZ104", "hz.inputs.y.read: is longer than 128 characters"),
    ]


def test_the_operations_checked_are_the_ones_passed_in() -> None:
    jira = Operation(
        "tracker.jira_issues",
        "the operator's tracker",
        {"type": "object", "properties": {"project": {"type": "string"}}},
        {"type": "array"},
        window=True,
    )
    text = """\
    issues:
      read: tracker.jira_issues
      args: {project: APP}
      window: 2w
    """
    assert found(text, {**CATALOG, jira.name: jira}) == []
    assert found(text) == [
        (
            "HZ410",
            7,
            13,
            "hz.inputs.issues.read: unknown operation 'tracker.jira_issues'",
            f"did you mean 'tracker.issue'? (tracker's operations: tracker.issue, "
            f"tracker.issues_updated; {LISTS})",
        )
    ]
    assert found("i: {read: tracker.jira_issue}\n", {jira.name: jira})[0][4] == (
        f"did you mean 'tracker.jira_issues'? (tracker's operations: tracker.jira_issues; {LISTS})"
    )


def test_hz411_unknown_argument_with_did_you_mean_said_once() -> None:
    # `repo` is `repository` misspelt: the required argument is not said missing as well.
    assert found("""\
    merged:
      read: code-host.merged_pull_requests
      args: {repo: acme/app, bse: main}
    """) == [
        (
            "HZ411",
            8,
            14,
            "hz.inputs.merged.args: code-host.merged_pull_requests takes no argument 'repo'",
            "did you mean 'repository'? (its arguments: repository, base)",
        ),
        (
            "HZ411",
            8,
            30,
            "hz.inputs.merged.args: code-host.merged_pull_requests takes no argument 'bse'",
            "did you mean 'base'? (its arguments: repository, base)",
        ),
    ]


def test_hz411_an_argument_nothing_resembles() -> None:
    assert found("n: {read: files.read, args: {path: a.md, encoding: utf-8}}\n") == [
        (
            "HZ411",
            6,
            46,
            "hz.inputs.n.args: files.read takes no argument 'encoding'",
            "its arguments: path",
        )
    ]


def test_hz411_missing_argument_at_args_or_at_read() -> None:
    assert found("""\
    pull:
      read: code-host.pull_request
      args: {repository: acme/app}
    diff:
      read: git.diff
    """) == [
        (
            "HZ411",
            8,
            7,
            "hz.inputs.pull.args: code-host.pull_request needs the argument 'number'",
            "add it, as in args: {number: 42}",
        ),
        (
            "HZ411",
            10,
            7,
            "hz.inputs.diff.args: git.diff needs the argument 'range'",
            "a revision range such as main..HEAD (never an option or a path); add it, as "
            "in args: "
            "{range: main..HEAD}",
        ),
    ]


def test_hz411_wrong_type_and_form_at_the_value() -> None:
    assert found("""\
    pull:
      read: code-host.pull_request
      args:
        repository: acme
        number: "42"
    issues:
      read: tracker.issues_updated
      args: {repository: acme/app, state: opne, labels: bug}
    """) == [
        (
            "HZ411",
            9,
            21,
            "hz.inputs.pull.args.repository: 'acme' is not in the expected form",
            "owner/name",
        ),
        (
            "HZ411",
            10,
            17,
            "hz.inputs.pull.args.number: expected an integer, got a string ('42')",
            "write it without quotes, as in number: 42",
        ),
        (
            "HZ411",
            13,
            43,
            "hz.inputs.issues.args.state: expected one of 'open', 'closed', 'all', got 'opne'",
            "did you mean 'open'?",
        ),
        (
            "HZ411",
            13,
            57,
            "hz.inputs.issues.args.labels: expected a list, got a string ('bug')",
            None,
        ),
    ]


RANGE_HINT = "a revision range such as main..HEAD (never an option or a path)"


@pytest.mark.parametrize(
    "text",
    ["/etc/../etc/passwd", "x/..", "main..x/../y", "../etc", "..", "main..-x", "a b", "a..b..c"],
)
def test_hz411_a_range_that_names_a_path_or_no_revisions(text: str) -> None:
    # The providers refuse these when they fetch (HZ727); a contract is refused when it is
    # validated, at the argument.
    assert found(f"d: {{read: git.diff, args: {{range: {json.dumps(text)}}}}}\n") == [
        (
            "HZ411",
            6,
            39,
            f"hz.inputs.d.args.range: {text!r} is not in the expected form",
            RANGE_HINT,
        )
    ]


@pytest.mark.parametrize("text", ["main..HEAD", "v1.2...v1.3", "HEAD~3", "origin/main..", "..v1.0"])
def test_a_range_of_revisions_is_valid(text: str) -> None:
    assert found(f"d: {{read: git.diff, args: {{range: {json.dumps(text)}}}}}\n") == []


@pytest.mark.parametrize("text", ["acme/..", "acme/.", "../app", "./app"])
def test_hz411_a_repository_named_dot_or_dot_dot(text: str) -> None:
    assert found(
        f"p: {{read: code-host.pull_request, args: {{repository: {text!r}, number: 1}}}}\n"
    ) == [
        (
            "HZ411",
            6,
            58,
            f"hz.inputs.p.args.repository: {text!r} is not in the expected form",
            "owner/name",
        )
    ]


def _patterns(schema: object) -> list[str]:
    if isinstance(schema, dict):
        found = [schema["pattern"]] if isinstance(schema.get("pattern"), str) else []
        return found + [p for value in schema.values() for p in _patterns(value)]
    if isinstance(schema, list):
        return [p for value in schema for p in _patterns(value)]
    return []


#: Texts on which the catalog's patterns must agree between ECMA-262 (how the contract's
#: arguments are checked) and Python's re (what a provider or a reader of the docs may use).
TEXTS = [
    "main..HEAD",
    "acme/app",
    "acme/app\n",
    "a\u00a0b",
    "a\u3000b",
    "a\x85b",
    "a\u2028b",
    "a\rb",
    "x/..",
    "acme/..",
    "\u0663",
    "é/é",
    "a_b/c-d.e",
    "main\n..HEAD",
]


def test_the_catalogs_patterns_mean_the_same_to_python_and_to_ecma_262() -> None:
    from hz.runtime.jsonschema.ecma import search

    patterns = {p for op in CATALOG.values() for p in _patterns(dict(op.args))}
    assert len(patterns) == 2  # range, repository
    for pattern in patterns:
        assert not re.search(r"\\[dDwWsSbB]", pattern), pattern
        assert pattern.startswith("^"), pattern
        assert pattern.endswith("$(?!\\n)"), pattern
        for text in TEXTS:
            assert bool(re.search(pattern, text)) == search(pattern, text), (pattern, text)


def test_hz411_an_argument_schema_that_cannot_be_used() -> None:
    broken = Operation(
        "command.report",
        "an operator's command",
        {"type": "object", "properties": {"x": {"pattern": "("}}},
        {"type": "object"},
    )
    assert found("r: {read: command.report, args: {x: y}}\n", {broken.name: broken}) == [
        (
            "HZ411",
            6,
            31,
            "hz.inputs.r.args: command.report's argument schema cannot be used: a pattern is "
            "not a valid ECMA-262 regular expression: missing )",
            None,
        )
    ]


def test_an_argument_name_over_64_characters() -> None:
    name = "a" * 65
    assert found(f"n: {{read: files.read, args: {{path: x, {name}: 1}}}}\n")[0] == (
        "HZ104",
        6,
        43,
        f"hz.inputs.n.args: '{'a' * 36}... is not a valid argument name",  # cut short
        "an argument name has 1 to 64 characters",
    )


def test_hz412_a_window_the_operation_does_not_take() -> None:
    assert found("n: {read: files.glob, args: {pattern: '*.md'}, window: 7d}\n") == [
        (
            "HZ412",
            6,
            52,
            "hz.inputs.n.window: files.glob takes no window",
            f"remove it (the operations that take one: {TAKERS})",
        )
    ]


@pytest.mark.parametrize(
    ("window", "message", "hint"),
    [
        (
            "7 days",
            "'7 days' is not a window: write a count and a unit (m, h, d or w) such as '24h', "
            "'7d' or '2w', or 'since-last-success'",
            None,
        ),
        (
            "since-last-sucess",
            "'since-last-sucess' is not a window: write a count and a unit (m, h, d or w) such "
            "as '24h', '7d' or '2w', or 'since-last-success'",
            "did you mean 'since-last-success'?",
        ),
        ("53w", "'53w' is longer than 366 days", None),
        (
            "0d",
            "'0d' is not a window: write a count and a unit (m, h, d or w) such as '24h', "
            "'7d' or '2w', or 'since-last-success'",
            None,
        ),
        (
            "x" * 100,
            f"'{'x' * 37}...' is not a window: write a count and a unit (m, h, d or w) such as "
            "'24h', '7d' or '2w', or 'since-last-success'",
            None,
        ),
    ],
)
def test_hz412_a_bad_window(window: str, message: str, hint: str | None) -> None:
    assert found(f"c: {{read: git.log, window: '{window}'}}\n") == [
        ("HZ412", 6, 32, f"hz.inputs.c.window: {message}", hint)
    ]


def test_hz412_the_longest_windows_that_hold() -> None:
    assert found("a: {read: git.log, window: 366d}\nb: {read: git.log, window: 527040m}\n") == []


def test_hz412_a_bad_window_of_an_unknown_operation_is_said_too() -> None:
    assert [c for c, *_ in found("c: {read: git.logs, window: 7 days}\n")] == ["HZ410", "HZ412"]


def test_hz413_read_with_default() -> None:
    assert found("""\
    merged:
      read: code-host.merged_pull_requests
      args: {repository: acme/app}
      schema: {type: array}
      default: [1]
    """) == [
        (
            "HZ413",
            10,
            7,
            "hz.inputs.merged reads 'code-host.merged_pull_requests' and cannot also have a "
            "default",
            "remove the default: the value is fetched before every run; to give one by hand "
            "(a preview, a test), pass --input merged=VALUE, which is used instead of the fetch",
        )
    ]


def test_hz414_declared_type_against_the_result_type() -> None:
    assert found("""\
    merged:
      read: code-host.merged_pull_requests
      args: {repository: acme/app}
      schema: {type: string}
    pull:
      read: code-host.pull_request
      args: {repository: acme/app, number: 1}
      schema: {type: [array, "null"]}
    diff:
      read: git.diff
      args: {range: main..HEAD}
      schema: false
    """) == [
        (
            "HZ414",
            9,
            22,
            "hz.inputs.merged.schema declares a string, but code-host.merged_pull_requests "
            "gives a list",
            "declare type: array, or leave the schema out to take "
            "code-host.merged_pull_requests's result schema",
        ),
        (
            "HZ414",
            13,
            22,
            "hz.inputs.pull.schema declares a list or null, but code-host.pull_request gives "
            "a mapping",
            "declare type: object, or leave the schema out to take code-host.pull_request's "
            "result schema",
        ),
        (
            "HZ414",
            17,
            15,
            "hz.inputs.diff.schema is false, which allows no value; git.diff gives a mapping",
            "declare type: object, or leave the schema out to take git.diff's result schema",
        ),
    ]


def test_hz414_compares_only_the_top_level_type() -> None:
    counted = Operation("x.count", "a number", {"type": "object"}, {"type": "integer"})
    several = Operation(
        "x.any", "a list or text", {"type": "object"}, {"type": ["array", "string"]}
    )
    untyped = Operation("x.free", "anything", {"type": "object"}, {})
    ops = {op.name: op for op in (counted, several, untyped)}
    assert (
        found(
            """\
        a: {read: x.count, schema: {type: number}}
        b: {read: x.any, schema: {type: string, minLength: 1}}
        c: {read: x.free, schema: {type: string}}
        d: {read: x.count, schema: {minimum: 3}}
        e: {read: x.count, schema: true}
        """,
            ops,
        )
        == []
    )
    assert found("a: {read: x.any, schema: {type: [object, number]}}\n", ops)[0][3:] == (
        "hz.inputs.a.schema declares a mapping or a number, but x.any gives a list or a string",
        "declare type: [array, string], or leave the schema out to take x.any's result schema",
    )


def test_hz414_is_not_said_for_a_schema_hz401_refuses() -> None:
    codes = [c for c, *_ in found("m: {read: git.log, schema: {type: strin}}\n")]
    assert codes == ["HZ401"]


@pytest.mark.parametrize("key", ["args", "window"])
def test_hz415_args_or_window_without_read(key: str) -> None:
    value = "{path: a}" if key == "args" else "7d"
    what = "arguments" if key == "args" else "a window"
    assert found(f"w: {{schema: {{type: string}}, {key}: {value}}}\n") == [
        (
            "HZ415",
            6,
            33,
            f"hz.inputs.w.{key} needs read: only an input read through an operation has {what}",
            f"add read: CAPABILITY.OPERATION ({LISTS}), or remove {key}",
        )
    ]


def test_an_input_needs_a_schema_unless_it_reads() -> None:
    assert found("w: {description: The week}\n") == [
        (
            "HZ102",
            6,
            5,
            "missing required key 'schema' in hz.inputs.w",
            "A JSON Schema (2020-12) the value must validate against; add it, as in schema: "
            "{type: array, items: {type: object}}",
        )
    ]


def test_an_hz_input_that_reads_is_no_sign_of_a_heinzelmaennchen_contract() -> None:
    # Without hz.contract, a read under hz.inputs is an hz contract missing its version; a
    # top-level `inputs:` that reads is still Heinzelmännchen's (HZ105).
    text = "hz:\n  name: x\n  inputs:\n    a: {read: git.log}\ncontract: x\nprompt: y\n"
    doc, _ = load_bytes(text.encode(), "c.yaml")
    assert doc is not None
    codes = [d.code for d in validate_source(doc)[1]]
    assert "HZ105" not in codes
    assert "HZ102" in codes
    text = "hz:\n  name: x\ninputs:\n  a: {read: git.log}\ncontract: x\nprompt: y\n"
    doc, _ = load_bytes(text.encode(), "c.yaml")
    assert doc is not None
    assert [(d.code, d.message) for d in validate_source(doc)[1]] == [
        ("HZ105", "this is a Heinzelmännchen contract (inputs that read:), not an hz contract")
    ]


def test_args_or_window_of_the_wrong_type_are_the_schemas_alone() -> None:
    assert [(c, m, h) for c, _, _, m, h in found("a: {read: git.log, args: [1], window: 7}\n")] == [
        ("HZ103", "hz.inputs.a.args: expected a mapping, got a list", None),
        (
            "HZ103",
            "hz.inputs.a.window: expected a string, got an integer (7)",
            'quote it, as in window: "7"',
        ),
    ]


@pytest.mark.parametrize("number", ["forty-two", "true", "[1]"])
def test_hz411_a_quoted_text_that_is_no_number_gets_no_unquote_hint(number: str) -> None:
    text = f"p: {{read: code-host.pull_request, args: {{repository: a/b, number: '{number}'}}}}\n"
    [(code, _, _, message, hint)] = found(text)
    assert (code, hint) == ("HZ411", None)
    assert message == f"hz.inputs.p.args.number: expected an integer, got a string ('{number}')"


def test_hz417_more_than_sixteen_inputs_read_through_an_operation() -> None:
    reads = "".join(f"n{i:02d}: {{read: files.read, args: {{path: a.md}}}}\n" for i in range(17))
    drafts = "up: {read: contract:other}\n"  # another job's draft is not a fetch: not counted
    assert found(reads + drafts) == [
        (
            "HZ417",
            22,
            5,
            "hz.inputs: 17 inputs are read through an operation, more than the 16 a job may "
            "read (the first past them: 'n16')",
            "read fewer inputs: split the contract, or read a whole directory with one files.glob",
        )
    ]
    assert found(reads.partition("n16")[0] + drafts) == []
