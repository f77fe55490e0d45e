"""The template scanner may only ever say "clean" where Jinja2's parse and hz's walk find
nothing (compiler/checks/template_scan.py): held to that over the corpus, tests/cases,
generated contracts, every one-character deletion inside their tags, and near misses."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from hz.compiler.checks.template import environment, findings
from hz.compiler.checks.template_scan import FILTERS, TESTS, certainly_clean
from hz.compiler.load.loader import load_path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "benchmarks"))
from gen_contracts import generate  # noqa: E402

FILES = sorted(
    p
    for p in [*(REPO / "tests" / "cases").rglob("*"), *(REPO / "contracts").rglob("*")]
    if p.suffix in (".yaml", ".yml", ".md")
)


def _template(path: Path) -> tuple[str, tuple[str, ...]] | None:
    doc, _ = load_path(path)
    if doc is None or not isinstance(doc.data, dict):
        return None
    source = doc.data.get("prompt")
    hz = doc.data.get("hz")
    inputs = hz.get("inputs") if isinstance(hz, dict) else None
    if not isinstance(source, str):
        return None
    return source, tuple(str(k) for k in inputs) if isinstance(inputs, dict) else ()


def _agrees(source: str, declared: tuple[str, ...]) -> bool:
    """The scanner's verdict, after checking it against Jinja2's."""
    clean = certainly_clean(source, declared)
    if clean:
        assert findings(source, declared) == (), source
    return clean


def _deletions(source: str) -> list[str]:
    """``source`` less one character, for every character inside or at the edge of a tag."""
    out = []
    depth = 0
    for i, ch in enumerate(source):
        inside = depth > 0 or ch == "{"
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth = max(depth - 1, 0)
        if inside or ch == "}":
            out.append(source[:i] + source[i + 1 :])
    return out


def test_the_corpus_agrees_and_every_valid_template_is_decided() -> None:
    templates = [t for t in map(_template, FILES) if t is not None]
    verdicts = {(source, declared): _agrees(source, declared) for source, declared in templates}
    clean = [t for t, ok in verdicts.items() if ok]
    # Most templates of the corpus are in the subset (the rest go to Jinja2).
    assert len(clean) >= len(verdicts) // 2, (len(clean), len(verdicts))
    for source, declared in clean:
        for variant in _deletions(source):
            _agrees(variant, declared)
        for name in declared:  # the same template with one input undeclared or renamed
            _agrees(source, tuple(d for d in declared if d != name))
            _agrees(source.replace(f"inputs.{name}", f"inputs.{name}x"), declared)


def test_every_generated_contract_is_decided_clean(tmp_path: Path) -> None:
    for path in generate(tmp_path, 200):
        found = _template(path)
        assert found is not None
        assert _agrees(*found), path


@pytest.mark.parametrize(
    "source",
    [
        "{{ inputs.a }} {% for x in inputs.b %}{{ loop.index }} {{ x.c[:7] }}{% endfor %}",
        '{{ inputs.a | join(", ") | upper }}{{ inputs.b | default("x") | indent(2) }}',
        "{% if inputs.a is defined and not inputs.b %}1{% elif inputs.b is not string %}2"
        "{% else %}3{% endif %}",
        "{#- a {{ comment }} -#}{{- inputs.a -}}{%- if inputs.b -%}x{%- endif -%}",
        '{{ inputs.a["k"] }}{{ inputs.b[0] }} }} %} #} text { not a tag }',
        '{{ inputs.a | join("}}") }}{{ inputs.b | join("%}") }}',  # the end inside a string
        "{{ inputs.a }}{% for x in inputs.b | sort %}{% for y in x %}{{ y }}{{ x }}{% endfor %}"
        "{% endfor %}",
    ],
)
def test_the_subset_is_decided_and_agrees(source: str) -> None:
    assert _agrees(source, ("a", "b"))


@pytest.mark.parametrize(
    "source",
    [
        "{{ inputs.a }}",  # b is unused: HZ506
        "{{ inputs.a }}{{ inputs.b }}{{ inputs.c }}",  # HZ502
        "{{ inputs.a }}{{ inputs.b | random }}",  # HZ504
        "{{ inputs.a }}{{ inputs.b | nosuch }}",
        "{{ inputs.a }}{{ inputs.b is nosuch }}",
        "{% for x in inputs.a %}{% endfor %}{{ x }}{{ inputs.b }}",  # x out of its loop
        "{{ loop.index }}{{ inputs.a }}{{ inputs.b }}",
        "{{ a }}{{ inputs.a }}{{ inputs.b }}",  # HZ503
        "{% for x in inputs.a %}{{ inputs.b }}",  # unclosed
        "{% if inputs.a %}{% else %}{% else %}{% endif %}{{ inputs.b }}",
        "{% for x in inputs.a %}{% else %}{% endfor %}{{ inputs.b }}",  # valid, not the subset
        "{% raw %}{{ x }}{% endraw %}{{ inputs.a }}{{ inputs.b }}",
        "{% set x = 1 %}{{ inputs.a }}{{ inputs.b }}",
        "{% include 'x' %}{{ inputs.a }}{{ inputs.b }}",  # HZ505
        "{{ inputs.a }}{{ inputs.b }}{# unclosed",
        "{{ inputs.a }}{{ inputs.b ",
        '{{ inputs.a | join("\\"") }}{{ inputs.b }}',
        "{{ inputs.a | join(x) }}{{ inputs.b }}",
        "{{ inputs.a[ }}{{ inputs.b }}",
        "{{ (inputs.a }} x) }}{{ inputs.b }}",
        "{{+ inputs.a }}{{ inputs.b }}",
        "{{ inputs.a.b.c() }}{{ inputs.b }}",
        "{{ inputs['a'] }}{{ inputs.b }}",
        "{{ inputs }}{{ inputs.a }}{{ inputs.b }}",
        "{{ inputs.a is defined x }}{{ inputs.b }}",
        "{{ inputs.a, inputs.b }}",
        "{{ inputs.a if inputs.b }}",
        "{% for true in inputs.a %}{% endfor %}{{ inputs.b }}",
        "{% for x, y in inputs.a %}{% endfor %}{{ inputs.b }}",
        "{% endif %}{{ inputs.a }}{{ inputs.b }}",
        "{{ inputs.a[1.5] }}{{ inputs.b }}",
        "{{ inputs.é }}{{ inputs.a }}{{ inputs.b }}",
    ],
)
def test_near_misses_go_to_jinja(source: str) -> None:
    assert not _agrees(source, ("a", "b"))


def test_its_filters_and_tests_are_jinjas() -> None:
    env = environment()
    assert set(env.filters) >= FILTERS
    assert set(env.tests) >= TESTS
