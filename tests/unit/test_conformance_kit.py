"""The conformance kit's own checks fail when they should: a leaked secret, a survivor."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from hz.runtime.artifacts.result import AgentResult
from hz.runtime.testing import conformance


def test_a_planted_secret_in_the_agents_environment_fails(tmp_path: Path) -> None:
    env = {"PATH": "/usr/bin", "LEAK": f"x{conformance.PLANTED['OPENAI_API_KEY']}x"}
    (tmp_path / "env.json").write_text(json.dumps(env))
    with pytest.raises(
        AssertionError, match="the planted OPENAI_API_KEY reached the agent as LEAK"
    ):
        conformance._check_environment(tmp_path)


def test_a_clean_environment_passes(tmp_path: Path) -> None:
    (tmp_path / "env.json").write_text(json.dumps({"PATH": "/usr/bin"}))
    conformance._check_environment(tmp_path)


def test_a_surviving_process_fails_and_is_killed(tmp_path: Path) -> None:
    survivor = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    (tmp_path / "pids").write_text(f"{survivor.pid} {survivor.pid}\n")
    with pytest.raises(
        AssertionError, match=rf"processes of the run survived it: \[{survivor.pid}\]"
    ):
        conformance._check_no_survivors(tmp_path, patience=0.2)
    assert survivor.wait(timeout=5) == -9


@pytest.mark.parametrize(
    ("scenario", "result", "message"),
    [
        ("sleep", AgentResult(runner="x", status="completed"), "sleep: completed"),
        ("crash", AgentResult(runner="x", status="completed"), "crash: completed"),
        (
            "garbage",
            AgentResult(runner="x", status="failed"),
            "garbage: failed without a failure_kind",
        ),
    ],
)
def test_an_untyped_outcome_fails(scenario: str, result: AgentResult, message: str) -> None:
    with pytest.raises(AssertionError, match=message):
        conformance._check_outcome(scenario, result)


def test_only_the_cases_that_apply_are_generated() -> None:
    class Processless(conformance.RunnerConformance):
        scenarios = ()

    class Crashing(Processless):
        scenarios = ("crash",)
        repository = Path(".")

    assert (Processless.test_scenario, Processless.test_descriptor_evidence_exists) == (None, None)
    assert Crashing.test_scenario is conformance.RunnerConformance.test_scenario
    assert (
        Crashing.test_descriptor_evidence_exists
        is conformance.RunnerConformance.test_descriptor_evidence_exists
    )
