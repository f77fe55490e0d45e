"""The machine-readable reports of the whole invalid corpus, as snapshots (syrupy)."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from syrupy.assertion import SnapshotAssertion

from hz.compiler.report.formats import write_report
from hz.compiler.validate import validate_paths

CASES = Path(__file__).resolve().parents[1] / "cases"


@pytest.mark.parametrize("fmt", ["json", "sarif"])
def test_corpus_report(
    fmt: str, snapshot: SnapshotAssertion, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(CASES)
    run = validate_paths(["invalid"])
    out, err = io.StringIO(), io.StringIO()
    write_report(
        run.diagnostics,
        fmt=fmt,
        files_checked=run.files_checked,
        out=out,
        err=err,
        tool_version="0.0.0-test",
    )
    assert json.loads(out.getvalue()) == snapshot
    assert err.getvalue() == snapshot(name="summary")
