"""An operator configuration binding the command runner to the fake agent (tests/fakes/agent.py),
and ``hz run`` of the shared contract through it as a real process (``hz``), in this process
(``run_greet``) or as a ``Binding``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from hz.runtime.config.layers import load_config
from hz.runtime.ledger.owner import Binding
from tests.conftest import Cli, CliResult
from tests.helpers.contracts import contract
from tests.helpers.in_process import leaves_nothing

REPO = Path(__file__).resolve().parents[2]
AGENT = str(REPO / "tests" / "fakes" / "agent.py")


def command_config(
    tmp_path: Path, *agent_args: str, extra: str = "", pids: Path | None = None
) -> Path:
    """``tmp_path/operator.toml`` binding the command runner to the fake agent (run with
    ``agent_args``, recording its processes in ``pids``), ``extra`` lines appended."""
    recorded = [f"--pids={pids}"] if pids is not None else []
    command = [sys.executable, AGENT, *agent_args, *recorded, "--contract-file={contract_file}"]
    config = tmp_path / "operator.toml"
    config.write_text(
        '[capabilities]\nagent_runner = "command"\n[system.runner]\n'
        f"command = {json.dumps(command)}\n"
        "command_enforces_read_only = true\n"
        'command_read_only_tools = ["Read"]\n' + extra
    )
    return config


def operator(tmp_path: Path, *agent_args: str, extra: str = "") -> str:
    return str(command_config(tmp_path, *agent_args, extra=extra))


def hz(
    hz_argv: list[str], tmp_path: Path, config: str, *args: str, timeout: str = "60s", **env: str
) -> subprocess.CompletedProcess[str]:
    (tmp_path / "greet.yaml").write_text(contract(timeout=timeout))
    return subprocess.run(
        [*hz_argv, "run", "greet.yaml", "--input", "who=Ann", *args],
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(REPO), "HZ_CONFIG": config, **env},
        capture_output=True,
        text=True,
        timeout=120,
    )


def run_greet(
    cli: Cli, tmp_path: Path, config: str, *args: str, timeout: str = "60s", **env: str
) -> CliResult:
    """``hz`` above in this process (no thread, descriptor or handler left behind)."""
    (tmp_path / "greet.yaml").write_text(contract(timeout=timeout))
    with leaves_nothing("hz run"):
        return cli(
            "run", "greet.yaml", "--input", "who=Ann", *args,
            cwd=tmp_path, env={"HZ_CONFIG": config, **env},
        )  # fmt: skip


def command_binding(tmp_path: Path, *agent_args: str) -> Binding:
    config = command_config(tmp_path, *agent_args, pids=tmp_path / "pids")
    return Binding.from_config(load_config(environ={"HZ_CONFIG": str(config)}))
