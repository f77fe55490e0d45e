"""The golden corpus: tests/cases/valid/*.yaml and *.md must validate; each file in
tests/cases/invalid/ must produce exactly the text report in its ``.expected`` file.

Regenerate the expected files after an intended message change with
``HZ_UPDATE_GOLDEN=1 .venv/bin/pytest tests/test_corpus.py`` and review the diff.
"""

from __future__ import annotations

import io
import os
import re
from pathlib import Path

import pytest

from hz.compiler.report.formats import write_report
from hz.compiler.validate import validate_paths

CASES = Path(__file__).parent / "cases"
# Read at import: the autouse fixture removes HZ_* variables before each test runs.
UPDATE = os.environ.get("HZ_UPDATE_GOLDEN") == "1"
SUFFIXES = ("*.yaml", "*.md")
VALID = sorted(p.name for s in SUFFIXES for p in (CASES / "valid").glob(s))
INVALID = sorted(p.name for s in SUFFIXES for p in (CASES / "invalid").glob(s))

#: Codes a corpus file cannot sensibly hold: HZ003 needs a file over 256 KiB (the loader's own
#: tests generate it), HZ014 an empty directory (tests/cli/test_discovery.py).
#: HZ170-HZ181 are `hz migrate`'s report, not `hz validate`'s: tests/cli/test_migrate*.py
#: have them.
MIGRATE = {f"HZ17{n}" for n in range(10)} | {"HZ180", "HZ181"}
NOT_IN_CORPUS = {"HZ003", "HZ014"} | MIGRATE


def _expected(name: str) -> Path:
    return CASES / "invalid" / (Path(name).stem + ".expected")


def text_report(*paths: str) -> str:
    run = validate_paths(paths)
    out = io.StringIO()
    write_report(
        run.diagnostics,
        fmt="text",
        files_checked=run.files_checked,
        out=out,
        err=io.StringIO(),
        tool_version="test",
    )
    return out.getvalue()


@pytest.mark.parametrize("name", VALID)
def test_valid_case(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(CASES)
    run = validate_paths([f"valid/{name}"])
    assert run.diagnostics == ()
    assert len(run.contracts) == 1


@pytest.mark.parametrize("name", INVALID)
def test_invalid_case(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(CASES)
    expected_file = _expected(name)
    actual = text_report(f"invalid/{name}")
    if UPDATE:
        expected_file.write_text(actual, encoding="utf-8")
    assert actual == expected_file.read_text(encoding="utf-8")
    assert actual, "an invalid case must produce at least one diagnostic"


def test_case_name_is_its_first_code() -> None:
    """A case named HZnnn-… reports HZnnn, so the corpus cannot drift from its names."""
    for name in INVALID:
        code = name.split("-")[0]
        if re.fullmatch(r"HZ\d{3}", code):
            text = _expected(name).read_text()
            assert f"[{code}]" in text, name


def test_every_rule_code_has_a_case() -> None:
    from hz.compiler.rules.docs import codes

    wanted = {c for c in codes() if c < "HZ600"} - NOT_IN_CORPUS
    seen = set()
    for expected in (CASES / "invalid").glob("*.expected"):
        seen |= set(re.findall(r"\[(HZ\d{3})\]", expected.read_text()))
    assert sorted(wanted - seen) == []
    assert len(VALID) + len(INVALID) >= 30


def test_no_stray_expected_files() -> None:
    stems = {Path(n).stem for n in INVALID}
    extra = [p.name for p in (CASES / "invalid").glob("*.expected") if p.stem not in stems]
    assert extra == []
