"""Every contract in contracts/, docs/ and the README gives the same job in both forms: YAML
and Markdown (only the source's path and digest differ)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.contract_forms import (
    comparable,
    fenced_contracts,
    is_valid,
    job_json,
    markdown_to_yaml,
    yaml_to_markdown,
)

REPO = Path(__file__).resolve().parents[2]


def _examples() -> list[tuple[str, str, str]]:
    found = []
    for path in sorted((REPO / "contracts").glob("*")):
        if path.suffix in (".yaml", ".md"):
            found.append((path.relative_to(REPO).as_posix(), path.suffix[1:], path.read_text()))
    for page in [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]:
        for i, (lang, text) in enumerate(fenced_contracts(page.read_text())):
            suffix = "md" if lang == "markdown" else "yaml"
            found.append((f"{page.relative_to(REPO).as_posix()}#{i}", suffix, text))
    return found


#: The examples that are contracts (a page also shows bad ones, with their errors).
EXAMPLES = [(name, suffix, text) for name, suffix, text in _examples() if is_valid(suffix, text)]


def test_the_examples_hold_both_forms() -> None:
    names = [name for name, _, _ in EXAMPLES]
    assert sum(n.startswith("contracts/") and n.endswith(".md") for n in names) >= 2
    assert sum(n.startswith("contracts/") and n.endswith(".yaml") for n in names) >= 3
    assert any(n.startswith("docs/contract-reference.md#") for n in names)
    assert any(n.startswith("docs/rules.md#") for n in names)


@pytest.mark.parametrize(("name", "suffix", "text"), EXAMPLES, ids=[n for n, _, _ in EXAMPLES])
def test_both_forms_give_the_same_job(tmp_path: Path, name: str, suffix: str, text: str) -> None:
    if suffix == "yaml":
        other, other_suffix = yaml_to_markdown(text), "md"
    else:
        other, other_suffix = markdown_to_yaml(text), "yaml"
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    first = tmp_path / "a" / f"c.{suffix}"
    second = tmp_path / "b" / f"c.{other_suffix}"
    first.write_text(text)
    second.write_text(other)
    assert comparable(job_json(second)) == comparable(job_json(first))
