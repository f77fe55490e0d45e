"""``hz doctor`` in process: one line per check, exact; exit 1 when any check failed."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from hz.runtime.runners import registry
from tests.conftest import Cli

REPO = Path(__file__).resolve().parents[2]
AGENT = str(REPO / "tests" / "fakes" / "agent.py")


def doctor(cli: Cli, cwd: Path, config: str | None, *, providers: bool = False) -> tuple[int, str]:
    """The exit status and output of ``hz doctor``; the providers' lines only with
    ``providers`` (``test_providers_are_checked_after_the_runner`` asserts them)."""
    env = {}
    if config is not None:
        (cwd / "operator.toml").write_text(config)
        env["HZ_CONFIG"] = str(cwd / "operator.toml")
    done = cli("doctor", cwd=cwd, env=env)
    assert done.stderr == ""
    lines = done.stdout.splitlines(keepends=True)
    kept = [line for line in lines if providers or not line[9:].startswith("provider ")]
    return done.returncode, "".join(kept)


def _head(home: Path, cwd: Path, project: str = "config project: none found") -> list[str]:
    return [
        f"ok       config site: {home / 'no-site-config.toml'} (not present)",
        f"ok       config user: {home / '.config/hz/config.toml'} (not present)",
        f"ok       {project}",
        f"ok       config HZ_CONFIG: {cwd / 'operator.toml'}",
        "ok       config environment: no HZ_* settings",
    ]


def test_echo_runner(cli: Cli, tmp_path: Path, isolated_home: Path) -> None:
    code, out = doctor(cli, tmp_path, '[capabilities]\nagent_runner = "echo"\n')
    assert (code, out.splitlines()) == (
        0,
        [
            *_head(isolated_home, tmp_path),
            "ok       runner: echo (core)",
            "ok       capabilities: timeout hard, budget hard, tools hard, turns hard, "
            "structured_output advisory",
            "ok       echo: built in; starts no process, answers with the prompt",
        ],
    )


def test_providers_are_checked_after_the_runner(
    cli: Cli, tmp_path: Path, isolated_home: Path
) -> None:
    config = '[capabilities]\nagent_runner = "echo"\ngit = "files"\ntracker = "gthub"\n'
    code, out = doctor(cli, tmp_path, config, providers=True)
    assert (code, out.splitlines()[-3:]) == (
        0,
        [
            "ok       provider files: files: reads the working directory's files: up to 200 "
            "files, 1,048,576 bytes each, 4,194,304 in all",
            "degraded provider git: files: provider 'files' serves no git operation",
            "degraded provider tracker: gthub: unknown provider 'gthub' (did you mean 'github'?); "
            "known providers: command, files, git, github (hz providers lists them)",
        ],
    )


COMMAND = f"""\
[capabilities]
agent_runner = "command"
[system.runner]
command = ["{sys.executable}", "{AGENT}", "echo", "--contract-file={{contract_file}}"]
"""

#: A command whose program name holds a terminal's escape sequence.
ESCAPED = (
    '[capabilities]\nagent_runner = "command"\n[system.runner]\n'
    'command = ["no-such\\u001b]0;t\\u0007agent", "{contract_file}"]\n'
    "command_enforces_read_only = true\n"
)

COMMAND_HEAD = [
    "ok       runner: command (core)",
    "ok       capabilities: timeout hard, budget advisory, tools advisory, turns unsupported, "
    "structured_output unsupported",
    "ok       command runner settings: valid",
    f"ok       command executable: {sys.executable}",
]


def test_command_runner_is_degraded_while_it_refuses_to_run(
    cli: Cli, tmp_path: Path, isolated_home: Path
) -> None:
    code, out = doctor(cli, tmp_path, COMMAND)
    assert (code, out.splitlines()) == (
        0,
        [
            *_head(isolated_home, tmp_path),
            *COMMAND_HEAD,
            "degraded command read-only: refuses to run until [system.runner] "
            "command_enforces_read_only = true (hz cannot check that the command restricts its "
            "agent to read-only tools)",
        ],
    )


def test_required_budget_the_runner_cannot_enforce_fails(
    cli: Cli, tmp_path: Path, isolated_home: Path
) -> None:
    config = COMMAND + "command_enforces_read_only = true\nrequire_enforced_budget = true\n"
    code, out = doctor(cli, tmp_path, config)
    assert (code, out.splitlines()) == (
        1,
        [
            *_head(isolated_home, tmp_path),
            *COMMAND_HEAD[:2],
            "FAILED   enforced budget: runner 'command' cannot enforce a budget (advisory) and "
            "[system.runner] require_enforced_budget is true; nothing was started",
            *COMMAND_HEAD[2:],
            "ok       command read-only: declared by command_enforces_read_only",
        ],
    )


def test_hostile_project_file_and_broken_operator_file(
    cli: Cli, tmp_path: Path, isolated_home: Path
) -> None:
    (tmp_path / "hz.toml").write_text('[system.runner]\nclaude_executable = "/tmp/x"\n')
    code, out = doctor(cli, tmp_path, "[capabilities]\nagent_runner = \n")
    project = tmp_path / "hz.toml"
    assert (code, out.splitlines()) == (
        1,
        [
            *_head(isolated_home, tmp_path)[:2],
            f"FAILED   config project: {project}:2:1: HZ801 'system.runner.claude_executable' "
            "configures execution and is not allowed in a project hz.toml",
            f"FAILED   config HZ_CONFIG: {tmp_path / 'operator.toml'}:2:16: invalid TOML: "
            "Invalid value",
            "ok       config environment: no HZ_* settings",
        ],
    )


def test_unknown_runner_fails(cli: Cli, tmp_path: Path, isolated_home: Path) -> None:
    code, out = doctor(cli, tmp_path, '[capabilities]\nagent_runner = "nope"\n')
    known = ", ".join(name for name, _ in registry.available())
    assert (code, out.splitlines()[-1]) == (
        1,
        f"FAILED   runner: unknown runner 'nope'; known runners: {known}",
    )


def test_a_detail_quoting_a_program_is_escaped(
    cli: Cli, tmp_path: Path, isolated_home: Path
) -> None:
    code, out = doctor(cli, tmp_path, ESCAPED)
    assert code == 1
    assert "FAILED   command executable: no-such\\x1b]0;t\\x07agent: not found on PATH" in (
        out.splitlines()
    )


def test_json_holds_every_check_and_whether_all_passed(
    cli: Cli, tmp_path: Path, isolated_home: Path
) -> None:
    (tmp_path / "operator.toml").write_text(ESCAPED)
    done = cli("doctor", "--format", "json", cwd=tmp_path, env={"HZ_CONFIG": "operator.toml"})
    assert (done.returncode, done.stderr) == (1, "")
    assert "\x1b" not in done.stdout  # escaped as JSON, not a terminal's sequence
    document = json.loads(done.stdout)
    assert (document["kind"], document["ok"]) == ("doctor", False)
    assert document["checks"][:2] == [
        {
            "name": "config site",
            "status": "ok",
            "detail": f"{isolated_home / 'no-site-config.toml'} (not present)",
        },
        {
            "name": "config user",
            "status": "ok",
            "detail": f"{isolated_home / '.config/hz/config.toml'} (not present)",
        },
    ]
    assert {
        "name": "command executable",
        "status": "failed",
        "detail": "no-such\x1b]0;t\x07agent: not found on PATH",
    } in document["checks"]
    text = cli("doctor", cwd=tmp_path, env={"HZ_CONFIG": "operator.toml"}).stdout
    assert [f"{c['status']} {c['name']}" for c in document["checks"]] == [
        " ".join(line.replace("FAILED", "failed").split(":")[0].split())
        for line in text.splitlines()
    ]
