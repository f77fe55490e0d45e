"""``hz runners`` as a real process: the installed runners, and plugins found through the
``hz.runners`` entry-point group of a distribution on the path (working and broken)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from syrupy.assertion import SnapshotAssertion

# Its children run code no in-process test runs: coverage measures them.
pytestmark = pytest.mark.child_coverage

PLUGIN = """
from hz.runtime.runners.protocol import Capabilities, Check
from hz.runtime.runners.settings import RunnerSettings


class DemoSettings(RunnerSettings):
    demo_level: int = 1


class DemoRunner:
    name = "demo"
    settings_model = DemoSettings

    def __init__(self, settings):
        self.settings = settings

    @classmethod
    def capabilities(cls, settings):
        return Capabilities(
            timeout="hard", budget="advisory", tools="unsupported", turns="hard",
            structured_output="unsupported",
        )

    @classmethod
    def doctor(cls, settings):
        return [Check("demo", "ok", "fine")]
"""


def hz(
    hz_argv: list[str], *args: str, pythonpath: Path | None = None
) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    if pythonpath is not None:
        env["PYTHONPATH"] = str(pythonpath)
    return subprocess.run(
        [*hz_argv, "runners", *args], capture_output=True, text=True, env=env, timeout=60
    )


@pytest.fixture
def plugins(tmp_path: Path) -> Path:
    """A directory holding an installed-looking distribution ``hz-demo-plugins`` with two
    runner entry points: ``demo`` (works) and ``broken`` (its module does not exist)."""
    (tmp_path / "hz_demo_runner.py").write_text(PLUGIN)
    dist = tmp_path / "hz_demo_plugins-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: hz-demo-plugins\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text(
        "[hz.runners]\n"
        "demo = hz_demo_runner:DemoRunner\n"
        "broken = hz_missing_module:Runner\n"
        "command = hz_demo_runner:DemoRunner\n"
    )
    return tmp_path


def test_text_lists_core_runners_and_the_codex_plugin(
    hz_argv: list[str], snapshot: SnapshotAssertion
) -> None:
    done = hz(hz_argv)
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout == snapshot
    codex = next(line for line in done.stdout.splitlines() if line.startswith("codex "))
    assert codex.split() == [
        "codex",
        "hz-contracts",
        "hard",
        "unsupported",
        "unsupported",
        "unsupported",
        "hard",
    ]


def test_json(hz_argv: list[str], snapshot: SnapshotAssertion) -> None:
    done = hz(hz_argv, "--format", "json")
    assert done.returncode == 0
    data = json.loads(done.stdout)
    assert data == snapshot
    assert {r["name"]: r["source"] for r in data["runners"]}["codex"] == "hz-contracts"


def test_plugins_are_listed_with_their_distribution_and_a_broken_one_fails(
    hz_argv: list[str], plugins: Path
) -> None:
    done = hz(hz_argv, "--format", "json", pythonpath=plugins)
    assert done.returncode == 1
    rows = {r["name"]: r for r in json.loads(done.stdout)["runners"]}
    assert rows["demo"] == {
        "name": "demo",
        "source": "hz-demo-plugins",
        "capabilities": {
            "timeout": "hard",
            "budget": "advisory",
            "tools": "unsupported",
            "turns": "hard",
            "structured_output": "unsupported",
        },
        # A plugin that publishes no descriptor proves nothing: what it does not call
        # unsupported is unverified.
        "descriptor": {
            "runner": "demo",
            "cli_version": None,
            "capabilities": {
                name: (
                    {
                        "support": "unsupported",
                        "evidence": [],
                        "reason": f"the runner says it does not enforce {name}",
                    }
                    if name in ("tools", "structured_output")
                    else {
                        "support": "unverified",
                        "evidence": [],
                        "reason": "the runner publishes no capability descriptor"
                        + (f"; it claims {name} is {claimed}" if claimed else ""),
                    }
                )
                for name, claimed in [
                    ("timeout", "hard"),
                    ("budget", "advisory"),
                    ("tools", ""),
                    ("turns", "hard"),
                    ("structured_output", ""),
                    ("cancellation", ""),
                    ("network", ""),
                    ("sub_agents", ""),
                    ("file_writes", ""),
                    ("credential_isolation", ""),
                ]
            },
        },
        "error": None,
    }
    assert rows["broken"] == {
        "name": "broken",
        "source": "hz-demo-plugins",
        "capabilities": None,
        "descriptor": None,
        "error": "runner plugin 'broken' from hz-demo-plugins failed to load "
        "(hz_missing_module:Runner): ModuleNotFoundError: No module named 'hz_missing_module'",
    }
    # A plugin cannot take a core runner's name.
    assert rows["command"]["source"] == "core"


def test_text_names_a_broken_plugin(hz_argv: list[str], plugins: Path) -> None:
    done = hz(hz_argv, pythonpath=plugins)
    assert done.returncode == 1
    lines = done.stdout.splitlines()
    assert lines[1].split() == ["broken", "hz-demo-plugins", "-", "-", "-", "-", "-"]
    assert (
        "broken: cannot be loaded: runner plugin 'broken' from hz-demo-plugins failed to load "
        "(hz_missing_module:Runner): ModuleNotFoundError: No module named 'hz_missing_module'"
    ) in lines
