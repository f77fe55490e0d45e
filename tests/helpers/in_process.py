"""``hz`` in process in a working directory, as an operator with a state directory there and,
when given, a configuration (the ``hz run`` tests' helper)."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import Cli, CliResult


def hz(cli: Cli, cwd: Path, *args: str, config: str = "", **env: str) -> CliResult:
    # The operator's state directory, where the ledger and the default receipt chain live.
    env.setdefault("HZ_STATE_DIR", "state")
    if config:
        (cwd / "operator.toml").write_text(config)
        env["HZ_CONFIG"] = str(cwd / "operator.toml")
    return cli(*args, cwd=cwd, env=env)


#: The operator configuration binding the built-in echo runner.
ECHO = '[capabilities]\nagent_runner = "echo"\n'
