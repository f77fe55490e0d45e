"""The rule registry and its documentation: one entry per code, one explanation per entry,
docs/rules.md generated from them, examples true, no code written outside the registry."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from hz.compiler.load.loader import Loaded, load_bytes
from hz.compiler.load.markdown import load_markdown
from hz.compiler.migrate import migrate
from hz.compiler.rules import registry
from hz.compiler.rules.docs import codes, rule_doc, rules_markdown, title
from hz.compiler.rules.registry import RULES, explanation_file
from hz.compiler.validate import validate_source
from hz.runtime.artifacts.errors import HzError

REPO = Path(__file__).resolve().parents[2]
FENCED = re.compile(r"^## (Bad|Fixed)\n\n```(yaml|markdown)\n(.*?)```$", re.S | re.M)
#: Codes whose Bad example this module can check by validating one file on its own (HZ170-HZ181
#: are `hz migrate`'s report, tested with it: tests/cli/test_migrate*.py).
SINGLE_FILE = re.compile(r"HZ(?!17|18[01])[1-5]\d\d")


def test_docs_rules_md_is_up_to_date() -> None:
    assert (REPO / "docs" / "rules.md").read_text() == rules_markdown(), (
        "docs/rules.md is stale: run `.venv/bin/python -m hz.compiler.rules.docs > docs/rules.md`"
    )


def test_every_code_used_in_the_source_is_documented() -> None:
    used: set[str] = set()
    for package in ("compiler", "runtime"):
        for path in (REPO / package).rglob("*.py"):
            used |= set(re.findall(r"HZ\d{3}", path.read_text()))
    assert sorted(used - set(codes())) == []


def test_every_registered_code_has_its_constant_and_its_explanation() -> None:
    constants = {
        name: value for name, value in vars(registry).items() if re.fullmatch(r"HZ\d{3}", name)
    }
    assert all(name == value for name, value in constants.items())
    assert sorted(constants) == sorted(RULES)
    explained = sorted(p.stem for p in (REPO / "compiler" / "data" / "rules").glob("*.md"))
    assert explained == sorted(RULES)


@pytest.mark.parametrize("code", codes())
def test_the_explanation_file_is_headed_by_the_registry_entry(code: str) -> None:
    text = explanation_file(code)
    assert text.startswith(f"# {RULES[code].heading}\n\n## Why\n")
    assert rule_doc(code) == text


def test_the_compiler_writes_codes_only_through_the_registry() -> None:
    # A code is a constant of the registry (``HZ101``), never a string, so an unregistered
    # code cannot be written. The runtime cannot import the compiler: its project-file codes
    # are literals, checked above to be registered.
    literal = re.compile(r"[\"']HZ\d{3}[\"']")
    written = [
        str(path.relative_to(REPO))
        for path in sorted((REPO / "compiler").rglob("*.py"))
        if path.name != "registry.py" and literal.search(path.read_text())
    ]
    assert written == []


@pytest.mark.parametrize("code", codes())
def test_doc_has_title_why_bad_fixed(code: str) -> None:
    doc = rule_doc(code)
    assert doc.startswith(f"# {code}: ")
    assert title(doc)
    outside_code = re.sub(r"^```.*?^```$", "", doc, flags=re.S | re.M)
    headings = re.findall(r"^## (\w+)", outside_code, re.M)
    assert headings[:3] == ["Why", "Bad", "Fixed"]


@pytest.mark.parametrize("code", [c for c in codes() if SINGLE_FILE.fullmatch(c)])
def test_bad_example_reports_the_code_and_fixed_example_validates(code: str) -> None:
    examples = {part: (lang, text) for part, lang, text in FENCED.findall(rule_doc(code))}
    bad, _ = _load(*examples["Bad"])
    fixed, _ = _load(*examples["Fixed"])
    assert bad is not None
    assert fixed is not None
    found = validate_source(bad)[1]
    assert code in {d.code for d in found}
    assert all(d.severity == RULES[d.code].severity for d in found)
    assert validate_source(fixed)[1] == []


def _load(lang: str, text: str) -> Loaded:
    """A rule's example: a YAML contract, or a Markdown one (body rules)."""
    if lang == "markdown":
        return load_markdown(text.encode(), "example.md")
    return load_bytes(text.encode(), "example.yaml")


def test_explain_is_case_insensitive() -> None:
    assert rule_doc(" hz101 ") == rule_doc("HZ101")


def test_unknown_code_names_close_ones() -> None:
    with pytest.raises(HzError) as info:
        rule_doc("HZ1O1")
    assert info.value.message == "unknown rule code 'HZ1O1'"
    assert info.value.hint is not None
    assert info.value.hint.startswith("close codes: HZ101")
    # An installed hz has no docs/ folder: the hint names the command.
    assert info.value.hint.endswith("; `hz explain` lists every code, `hz explain CODE` shows one")


def test_index_links_every_code_in_order() -> None:
    text = rules_markdown()
    linked = re.findall(r"^\| \[(HZ\d{3})\]\(#hz\d{3}\) \| .+ \|$", text, re.M)
    assert linked == codes()
    assert "\n## HZ101: Unknown key\n" in text
    # Comments inside YAML examples are not headings and stay as they are.
    assert "\n### Why\n" in text


#: A body hz reads, for the migrate examples below.
MIGRATE_BODY = "\n### Goal\n\nA digest.\n\n### Done when\n\n- Done.\n"
#: Heinzelmännchen contracts that, migrated, print every kind of line each HZ17x code is
#: printed on (HZ180 is the folder's, printed by the CLI: an error, see test_migrate.py).
MIGRATE_CASES = {
    "team/digest.prose.md": "---\nhz:\n  schema: 1\n  title: Digest\n  inputs:\n"
    "    merged: {read: code-host.merged_pull_requests, args: {repository: acme/app}, "
    "window: last 7d}\n"
    "    graph: {read: team-graph.snapshot}\n"
    "    issues: {read: tracker.issues_updated, args: {project: APP}, window: 7d}\n"
    "  outputs:\n    digest: {format: markdown}\n"
    '  schedule: "0 9 * * 1"\n  catch_up: latest\n  requires: [tracker:read]\n'
    "  scope: team\n  retries: 2\n---\n" + MIGRATE_BODY,
    "none.md": "---\nhz:\n  schema: 1\n  outputs: {}\n---\n" + MIGRATE_BODY,
    "asset.md": '---\nhz:\n  schema: 1\n  title: "{{asset:team}}"\n---\n' + MIGRATE_BODY,
    "flow.md": "---\nhz: {schema: 1}\n---\n" + MIGRATE_BODY,
    "name.md": "---\nname: Weekly digest\nhz:\n  schema: 1\n---\n" + MIGRATE_BODY,
    "prompt.md": "---\nprompt: Do X.\nhz:\n  schema: 1\n---\n" + MIGRATE_BODY,
}


def test_a_migrate_rule_s_title_names_the_kinds_of_line_it_is_printed_on() -> None:
    """`hz migrate` prints `mapped:`, `decide:` and `error:` lines, never `warning:`: a
    "Migrated:" rule is titled with the kinds it is printed on, a "Cannot migrate:" one is an
    error (no suffix, as every error rule)."""
    printed: dict[str, set[str]] = {}
    for path, text in MIGRATE_CASES.items():
        for note in migrate(text.encode(), path).notes:
            printed.setdefault(note.code, set()).add(note.kind)
    migrate_codes = [c for c in codes() if re.fullmatch(r"HZ1(7\d|8[01])", c)]
    assert sorted(printed) == [c for c in migrate_codes if c != "HZ180"]
    for code in migrate_codes:
        rule = RULES[code]
        if rule.title.startswith("Cannot migrate:"):
            assert (rule.label, printed.get(code, {"error"})) == (rule.title, {"error"})
        else:
            suffix = rule.label.removeprefix(rule.title)
            assert "warning" not in suffix, code
            assert set(re.findall(r"(mapped|decide):", suffix)) == printed[code], code


@pytest.mark.parametrize(
    ("code", "path"),
    [
        ("HZ170", "tracker-update.md"),
        ("HZ175", "tracker-update.md"),
        ("HZ177", "team/workflows/weekly-report.prose.md"),
    ],
)
def test_a_migrate_rule_s_fixed_example_is_what_migrate_writes(code: str, path: str) -> None:
    """The Fixed example's lines are lines of the migrated Bad example, in their order."""
    examples = {part: text for part, _, text in FENCED.findall(rule_doc(code))}
    bad = examples["Bad"].removeprefix("---\n")
    migrated = migrate(f"---\n{bad}---\n{MIGRATE_BODY}".encode(), path).text
    assert migrated is not None
    lines = iter(migrated.splitlines())
    fixed = examples["Fixed"].removeprefix("---\n").splitlines()
    assert [line for line in fixed if line in lines] == fixed
