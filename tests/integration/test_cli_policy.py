"""``hz run`` refuses before anything starts when ``[system.policy]`` requires what the bound
runner does not enforce (exit 2, the reason on stderr), and a run names what it needed and
did not get. hz in process, the fake agent (a real process) through the command runner."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import Cli, default_receipt_dir
from tests.helpers.operator import operator, run_greet


def test_a_requirement_the_runner_cannot_prove_refuses_before_any_process(
    cli: Cli, tmp_path: Path
) -> None:
    pids = tmp_path / "pids"
    policy = '[system.policy]\nrequire = ["timeout", "credential_isolation"]\n'
    config = operator(tmp_path, "echo", f"--pids={pids}")
    Path(config).write_text(Path(config).read_text() + policy)
    done = run_greet(cli, tmp_path, config)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr.splitlines()[0] == (
        "hz: error: runner 'command' does not enforce what [system.policy] requires; nothing "
        "was started: credential_isolation unverified: an environment allowlist keeps unlisted "
        "credentials out of the command's environment "
        "(tests/integration/test_cli_run_command.py::test_no_secret_reaches_the_agent); which "
        "files its agent can read is the command's business"
    )
    assert not pids.exists()
    assert not default_receipt_dir().exists()


def test_an_allowed_unenforced_need_is_named_in_the_result_and_receipt(
    cli: Cli, tmp_path: Path
) -> None:
    config = operator(tmp_path, "echo")
    done = run_greet(cli, tmp_path, config, "--format", "json")
    assert done.returncode == 0, done.stderr
    # The command takes no {tools} and no {max_usd}: neither is enforced.
    assert json.loads(done.stdout)["limits_unenforced"] == ["budget", "tools", "turns"]
    [receipt] = default_receipt_dir().glob("0*.json")
    assert json.loads(receipt.read_text())["limits_unenforced"] == ["budget", "tools", "turns"]


def test_a_policy_value_that_names_no_capability_is_a_configuration_error(
    cli: Cli, tmp_path: Path
) -> None:
    config = operator(tmp_path, "echo")
    Path(config).write_text(Path(config).read_text() + '[system.policy]\nrequire = ["netwrk"]\n')
    done = run_greet(cli, tmp_path, config)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr.splitlines()[0] == (
        f"hz: error: {config}:8:1: [system.policy] require must be a list of capability names "
        "(timeout, budget, tools, turns, structured_output, cancellation, network, sub_agents, "
        "file_writes, credential_isolation), got ['netwrk']"
    )
