"""The Codex runner without a codex binary: what hz doctor and a run say then."""

from __future__ import annotations

from pathlib import Path

import pytest

from hz.runtime.runners.codex.runner import CodexRunner
from hz.runtime.runners.codex.settings import CodexSettings
from tests.helpers.run_request import run_request


def test_doctor_without_codex(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    checks = CodexRunner.doctor(CodexSettings.from_table({}))
    assert [(c.name, c.status, c.detail) for c in checks] == [
        (
            "codex executable",
            "failed",
            "codex not found on PATH; install @openai/codex or set "
            "[system.runner] codex_executable",
        ),
    ]


def test_missing_executable_is_a_result(tmp_path: Path) -> None:
    runner = CodexRunner(CodexSettings.from_table({"codex_executable": str(tmp_path / "no-codex")}))
    result = runner.run(run_request(tmp_path, timeout=5))
    assert (result.status, result.failure_kind, result.reason) == (
        "failed",
        "launch_failed",
        f"codex did not start: {tmp_path / 'no-codex'}: program not found",
    )
    assert result.limits_unenforced == ("budget",)
