"""`hz validate` takes its max_usd ceiling from the command line, else the configuration."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.conftest import Cli, CliResult

REPO = Path(__file__).resolve().parents[2]
OVER = (
    "weekly-digest.yaml:9:14: error: hz.agent.max_usd: 0.5 is over the ceiling of {} US dollars "
    "[HZ304]\n  hint: lower the budget, or raise the ceiling: [authoring] max_usd_ceiling in "
    "the hz configuration, or --max-usd-ceiling\n"
)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / ".git").mkdir()
    shutil.copy(REPO / "contracts" / "weekly-digest.yaml", tmp_path)
    return tmp_path


def _validate(cli: Cli, cwd: Path, *extra: str) -> CliResult:
    return cli("validate", "weekly-digest.yaml", *extra, cwd=cwd)


def test_project_hz_toml_sets_the_ceiling(cli: Cli, project: Path) -> None:
    (project / "hz.toml").write_text("[authoring]\nmax_usd_ceiling = 0.1\n")
    result = _validate(cli, project)
    assert (result.returncode, result.stdout) == (1, OVER.format("0.1"))


def test_command_line_beats_the_project_file(cli: Cli, project: Path) -> None:
    (project / "hz.toml").write_text("[authoring]\nmax_usd_ceiling = 0.1\n")
    result = _validate(cli, project, "--max-usd-ceiling", "5")
    assert (result.returncode, result.stdout) == (0, "")


def test_user_configuration_sets_the_ceiling(cli: Cli, project: Path, isolated_home: Path) -> None:
    config = isolated_home / ".config" / "hz" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text("[authoring]\nmax_usd_ceiling = 0.25\n")
    result = _validate(cli, project)
    assert (result.returncode, result.stdout) == (1, OVER.format("0.25"))


def test_execution_key_in_project_file_is_a_diagnostic(cli: Cli, project: Path) -> None:
    (project / "hz.toml").write_text('[capabilities]\nagent_runner = "command"\n')
    result = _validate(cli, project)
    assert result.returncode == 1
    assert result.stdout == (
        f"{project / 'hz.toml'}:2:1: error: 'capabilities.agent_runner' configures execution "
        "and is not allowed in a project hz.toml [HZ801]\n"
        "  hint: execution is configured by the operator: the site or user configuration "
        "file, HZ_CONFIG or HZ_* variables\n"
    )


def test_compile_render_and_run_take_the_ceiling_from_the_project(cli: Cli, project: Path) -> None:
    (project / "hz.toml").write_text("[authoring]\nmax_usd_ceiling = 0.1\n")
    inputs = REPO / "contracts" / "inputs" / "weekly-digest.json"
    commands = {
        "compile": ["compile", "weekly-digest.yaml", "--out", "jobs"],
        "render": ["render", "weekly-digest.yaml", "--inputs", str(inputs)],
        "run": ["run", "weekly-digest.yaml", "--inputs", str(inputs), "--dry-run"],
    }
    for name, args in commands.items():
        result = cli(*args, cwd=project)
        report = result.stdout if name == "compile" else result.stderr.splitlines(True)[0:2]
        assert result.returncode == 1, name
        assert "".join(report) == OVER.format("0.1"), name
    assert not (project / "jobs").exists()


def test_compile_refuses_with_a_broken_project_file(cli: Cli, project: Path) -> None:
    (project / "hz.toml").write_text("[authoring]\nmax_usd_ceilin = 1\n")
    result = cli("compile", "weekly-digest.yaml", "--out", "jobs", cwd=project)
    assert result.returncode == 1
    assert result.stdout.startswith(f"{project / 'hz.toml'}:2:1: error: ")
    assert not (project / "jobs").exists()
