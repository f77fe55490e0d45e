"""The command runner driving the fake agent CLI: one real process per mode.

Every run goes through ``Fake.run``, which plants secrets in hz's environment first (the
``planted_secrets`` fixture) and afterwards checks that none reached the agent, that no process
of the run survives, and that the run ended within its bound; an autouse fixture fails any test
that runs nothing through it, so no test can skip those checks.
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from hz.runtime.artifacts.result import AgentResult, Usage
from hz.runtime.process.bounded import Limits
from hz.runtime.runners.command.runner import CommandRunner
from hz.runtime.runners.command.settings import CommandSettings
from tests.fakes.agent import recorded_env, recorded_pids
from tests.helpers.run_request import run_request

AGENT = str(Path(__file__).resolve().parents[1] / "fakes" / "agent.py")
CONTRACT = "--contract-file={contract_file}"
#: How long a run that ends by itself may take on a loaded 2-core machine (it takes ~0.1 s).
QUICK = 5.0
#: What a loaded machine may add to a stopped run's timeout and kill grace.
SLACK = 3.0
#: The ``contained`` fixture (tests/integration/conftest.py): checks a run's records.
Contained = Callable[[Path, Path], None]


def stopped_within(timeout: float) -> float:
    """The bound for a run stopped at ``timeout``: SIGTERM, SIGKILL after the grace, slack."""
    return timeout + Limits(timeout=timeout).kill_grace + SLACK


class Fake:
    """Command runners around the fake agent, and checked runs of them."""

    def __init__(self, workdir: Path, records: Path, contained: Contained) -> None:
        self.workdir = workdir
        self.env_out = records / "env.json"
        self.pids = records / "pids"
        self.contained = contained
        self.checked = 0

    def runner(
        self, *args: str, program: tuple[str, ...] = (sys.executable, AGENT), **settings: Any
    ) -> CommandRunner:
        records = ("--env-out", str(self.env_out), "--pids", str(self.pids))
        return CommandRunner(
            CommandSettings.from_table(
                {
                    "command": [*program, *args, *records, CONTRACT],
                    "command_enforces_read_only": True,
                    **settings,
                }
            )
        )

    def run(
        self,
        r: CommandRunner,
        prompt: str = "Write it.",
        *,
        within: float = QUICK,
        started: bool = True,
        **kw: Any,
    ) -> AgentResult:
        """Run ``r`` in the working directory; check it ended within ``within`` seconds and,
        when the agent ``started``, that it got no secret and left no process behind (else
        that it never ran)."""
        self.checked += 1
        self.env_out.unlink(missing_ok=True)
        self.pids.unlink(missing_ok=True)
        kw.setdefault("max_usd", 0.5)
        begin = time.monotonic()
        result = r.run(run_request(self.workdir, prompt=prompt, contract="Be brief.", **kw))
        elapsed = time.monotonic() - begin
        assert elapsed < within, f"the run took {elapsed:.1f} s, over its bound of {within} s"
        if started:
            self.contained(self.env_out, self.pids)
        else:
            assert (self.env_out.exists(), self.pids.exists()) == (False, False)
        return result


@pytest.fixture(autouse=True)
def fake(
    tmp_path: Path, tmp_path_factory: pytest.TempPathFactory, contained: Contained
) -> Iterator[Fake]:
    checked = Fake(tmp_path, tmp_path_factory.mktemp("records"), contained)
    yield checked
    assert checked.checked > 0, "the test ran nothing through Fake.run"


def test_echo_prompt_on_stdin(fake: Fake) -> None:
    result = fake.run(fake.runner("echo"), "Entwurf für KW 48\n")
    assert (result.status, result.failure_kind, result.draft) == (
        "completed",
        None,
        "Entwurf für KW 48\n",
    )
    assert (result.runner, result.exit_code, result.reason) == ("command", 0, None)
    assert result.limits_unenforced == ("budget", "tools", "turns")


def test_echo_through_prompt_and_output_files(fake: Fake) -> None:
    r = fake.runner("echo", "--prompt-file", "{prompt_file}", "--output-file={output_file}")
    result = fake.run(r, "from a file")
    assert (result.status, result.draft) == ("completed", "from a file")


def test_the_fake_runs_by_its_own_shebang(fake: Fake) -> None:
    r = fake.runner("echo", program=(AGENT,))
    assert fake.run(r, "shebang").draft == "shebang"


def test_a_command_that_never_reads_its_stdin_completes(fake: Fake) -> None:
    # A prompt far larger than a pipe's buffer: hz must not block writing it.
    result = fake.run(fake.runner("no-read"), "x" * (4 * 1024 * 1024))
    assert (result.status, result.draft) == ("completed", "ok\n")


def test_placeholders_private_files_and_working_directory(fake: Fake, tmp_path: Path) -> None:
    r = fake.runner(
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
    result = fake.run(r, "the prompt", tools=("Read", "Grep"), timeout=30, max_usd=0.25)
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
            "--env-out",
            str(fake.env_out),
            "--pids",
            str(fake.pids),
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


def test_empty_profile_passes_the_configured_read_only_tools(fake: Fake) -> None:
    r = fake.runner("inspect", "--tools={tools}", command_read_only_tools=["Read", "Glob"])
    seen = json.loads(fake.run(r).draft or "")
    assert seen["argv"][1] == "--tools=Read,Glob"


def test_fail_reports_exit_code_and_stderr_tail(fake: Fake) -> None:
    r = fake.runner("fail", "--code", "7", "--stderr", "x" * 5000 + "\nquota gone\n")
    result = fake.run(r)
    assert (result.status, result.failure_kind, result.exit_code) == ("failed", "runtime_error", 7)
    assert result.reason == "the command exited with code 7"
    assert len(result.stderr_tail) == 4096
    assert result.stderr_tail.endswith("x\nquota gone\n")
    assert result.draft is None


def test_missing_program_is_launch_failed(fake: Fake, tmp_path: Path) -> None:
    missing = tmp_path / "no-agent"
    result = fake.run(fake.runner(program=(str(missing),)), started=False, within=1.0)
    assert (result.status, result.failure_kind, result.exit_code) == (
        "failed",
        "launch_failed",
        None,
    )
    assert result.reason == f"the command did not start: {missing}: program not found"
    assert result.duration_seconds < 1.0


def test_private_files_that_cannot_be_written_are_launch_failed(
    fake: Fake, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "no-tmp"))
    result = fake.run(fake.runner("echo"), started=False)
    assert (result.status, result.failure_kind) == ("failed", "launch_failed")
    assert result.reason == (
        "the command did not start: cannot write the private run files: No such file or directory"
    )


def test_sleep_past_the_timeout(fake: Fake) -> None:
    result = fake.run(fake.runner("sleep"), timeout=1, within=stopped_within(1))
    assert (result.status, result.failure_kind, result.draft) == ("timeout", None, None)
    assert result.reason == "no result within 1 s; the command's process group was stopped"
    assert result.duration_seconds >= 1


def test_ignoring_sigterm_gets_sigkill_two_seconds_later(fake: Fake) -> None:
    # A 1 s timeout leaves a slow start-up time to ignore SIGTERM before it arrives.
    result = fake.run(fake.runner("ignore-term"), timeout=1, within=stopped_within(1))
    assert (result.status, result.draft) == ("timeout", None)
    assert result.duration_seconds >= 1 + Limits(timeout=1).kill_grace


def test_grandchild_holding_stdout_neither_hangs_the_run_nor_survives(fake: Fake) -> None:
    result = fake.run(fake.runner("grandchild", "--draft", "ok\n"))
    assert (result.status, result.draft) == ("completed", "ok\n")
    assert {p["role"] for p in recorded_pids(fake.pids)} == {"leader", "grandchild"}


def test_inactivity_timeout(fake: Fake) -> None:
    r = fake.runner("sleep", command_inactivity_timeout=1)
    result = fake.run(r, timeout=120, within=stopped_within(1))
    assert (result.status, result.failure_kind) == ("failed", "inactivity_timeout")
    assert result.reason == "no output for 1 s; the command was stopped"
    assert result.duration_seconds >= 1


def test_result_then_hang_is_a_timeout_without_an_invented_draft(fake: Fake) -> None:
    result = fake.run(fake.runner("result-hang"), timeout=1, within=stopped_within(1))
    assert (result.status, result.draft) == ("timeout", None)
    assert result.duration_seconds >= 1


def test_output_file_replaced_by_a_symlink_is_not_followed(fake: Fake, tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP-SECRET-VALUE")
    r = fake.runner("symlink-output", "--output-file={output_file}", "--target", str(secret))
    result = fake.run(r)
    assert (result.status, result.failure_kind) == ("failed", "runtime_error")
    assert result.reason == "the output file is a symbolic link; hz does not follow it"
    assert "TOP-SECRET-VALUE" not in result.model_dump_json()


def test_only_allowlisted_variables_reach_the_child(
    fake: Fake, planted_secrets: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("UNLISTED_SETTING", "not passed either")
    monkeypatch.setenv("AGENT_TOKEN", "passed on purpose")
    monkeypatch.setenv("LC_ALL", "C.UTF-8")
    result = fake.run(fake.runner("env", command_env=["AGENT_TOKEN"]))
    env = json.loads(result.draft or "")
    assert env == recorded_env(fake.env_out)
    assert set(env) <= {"PATH", "HOME", "LANG", "TMPDIR", "LC_ALL", "LC_CTYPE", "AGENT_TOKEN"}
    assert (env["AGENT_TOKEN"], env["LC_ALL"]) == ("passed on purpose", "C.UTF-8")
    assert [v for v in planted_secrets.values() if v in (result.draft or "")] == []


def test_json_output_with_usage_and_cost(fake: Fake) -> None:
    r = fake.runner(
        "json", "--draft", "# Status\n", "--input-tokens", "120", "--output-tokens", "30",
        "--cost", "0.02", command_output="json",
    )  # fmt: skip
    result = fake.run(r)
    assert (result.status, result.draft, result.cost_usd) == ("completed", "# Status\n", 0.02)
    assert result.usage == Usage(input_tokens=120, output_tokens=30)


def test_json_output_under_a_configured_key(fake: Fake) -> None:
    r = fake.runner("json", "--key", "answer", "--draft", "hi", command_output="json",
                    command_json_draft_key="answer")  # fmt: skip
    assert fake.run(r).draft == "hi"


def test_json_output_over_budget_is_a_budget_stop(fake: Fake) -> None:
    r = fake.runner("json", "--draft", "hi", "--cost", "0.75", command_output="json")
    result = fake.run(r, max_usd=0.5)
    assert (result.status, result.failure_kind) == ("budget", "budget_exceeded")
    assert result.reason == "the command reported $0.75, over the budget of $0.5"


def test_malformed_json_is_failed_and_invents_no_draft(fake: Fake) -> None:
    result = fake.run(fake.runner("json", "--raw", "draft: not json", command_output="json"))
    assert (result.status, result.failure_kind, result.draft) == ("failed", "runtime_error", None)
    assert result.reason == (
        "the JSON on stdout is malformed: Expecting value: line 1 column 1 (char 0)"
    )


def test_json_without_the_draft_key(fake: Fake) -> None:
    result = fake.run(fake.runner("json", "--key", "text", command_output="json"))
    assert (result.status, result.reason) == ("failed", "the JSON on stdout has no 'draft' key")


@pytest.mark.parametrize(
    ("args", "reason"),
    [
        ((), "the command wrote nothing to stdout"),
        (("--output-file={output_file}",), "the command wrote nothing to the output file"),
    ],
)
def test_empty_output_is_failed(fake: Fake, args: tuple[str, ...], reason: str) -> None:
    result = fake.run(fake.runner("echo", *args), prompt="  \n")
    assert (result.status, result.failure_kind, result.reason) == (
        "failed",
        "runtime_error",
        reason,
    )


def test_stdout_over_the_cap_is_an_output_limit(fake: Fake) -> None:
    result = fake.run(fake.runner("flood", "--stdout-bytes", str(9 * 1024 * 1024)))
    assert (result.status, result.failure_kind, result.output_truncated) == (
        "failed",
        "output_limit",
        True,
    )
    assert result.reason == "the command wrote more than 8388608 bytes to stdout"
    assert len(result.draft or "") == 8 * 1024 * 1024
