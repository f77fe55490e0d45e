"""The real-CLI tests fail loudly in CI when the pinned claude is missing, and skip elsewhere."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fakes import claude_cli


def test_missing_in_ci_fails(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(claude_cli, "AGENT_CLIS", tmp_path)
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception) as caught:
        claude_cli.claude_binary()
    assert str(caught.value) == (
        "the pinned claude CLI is not installed: run `make agent-clis` (or "
        ".ci/install-agent-clis DIR and set HZ_AGENT_CLIS=DIR) "
        f"(looked for {tmp_path}/node_modules/.bin/claude)"
    )


def test_missing_elsewhere_skips(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(claude_cli, "AGENT_CLIS", tmp_path)
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception) as caught:
        claude_cli.claude_binary()
    assert str(caught.value) == (
        "the pinned claude CLI is not installed: run `make agent-clis` (or "
        ".ci/install-agent-clis DIR and set HZ_AGENT_CLIS=DIR) "
        f"(looked for {tmp_path}/node_modules/.bin/claude)"
    )


def test_found(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    binary = tmp_path / "node_modules" / ".bin" / "claude"
    binary.parent.mkdir(parents=True)
    binary.write_text("#!/bin/sh\n")
    binary.chmod(0o755)
    monkeypatch.setattr(claude_cli, "AGENT_CLIS", tmp_path)
    assert claude_cli.claude_binary() == binary
