"""Schema errors mapped to positions and hz codes (HZ101-HZ104, HZ201-HZ204)."""

from __future__ import annotations

import textwrap

from jsonschema.validators import Draft202012Validator

from hz.compiler.checks.common import dotted, extend
from hz.compiler.checks.structure import check_structure, map_error
from hz.compiler.load.loader import load_bytes
from hz.compiler.source import Pos, SourceDoc


def found(text: str) -> list[tuple[str, int, int, str, str | None]]:
    doc, diags = load_bytes(textwrap.dedent(text).encode(), "c.yaml")
    assert diags == []
    assert doc is not None
    return [(d.code, d.line, d.column, d.message, d.hint) for d in check_structure(doc)]


def test_unknown_key_at_the_key_with_did_you_mean() -> None:
    text = """\
    hz:
      contract: 1
      name: n
      timeout: 1
      agent:
        max_usd: 1
        toolz: []
    contract: c
    prompt: p
    """
    assert found(text) == [
        (
            "HZ101",
            7,
            5,
            "unknown key 'toolz' in hz.agent",
            "did you mean 'tools'? (allowed keys: tools, max_usd)",
        )
    ]


def test_refused_names_are_not_suggested_for_unknown_keys() -> None:
    text = """\
    hz: {contract: 1, name: n, timeout: 1, agent: {max_usd: 1, modle: x}}
    contract: c
    prompt: p
    """
    assert found(text) == [
        ("HZ101", 1, 60, "unknown key 'modle' in hz.agent", "allowed keys: tools, max_usd")
    ]


def test_refused_hint_is_one_diagnostic_at_its_key() -> None:
    text = """\
    hz:
      contract: 1
      name: n
      timeout: 1
      agent:
        max_usd: 1
        effort: high
    contract: c
    prompt: p
    """
    assert found(text) == [
        (
            "HZ203",
            7,
            5,
            "hz.agent.effort is refused: how much effort the agent spends is chosen by whoever "
            "runs the job; hz never passes a contract's effort to the agent, so this line would "
            "be ignored while looking like it works",
            "remove it; an effort, where a runner supports one, is a [system.runner] setting "
            "in the hz configuration (see `hz config show`)",
        )
    ]


def test_missing_key_at_its_parents_key_with_the_fields_purpose() -> None:
    text = """\
    hz:
      contract: 1
      name: n
      timeout: 1
      agent:
        tools: []
    contract: c
    prompt: p
    """
    assert found(text) == [
        (
            "HZ102",
            5,
            3,
            "missing required key 'max_usd' in hz.agent",
            "The most the session may spend; add it, as in max_usd: 0.5",
        )
    ]


def test_wrong_type_reported_once_not_also_as_enum() -> None:
    text = """\
    hz: {contract: 1, name: n, timeout: 1, agent: {max_usd: 1}, output: {format: [json]}}
    contract: c
    prompt: p
    """
    assert found(text) == [
        (
            "HZ104",
            1,
            78,
            "hz.output.format: expected one of 'markdown', 'text', 'json', got [\"json\"]",
            None,
        )
    ]


def test_rule_owned_paths_are_left_to_their_rules() -> None:
    text = """\
    hz: {contract: 1, name: n, timeout: 10 min, agent: {max_usd: -1}}
    contract: c
    prompt: p
    """
    assert found(text) == []


def test_one_of_reports_the_best_match_and_counts_the_rest() -> None:
    schema = {
        "type": "object",
        "properties": {
            "when": {
                "oneOf": [
                    {"type": "integer"},
                    {"type": "string", "pattern": "^[0-9]+d$"},
                    {"type": "object", "required": ["at"]},
                ]
            }
        },
    }
    doc = SourceDoc("c.yaml", "", {"when": "soon"}, values={("when",): Pos(3, 7)})
    (error,) = Draft202012Validator(schema).iter_errors(doc.data)
    (diag,) = map_error(doc, error)
    assert (diag.code, diag.line, diag.column, diag.message) == (
        "HZ104",
        3,
        7,
        "when: 'soon' does not match the pattern '^[0-9]+d$' (and 2 other alternatives did not "
        "match)",
    )


def test_dotted_paths() -> None:
    assert dotted(()) == "the top level"
    assert dotted(("hz", "agent", "tools", 0)) == "hz.agent.tools[0]"
    assert dotted(("hz", "inputs", "the-week")) == "hz.inputs['the-week']"
    assert dotted(("hz", "inputs", "x\n")) == "hz.inputs['x\\n']"
    assert extend("hz.inputs.x.schema", ("items", 0)) == "hz.inputs.x.schema.items[0]"
    assert extend("the top level", ("hz",)) == "hz"
    assert extend("a", ()) == "a"


def test_refused_hint_one_level_up_gets_its_own_code_too() -> None:
    text = """\
    hz:
      contract: 1
      name: n
      model: opus
      timeout: 1
      agent: {max_usd: 1}
    contract: c
    prompt: p
    """
    assert [(c, line, col, msg[:28]) for c, line, col, msg, _ in found(text)] == [
        ("HZ202", 4, 3, "hz.model is refused: which m")
    ]
