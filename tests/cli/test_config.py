"""``hz config show``: the effective configuration and where each value came from."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import Cli, CliResult

REPO = Path(__file__).resolve().parents[2]


def show(cli: Cli, cwd: Path, *args: str, **env: str) -> CliResult:
    return cli("config", "show", *args, cwd=cwd, env=env)


def _setup(tmp_path: Path) -> dict[str, str]:
    (tmp_path / "xdg" / "hz").mkdir(parents=True)
    (tmp_path / "xdg" / "hz" / "config.toml").write_text(
        '[capabilities]\nagent_runner = "command"\n\n[system.runner]\nmodel = "user-model"\n'
    )
    (tmp_path / "hz.toml").write_text("[authoring]\nmax_usd_ceiling = 5\n")
    return {"XDG_CONFIG_HOME": str(tmp_path / "xdg"), "HZ_RUNNER": "echo"}


def test_text(cli: Cli, tmp_path: Path, isolated_home: Path) -> None:
    done = show(cli, tmp_path, **_setup(tmp_path))
    user = tmp_path / "xdg" / "hz" / "config.toml"
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout == (
        "# sources, lowest precedence first:\n"
        "#   default      built in\n"
        f"#   site         {isolated_home / 'no-site-config.toml'} (not present)\n"
        f"#   user         {user}\n"
        f"#   project      {tmp_path / 'hz.toml'}\n"
        "#   HZ_CONFIG    not set\n"
        "#   environment  HZ_RUNNER\n"
        "\n"
        "[capabilities]\n"
        'agent_runner = "echo"  # environment HZ_RUNNER\n'
        "\n"
        "# not set:\n"
        '# files = "files"\n'
        '# git = "git"\n'
        "# code-host is unset\n"
        "# tracker is unset\n"
        "\n"
        "[system.runner]\n"
        f'model = "user-model"  # user {user}:5:1\n'
        "\n"
        "# not set:\n"
        "# max_turns is unset\n"
        "# require_enforced_budget = false\n"
        "# receipt_dir is unset\n"
        '# echo_status = "completed"\n'
        "# echo_failure_kind is unset\n"
        '# echo_draft = "prompt"\n'
        "# echo_retry_after is unset\n"
        "\n"
        "[authoring]\n"
        f"max_usd_ceiling = 5  # project {tmp_path / 'hz.toml'}:2:1\n"
        "\n"
        "[system]\n"
        "# not set:\n"
        "# state_dir is unset\n"
        "# max_attempts = 3\n"
        "# max_parallel = 1\n"
        "\n"
        "[system.budget]\n"
        "# not set:\n"
        "# max_usd_per_day is unset\n"
        "# per_runner = {}\n"
        "# hold_wait_min_seconds = 1\n"
        "# hold_wait_max_seconds = 30\n"
        "\n"
        "[system.policy]\n"
        "# not set:\n"
        '# require = ["timeout", "file_writes", "network", "sub_agents"]\n'
        '# allow_unenforced = ["budget", "tools", "turns", "structured_output"]\n'
        "\n"
        "[system.queue]\n"
        "# not set:\n"
        '# backend = "sqlite"\n'
        "# dsn_env is unset\n"
        "# lease_seconds = 15.0\n"
        "# poll_seconds is unset\n"
        "\n"
        "[system.schedules]\n"
        "# not set:\n"
        "# jobs is unset\n"
        "# max_followers = 100\n"
        "\n"
        "[publish]\n"
        "# not set:\n"
        '# mode = "auto"\n'
        "# allow = []\n"
        "# folders = []\n"
        "# repositories = []\n"
        '# jobs = ["*"]\n'
        "# mentions = false\n"
        "# overwrite = false\n"
        "# webhooks = {}\n"
        "# commands = {}\n"
    )


def test_text_lists_the_bound_runners_keys_from_its_settings_model(
    cli: Cli, tmp_path: Path
) -> None:
    done = show(cli, tmp_path, HZ_RUNNER="codex", HZ_SYSTEM_RUNNER__MAX_TURNS="3")
    runner = done.stdout.split("[system.runner]\n")[1].split("\n\n[")[0]
    assert runner.splitlines() == [
        "max_turns = 3  # environment HZ_SYSTEM_RUNNER__MAX_TURNS",
        "",
        "# not set:",
        "# model is unset",
        "# require_enforced_budget = false",
        "# receipt_dir is unset",
        '# codex_executable = "codex"',
        "# codex_config = []",
        "# codex_env = []",
        "# codex_home is unset",
    ]


def test_json(cli: Cli, tmp_path: Path, isolated_home: Path) -> None:
    done = show(cli, tmp_path, "--format", "json", **_setup(tmp_path))
    user = str(tmp_path / "xdg" / "hz" / "config.toml")
    assert json.loads(done.stdout) == {
        "settings": [
            {
                "table": "authoring",
                "key": "max_usd_ceiling",
                "value": 5,
                "layer": "project",
                "where": f"{tmp_path / 'hz.toml'}:2:1",
            },
            {
                "table": "capabilities",
                "key": "agent_runner",
                "value": "echo",
                "layer": "environment",
                "where": "HZ_RUNNER",
            },
            {
                "table": "system.runner",
                "key": "model",
                "value": "user-model",
                "layer": "user",
                "where": f"{user}:5:1",
            },
        ],
        "defaults": [
            {"table": table, "key": key, "value": value}
            for table, key, value in [
                ("capabilities", "files", "files"),
                ("capabilities", "git", "git"),
                ("capabilities", "code-host", None),
                ("capabilities", "tracker", None),
                ("system.runner", "max_turns", None),
                ("system.runner", "require_enforced_budget", False),
                ("system.runner", "receipt_dir", None),
                ("system.runner", "echo_status", "completed"),
                ("system.runner", "echo_failure_kind", None),
                ("system.runner", "echo_draft", "prompt"),
                ("system.runner", "echo_retry_after", None),
                ("system", "state_dir", None),
                ("system", "max_attempts", 3),
                ("system", "max_parallel", 1),
                ("system.budget", "max_usd_per_day", None),
                ("system.budget", "per_runner", {}),
                ("system.budget", "hold_wait_min_seconds", 1),
                ("system.budget", "hold_wait_max_seconds", 30),
                ("system.policy", "require", ["timeout", "file_writes", "network", "sub_agents"]),
                (
                    "system.policy",
                    "allow_unenforced",
                    ["budget", "tools", "turns", "structured_output"],
                ),
                ("system.queue", "backend", "sqlite"),
                ("system.queue", "dsn_env", None),
                ("system.queue", "lease_seconds", 15.0),
                ("system.queue", "poll_seconds", None),
                ("system.schedules", "jobs", None),
                ("system.schedules", "max_followers", 100),
                ("publish", "mode", "auto"),
                ("publish", "allow", []),
                ("publish", "folders", []),
                ("publish", "repositories", []),
                ("publish", "jobs", ["*"]),
                ("publish", "mentions", False),
                ("publish", "overwrite", False),
                ("publish", "webhooks", {}),
                ("publish", "commands", {}),
            ]
        ],
        "sources": [
            {"layer": "default", "where": None, "state": "loaded"},
            {
                "layer": "site",
                "where": str(isolated_home / "no-site-config.toml"),
                "state": "missing",
            },
            {"layer": "user", "where": user, "state": "loaded"},
            {"layer": "project", "where": str(tmp_path / "hz.toml"), "state": "loaded"},
            {"layer": "HZ_CONFIG", "where": None, "state": "unset"},
            {"layer": "environment", "where": "HZ_RUNNER", "state": "loaded"},
        ],
        "jobs": [],
    }


def test_a_hostile_project_file_stops_with_hz801(cli: Cli, tmp_path: Path) -> None:
    (tmp_path / "hz.toml").write_text('[capabilities]\nagent_runner = "command"\n')
    done = show(cli, tmp_path)
    assert (done.returncode, done.stdout, done.stderr) == (
        2,
        "",
        f"hz: error: {tmp_path / 'hz.toml'}:2:1: HZ801 'capabilities.agent_runner' configures "
        "execution and is not allowed in a project hz.toml\n"
        "  hint: execution is configured by the operator: the site or user configuration file, "
        "HZ_CONFIG or HZ_* variables\n",
    )


def test_text_escapes_paths_and_characters_json_leaves(cli: Cli, tmp_path: Path) -> None:
    where = tmp_path / "a\x1b[2J\n::warning::x"
    where.mkdir()
    (where / "c.toml").write_text('[system.runner]\nmodel = "\u202eabc\u2028"\n')
    done = show(cli, tmp_path, HZ_CONFIG=str(where / "c.toml"))
    shown = f"{tmp_path}/a\\x1b[2J\\n::warning::x/c.toml"
    assert done.returncode == 0
    assert done.stdout.splitlines()[5] == f"#   HZ_CONFIG    {shown}"
    assert f'model = "\\u202eabc\\u2028"  # HZ_CONFIG {shown}:2:1' in done.stdout.splitlines()
