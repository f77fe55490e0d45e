"""`hz validate` takes its max_usd ceiling from the command line, else the configuration."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

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


def _validate(hz_argv: list[str], cwd: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*hz_argv, "validate", "weekly-digest.yaml", *extra],
        cwd=cwd,
        capture_output=True,
        text=True,
        env=None,
        check=False,
    )


def test_project_hz_toml_sets_the_ceiling(hz_argv: list[str], project: Path) -> None:
    (project / "hz.toml").write_text("[authoring]\nmax_usd_ceiling = 0.1\n")
    result = _validate(hz_argv, project)
    assert (result.returncode, result.stdout) == (1, OVER.format("0.1"))


def test_command_line_beats_the_project_file(hz_argv: list[str], project: Path) -> None:
    (project / "hz.toml").write_text("[authoring]\nmax_usd_ceiling = 0.1\n")
    result = _validate(hz_argv, project, "--max-usd-ceiling", "5")
    assert (result.returncode, result.stdout) == (0, "")


def test_user_configuration_sets_the_ceiling(
    hz_argv: list[str], project: Path, isolated_home: Path
) -> None:
    config = isolated_home / ".config" / "hz" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text("[authoring]\nmax_usd_ceiling = 0.25\n")
    result = _validate(hz_argv, project)
    assert (result.returncode, result.stdout) == (1, OVER.format("0.25"))


def test_execution_key_in_project_file_is_a_diagnostic(hz_argv: list[str], project: Path) -> None:
    (project / "hz.toml").write_text('[capabilities]\nagent_runner = "command"\n')
    result = _validate(hz_argv, project)
    assert result.returncode == 1
    assert result.stdout == (
        f"{project / 'hz.toml'}:2:1: error: 'capabilities.agent_runner' configures execution "
        "and is not allowed in a project hz.toml [HZ801]\n"
        "  hint: execution is configured by the operator: the site or user configuration "
        "file, HZ_CONFIG or HZ_* variables\n"
    )


def test_compile_render_and_run_take_the_ceiling_from_the_project(
    hz_argv: list[str], project: Path
) -> None:
    (project / "hz.toml").write_text("[authoring]\nmax_usd_ceiling = 0.1\n")
    inputs = REPO / "contracts" / "inputs" / "weekly-digest.json"
    commands = {
        "compile": ["compile", "weekly-digest.yaml", "--out", "jobs"],
        "render": ["render", "weekly-digest.yaml", "--inputs", str(inputs)],
        "run": ["run", "weekly-digest.yaml", "--inputs", str(inputs), "--dry-run"],
    }
    for name, args in commands.items():
        result = subprocess.run(
            [*hz_argv, *args], cwd=project, capture_output=True, text=True, check=False
        )
        report = result.stdout if name == "compile" else result.stderr.splitlines(True)[0:2]
        assert result.returncode == 1, name
        assert "".join(report) == OVER.format("0.1"), name
    assert not (project / "jobs").exists()


def test_compile_refuses_with_a_broken_project_file(hz_argv: list[str], project: Path) -> None:
    (project / "hz.toml").write_text("[authoring]\nmax_usd_ceilin = 1\n")
    result = subprocess.run(
        [*hz_argv, "compile", "weekly-digest.yaml", "--out", "jobs"],
        cwd=project,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 1
    assert result.stdout.startswith(f"{project / 'hz.toml'}:2:1: error: ")
    assert not (project / "jobs").exists()
