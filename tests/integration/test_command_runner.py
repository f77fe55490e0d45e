"""The command runner driving the fake agent CLI: one real process per mode."""

from __future__ import annotations

import json
import secrets
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest

from runtime.models import Budget, ToolProfile
from runtime.result import AgentResult, Usage
from runtime.runners.command import CommandRunner
from tests.fakes.agent import is_gone, recorded_pids

AGENT = str(Path(__file__).resolve().parents[1] / "fakes" / "agent.py")
CONTRACT = "--contract-file={contract_file}"


def runner(*args: str, **settings: Any) -> CommandRunner:
    return CommandRunner.from_settings(
        {
            "command": [sys.executable, AGENT, *args, CONTRACT],
            "command_enforces_read_only": True,
            **settings,
        }
    )


def run(r: CommandRunner, workdir: Path, prompt: str = "Write it.", **kw: Any) -> AgentResult:
    kw.setdefault("timeout", 60)
    return r.run(
        prompt,
        contract="Be brief.",
        tools=ToolProfile(tools=kw.pop("tools", ())).bind(workdir),
        budget=Budget(max_usd=kw.pop("max_usd", 0.5)),
        **kw,
    )


def assert_all_gone(pids: Path) -> None:
    recorded = recorded_pids(pids)
    assert recorded
    assert [p for p in recorded if not is_gone(int(p["pid"]))] == []


def test_echo_prompt_on_stdin(tmp_path: Path) -> None:
    result = run(runner("echo"), tmp_path, "Entwurf für KW 48\n")
    assert (result.status, result.failure_kind, result.draft) == (
        "completed",
        None,
        "Entwurf für KW 48\n",
    )
    assert (result.runner, result.exit_code, result.reason) == ("command", 0, None)
    assert result.limits_unenforced == ("budget", "tools", "turns")


def test_echo_through_prompt_and_output_files(tmp_path: Path) -> None:
    r = runner("echo", "--prompt-file", "{prompt_file}", "--output-file={output_file}")
    result = run(r, tmp_path, "from a file")
    assert (result.status, result.draft) == ("completed", "from a file")


def test_the_fake_runs_by_its_own_shebang(tmp_path: Path) -> None:
    r = CommandRunner.from_settings(
        {"command": [AGENT, "echo", CONTRACT], "command_enforces_read_only": True}
    )
    assert run(r, tmp_path, "shebang").draft == "shebang"


def test_placeholders_private_files_and_working_directory(tmp_path: Path) -> None:
    r = runner(
        "inspect",
        "--prompt-file",
        "{prompt_file}",
        "--tools={tools}",
        "--limits={timeout_seconds}s/${max_usd}",
        "--model",
        "{model}",
        "{{literal}}",
        model="model-x",
        command_read_only_tools=["Read", "Grep", "Glob"],
    )
    result = run(r, tmp_path, "the prompt", tools=("Read", "Grep"), timeout=30, max_usd=0.25)
    seen = json.loads(result.draft or "")
    private = seen["private_dir"]
    assert seen == {
        "prompt": "the prompt",
        "contract": "Be brief.",
        "argv": [
            "inspect",
            "--prompt-file",
            f"{private}/prompt.md",
            "--tools=Read,Grep",
            "--limits=30s/$0.25",
            "--model",
            "model-x",
            "{literal}",
            f"--contract-file={private}/contract.md",
        ],
        "cwd": str(tmp_path.resolve()),
        "prompt_file_mode": "0o600",
        "contract_file_mode": "0o600",
        "private_dir": private,
        "private_dir_mode": "0o700",
    }
    assert not Path(private).exists()
    assert (result.model, result.limits_unenforced) == ("model-x", ("turns",))


def test_empty_profile_passes_the_configured_read_only_tools(tmp_path: Path) -> None:
    r = runner("inspect", "--tools={tools}", command_read_only_tools=["Read", "Glob"])
    seen = json.loads(run(r, tmp_path).draft or "")
    assert seen["argv"][1] == "--tools=Read,Glob"


def test_fail_reports_exit_code_and_stderr_tail(tmp_path: Path) -> None:
    result = run(runner("fail", "--code", "7", "--stderr", "x" * 5000 + "\nquota gone\n"), tmp_path)
    assert (result.status, result.failure_kind, result.exit_code) == ("failed", "runtime_error", 7)
    assert result.reason == "the command exited with code 7"
    assert len(result.stderr_tail) == 4096
    assert result.stderr_tail.endswith("x\nquota gone\n")
    assert result.draft is None


def test_missing_program_is_launch_failed(tmp_path: Path) -> None:
    missing = tmp_path / "no-agent"
    r = CommandRunner.from_settings(
        {"command": [str(missing), CONTRACT], "command_enforces_read_only": True}
    )
    result = run(r, tmp_path)
    assert (result.status, result.failure_kind, result.exit_code) == (
        "failed",
        "launch_failed",
        None,
    )
    assert result.reason == f"the command did not start: {missing}: program not found"
    assert result.duration_seconds < 1.0


def test_private_files_that_cannot_be_written_are_launch_failed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "no-tmp"))
    result = run(runner("echo"), tmp_path)
    assert (result.status, result.failure_kind) == ("failed", "launch_failed")
    assert result.reason == (
        "the command did not start: cannot write the private run files: No such file or directory"
    )


def test_sleep_past_the_timeout(tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    result = run(runner("sleep", "--pids", str(pids)), tmp_path, timeout=1)
    assert (result.status, result.failure_kind, result.draft) == ("timeout", None, None)
    assert result.reason == "no result within 1 s; the command's process group was stopped"
    assert 1 <= result.duration_seconds < 20
    assert_all_gone(pids)


def test_ignoring_sigterm_gets_sigkill_two_seconds_later(tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    result = run(runner("ignore-term", "--pids", str(pids)), tmp_path, timeout=0.5)
    assert result.status == "timeout"
    assert 2.5 <= result.duration_seconds < 30
    assert_all_gone(pids)


def test_grandchild_holding_stdout_neither_hangs_the_run_nor_survives(tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    result = run(runner("grandchild", "--pids", str(pids), "--draft", "ok\n"), tmp_path)
    assert (result.status, result.draft) == ("completed", "ok\n")
    assert result.duration_seconds < 30
    assert {p["role"] for p in recorded_pids(pids)} == {"leader", "grandchild"}
    assert_all_gone(pids)


def test_inactivity_timeout(tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    r = runner("sleep", "--pids", str(pids), command_inactivity_timeout=0.5)
    result = run(r, tmp_path, timeout=120)
    assert (result.status, result.failure_kind) == ("failed", "inactivity_timeout")
    assert result.reason == "no output for 0.5 s; the command was stopped"
    assert result.duration_seconds < 60
    assert_all_gone(pids)


def test_result_then_hang_is_a_timeout_without_an_invented_draft(tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    result = run(runner("result-hang", "--pids", str(pids)), tmp_path, timeout=1)
    assert (result.status, result.draft) == ("timeout", None)
    assert_all_gone(pids)


def test_output_file_replaced_by_a_symlink_is_not_followed(tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP-SECRET-VALUE")
    r = runner("symlink-output", "--output-file={output_file}", "--target", str(secret))
    result = run(r, tmp_path)
    assert (result.status, result.failure_kind) == ("failed", "runtime_error")
    assert result.reason == "the output file is a symbolic link; hz does not follow it"
    assert "TOP-SECRET-VALUE" not in result.model_dump_json()


def test_no_secret_reaches_the_child(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    planted = {
        "HZ_CREDENTIAL_GITHUB": secrets.token_hex(16),
        "ANTHROPIC_API_KEY": secrets.token_hex(16),
        "OPENAI_API_KEY": secrets.token_hex(16),
        "AWS_SECRET_ACCESS_KEY": secrets.token_hex(16),
        "UNLISTED_SETTING": "not passed either",
    }
    for name, value in planted.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("AGENT_TOKEN", "passed on purpose")
    monkeypatch.setenv("LC_ALL", "C.UTF-8")
    result = run(runner("env", command_env=["AGENT_TOKEN"]), tmp_path)
    env = json.loads(result.draft or "")
    assert set(env) <= {"PATH", "HOME", "LANG", "TMPDIR", "LC_ALL", "LC_CTYPE", "AGENT_TOKEN"}
    assert (env["AGENT_TOKEN"], env["LC_ALL"]) == ("passed on purpose", "C.UTF-8")
    assert [value for value in planted.values() if value in (result.draft or "")] == []


def test_json_output_with_usage_and_cost(tmp_path: Path) -> None:
    r = runner(
        "json", "--draft", "# Status\n", "--input-tokens", "120", "--output-tokens", "30",
        "--cost", "0.02", command_output="json",
    )  # fmt: skip
    result = run(r, tmp_path)
    assert (result.status, result.draft, result.cost_usd) == ("completed", "# Status\n", 0.02)
    assert result.usage == Usage(input_tokens=120, output_tokens=30)


def test_json_output_under_a_configured_key(tmp_path: Path) -> None:
    r = runner("json", "--key", "answer", "--draft", "hi", command_output="json",
               command_json_draft_key="answer")  # fmt: skip
    assert run(r, tmp_path).draft == "hi"


def test_json_output_over_budget_is_a_budget_stop(tmp_path: Path) -> None:
    r = runner("json", "--draft", "hi", "--cost", "0.75", command_output="json")
    result = run(r, tmp_path, max_usd=0.5)
    assert (result.status, result.failure_kind) == ("budget", "budget_exceeded")
    assert result.reason == "the command reported $0.75, over the budget of $0.5"


def test_malformed_json_is_failed_and_invents_no_draft(tmp_path: Path) -> None:
    result = run(runner("json", "--raw", "draft: not json", command_output="json"), tmp_path)
    assert (result.status, result.failure_kind, result.draft) == ("failed", "runtime_error", None)
    assert result.reason == (
        "the JSON on stdout is malformed: Expecting value: line 1 column 1 (char 0)"
    )


def test_json_without_the_draft_key(tmp_path: Path) -> None:
    result = run(runner("json", "--key", "text", command_output="json"), tmp_path)
    assert (result.status, result.reason) == ("failed", "the JSON on stdout has no 'draft' key")


@pytest.mark.parametrize(
    ("args", "reason"),
    [
        ((), "the command wrote nothing to stdout"),
        (("--output-file={output_file}",), "the command wrote nothing to the output file"),
    ],
)
def test_empty_output_is_failed(tmp_path: Path, args: tuple[str, ...], reason: str) -> None:
    result = run(runner("echo", *args), tmp_path, prompt="  \n")
    assert (result.status, result.failure_kind, result.reason) == (
        "failed",
        "runtime_error",
        reason,
    )


def test_stdout_over_the_cap_is_an_output_limit(tmp_path: Path) -> None:
    result = run(runner("flood", "--stdout-bytes", str(9 * 1024 * 1024)), tmp_path)
    assert (result.status, result.failure_kind, result.output_truncated) == (
        "failed",
        "output_limit",
        True,
    )
    assert result.reason == "the command wrote more than 8388608 bytes to stdout"
    assert len(result.draft or "") == 8 * 1024 * 1024
