"""How a finished command becomes a result: status mapping, output files, JSON output."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from hz.runtime.artifacts.models import Budget
from hz.runtime.artifacts.result import AgentResult, Usage
from hz.runtime.process.bounded import ProcessOutcome
from hz.runtime.runners.command.result import (
    Output,
    OutputProblem,
    parse_json_output,
    read_output_file,
    result_from,
)
from hz.runtime.runners.command.settings import CommandSettings

TEXT = CommandSettings.from_table(
    {"command": ["a", "{contract_file}"], "command_inactivity_timeout": 30}
)
JSON = CommandSettings.from_table({"command": ["a", "{contract_file}"], "command_output": "json"})
BASE = {"runner": "command", "model": "m", "limits_unenforced": ("turns",)}


def result(outcome: ProcessOutcome, output: Any = None, settings: Any = TEXT) -> AgentResult:
    return result_from(
        outcome, output=output, settings=settings, budget=Budget(max_usd=1), timeout=60, base=BASE
    )


def summary(r: AgentResult) -> tuple[Any, ...]:
    return (r.status, r.failure_kind, r.reason, r.draft)


@pytest.mark.parametrize(
    ("outcome", "expected"),
    [
        (
            ProcessOutcome(exit_code=None, launch_error="a: program not found on PATH"),
            (
                "failed",
                "launch_failed",
                "the command did not start: a: program not found on PATH",
                None,
            ),
        ),
        (
            ProcessOutcome(exit_code=None, signal=15, timed_out=True, stdout=b"half"),
            (
                "timeout",
                None,
                "no result within 60 s; the command's process group was stopped",
                None,
            ),
        ),
        (
            ProcessOutcome(exit_code=None, signal=15, inactivity_timed_out=True),
            ("failed", "inactivity_timeout", "no output for 30 s; the command was stopped", None),
        ),
        (
            ProcessOutcome(exit_code=None, signal=9, stdout=b"draft"),
            ("failed", "runtime_error", "the command killed by signal SIGKILL", None),
        ),
        (
            ProcessOutcome(exit_code=2, stdout=b"draft"),
            ("failed", "runtime_error", "the command exited with code 2", None),
        ),
        (ProcessOutcome(exit_code=0, stdout=b"draft\n"), ("completed", None, None, "draft\n")),
        (
            ProcessOutcome(exit_code=0, stdout=b"\n \n"),
            ("failed", "runtime_error", "the command wrote nothing to stdout", None),
        ),
        (
            ProcessOutcome(exit_code=0, stdout=b"caf\xe9"),
            ("completed", None, None, "caf\ufffd"),
        ),
    ],
)
def test_status_mapping(outcome: ProcessOutcome, expected: tuple[Any, ...]) -> None:
    r = result(outcome)
    assert summary(r) == expected
    assert (r.runner, r.model, r.limits_unenforced) == ("command", "m", ("turns",))


def test_failed_result_keeps_exit_code_duration_and_stderr_tail() -> None:
    r = result(ProcessOutcome(exit_code=3, stderr=b"e" * 5000 + b"END", duration_seconds=1.5))
    assert (r.exit_code, r.duration_seconds, len(r.stderr_tail)) == (3, 1.5, 4096)
    assert r.stderr_tail.endswith("eEND")


def test_truncated_text_output_keeps_the_truncated_draft_json_does_not() -> None:
    outcome = ProcessOutcome(exit_code=0, stdout=b"abc", stdout_truncated=True)
    assert summary(result(outcome)) == (
        "failed",
        "output_limit",
        "the command wrote more than 3 bytes to stdout",
        "abc",
    )
    assert result(outcome).output_truncated
    assert result(outcome, settings=JSON).draft is None


def test_output_file_wins_over_stdout_and_its_problems_are_reasons() -> None:
    ok = ProcessOutcome(exit_code=0, stdout=b"noise", stdout_truncated=True)
    assert result(ok, Output(b"from file", False, "the output file")).draft == "from file"
    problem = OutputProblem("the output file is a symbolic link; hz does not follow it")
    assert summary(result(ok, problem)) == (
        "failed",
        "runtime_error",
        "the output file is a symbolic link; hz does not follow it",
        None,
    )


def test_json_cost_over_budget() -> None:
    doc = Output(b'{"draft": "d", "total_cost_usd": 1.5}', False, "stdout")
    r = result(ProcessOutcome(exit_code=0), doc, JSON)
    assert summary(r) == (
        "budget",
        "budget_exceeded",
        "the command reported $1.5, over the budget of $1",
        "d",
    )
    assert r.cost_usd == 1.5


def test_json_fields() -> None:
    data = (
        b'{"draft": {"items": [1]}, '
        b'"usage": {"input_tokens": 5, "cache_read_input_tokens": 7, "x": 1}}'
    )
    assert parse_json_output(data, "draft", "stdout") == {
        "draft": '{"items": [1]}',
        "structured_output": {"items": [1]},
        "usage": Usage(input_tokens=5, cache_read_input_tokens=7),
    }


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"[1]", "the JSON on stdout is not an object"),
        (b'{"draft": 3}', "'draft' in the JSON on stdout is not a string, object or array"),
        (b'{"draft": " "}', "'draft' in the JSON on stdout is empty"),
        (b'{"draft": "d", "usage": 3}', "usage in the JSON on stdout is not an object"),
        (
            b'{"draft": "d", "usage": {"output_tokens": -1}}',
            "usage.output_tokens in the JSON on stdout is not an integer >= 0",
        ),
        (
            b'{"draft": "d", "total_cost_usd": "0.1"}',
            "total_cost_usd in the JSON on stdout is not a number >= 0",
        ),
        (
            b"\xff",
            "the JSON on stdout is malformed: not UTF-8: byte 0xff cannot be decoded",
        ),
    ],
)
def test_json_problems(data: bytes, message: str) -> None:
    with pytest.raises(OutputProblem) as e:
        parse_json_output(data, "draft", "stdout")
    assert str(e.value) == message


def test_output_file_is_read_up_to_the_cap(tmp_path: Path) -> None:
    path = tmp_path / "out"
    path.write_bytes(b"0123456789")
    assert read_output_file(path, cap=10) == Output(b"0123456789", False, "the output file")
    assert read_output_file(path, cap=4) == Output(b"0123", True, "the output file")


def test_output_file_that_is_a_fifo_does_not_block(tmp_path: Path) -> None:
    path = tmp_path / "out"
    os.mkfifo(path)
    with pytest.raises(OutputProblem) as e:
        read_output_file(path)
    assert str(e.value) == "the output file is not a regular file"


def test_output_file_removed_or_behind_a_symlinked_directory(tmp_path: Path) -> None:
    with pytest.raises(OutputProblem) as e:
        read_output_file(tmp_path / "gone")
    assert str(e.value) == "the command removed the output file"
    real = tmp_path / "real"
    real.mkdir()
    (real / "out").write_text("secret")
    (tmp_path / "swapped").symlink_to(real)
    with pytest.raises(OutputProblem) as e:
        read_output_file(tmp_path / "swapped" / "out")
    assert str(e.value) == (
        "the private directory was replaced by a symbolic link; hz does not follow it"
    )
