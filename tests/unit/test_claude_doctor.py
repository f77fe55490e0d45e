"""``hz doctor`` checks of the claude-code runner, over ``claude auth status`` output recorded
from the real CLI, and against fake executables for the version check."""

from __future__ import annotations

import stat
from pathlib import Path
from typing import Any

import pytest

from hz.runtime.runners.claude_code.doctor import judge_login
from hz.runtime.runners.claude_code.runner import ClaudeCodeRunner
from hz.runtime.runners.claude_code.settings import ClaudeSettings
from hz.runtime.runners.executables import parse_version
from hz.runtime.runners.protocol import Check

STREAMS = Path(__file__).parent / "claude_streams"


def auth_status(name: str) -> tuple[int, str]:
    code = int((STREAMS / f"auth_status_{name}.meta").read_text().split()[0])
    return code, (STREAMS / f"auth_status_{name}.json").read_text()


def test_logged_out() -> None:
    code, text = auth_status("logged_out")
    assert judge_login(code, text, ClaudeSettings.from_table({})) == Check(
        "claude login",
        "failed",
        "not logged in; run `claude auth login`, or set [system.runner] "
        "allow_api_key_billing = true to use ANTHROPIC_API_KEY",
    )
    allowed = ClaudeSettings.from_table({"allow_api_key_billing": True})
    assert judge_login(code, text, allowed).detail == "not logged in; run `claude auth login`"


def test_api_key_counts_only_when_allowed() -> None:
    code, text = auth_status("api_key")
    assert judge_login(
        code, text, ClaudeSettings.from_table({"allow_api_key_billing": True})
    ) == Check("claude login", "ok", "API key from ANTHROPIC_API_KEY (billed to the API account)")
    assert judge_login(code, text, ClaudeSettings.from_table({})) == Check(
        "claude login",
        "failed",
        "the CLI would use an API key from ANTHROPIC_API_KEY, which hz refuses while "
        "[system.runner] allow_api_key_billing is off",
    )


def test_token_login() -> None:
    code, text = auth_status("auth_token")
    assert judge_login(code, text, ClaudeSettings.from_table({})) == Check(
        "claude login", "ok", "logged in (oauth_token)"
    )


def test_unreadable_status() -> None:
    assert judge_login(0, "Error: boom", ClaudeSettings.from_table({})) == Check(
        "claude login", "failed", "cannot read `claude auth status`: Error: boom"
    )


@pytest.mark.parametrize(
    ("text", "expected"),
    [("2.1.332 (Claude Code)\n", (2, 1, 332)), ("claude 10.0.1", (10, 0, 1)), ("dev", None)],
)
def test_parse_version(text: str, expected: tuple[int, int, int] | None) -> None:
    assert parse_version(text) == expected


def fake_cli(tmp_path: Path, version: str) -> Path:
    path = tmp_path / "claude"
    path.write_text(
        "#!/bin/sh\n"
        f'if [ "$1" = --version ]; then echo "{version} (Claude Code)"; exit 0; fi\n'
        'if [ "$1" = auth ]; then echo \'{"loggedIn": true, "authMethod": "claude.ai"}\'; fi\n'
    )
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def test_doctor_with_a_new_enough_cli(tmp_path: Path) -> None:
    path = fake_cli(tmp_path, "2.1.400")
    assert ClaudeCodeRunner.doctor(ClaudeSettings.from_table({"claude_executable": str(path)})) == [
        Check("claude executable", "ok", str(path)),
        Check("claude version", "ok", "2.1.400 (minimum 2.1.332)"),
        Check("claude login", "ok", "logged in (claude.ai)"),
    ]


def test_doctor_with_an_old_cli(tmp_path: Path) -> None:
    path = fake_cli(tmp_path, "2.0.9")
    checks = ClaudeCodeRunner.doctor(ClaudeSettings.from_table({"claude_executable": str(path)}))
    assert checks[1] == Check(
        "claude version", "failed", "2.0.9 is older than the supported minimum 2.1.332"
    )


def test_doctor_without_the_cli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    assert ClaudeCodeRunner.doctor(ClaudeSettings.from_table({})) == [
        Check(
            "claude executable",
            "failed",
            "claude: program not found on PATH; install @anthropic-ai/claude-code or set "
            "[system.runner] claude_executable",
        )
    ]


@pytest.mark.parametrize(
    ("make", "why"),
    [
        (lambda p: p.write_text("not a program"), "is not executable"),
        (lambda p: p.mkdir(), "is a directory"),
        (lambda p: None, "program not found"),
    ],
)
def test_an_unusable_executable_says_why(tmp_path: Path, make: Any, why: str) -> None:
    from hz.runtime.runners.executables import why_unusable

    target = tmp_path / "claude"
    make(target)
    assert why_unusable(str(target)) == why
