"""``[jobs."NAME"]`` tables: another runner, other settings and another ceiling for the jobs a
name or glob matches, in every place a run starts, shown by hz config show, hz run --dry-run
and hz runs show."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

from tests.conftest import Cli, CliResult
from tests.helpers.contracts import GREET as CONTRACT

REPO = Path(__file__).resolve().parents[2]
AGENT = str(REPO / "tests" / "fakes" / "agent.py")
COMMAND = [
    sys.executable,
    AGENT,
    "echo",
    "--prompt-file={prompt_file}",
    "--contract-file={contract_file}",
]

OPERATOR = f"""\
[capabilities]
agent_runner = "echo"

[jobs."review-*"]
agent_runner = "command"
command = {json.dumps(COMMAND)}
command_enforces_read_only = true
command_read_only_tools = ["Read"]
"""


def write(tmp_path: Path, operator: str) -> dict[str, str]:
    (tmp_path / "greet.yaml").write_text(CONTRACT)
    (tmp_path / "review-pr.yaml").write_text(CONTRACT.replace("name: greet", "name: review-pr"))
    (tmp_path / "operator.toml").write_text(operator)
    return {"HZ_CONFIG": str(tmp_path / "operator.toml"), "HZ_STATE_DIR": str(tmp_path / "s")}


def hz(cli: Cli, tmp_path: Path, operator: str, *args: str) -> CliResult:
    return cli(*args, cwd=tmp_path, env=write(tmp_path, operator))


def test_a_glob_table_runs_its_jobs_through_another_runner(cli: Cli, tmp_path: Path) -> None:
    done = hz(
        cli, tmp_path, OPERATOR, "run", "-j", "1", "greet.yaml", "review-pr.yaml", "--input",
        "who=Ann", "--format", "jsonl",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    runs = {r["job_name"]: r for r in map(json.loads, done.stdout.splitlines())}
    assert {job: (r["runner"], r["result"]["runner"]) for job, r in runs.items()} == {
        "greet": ("echo", "echo"),
        "review-pr": ("command", "command"),
    }
    config = tmp_path / "operator.toml"
    prepared = {}
    for job, r in runs.items():
        shown = cli("runs", "show", r["id"], cwd=tmp_path, env=write(tmp_path, OPERATOR))
        lines = shown.stdout.splitlines()
        assert lines[2] == f"job:         {job}"
        prepared[job] = next(re.sub(r"^\s*\S+\s+", "", x) for x in lines if " prepared " in x)
    assert prepared == {
        "greet": "prepared    runner echo",
        "review-pr": f'prepared    runner command, bound by [jobs."review-*"] ({config}:5:1)',
    }


def test_a_queued_run_is_bound_by_its_jobs_table_in_the_worker(cli: Cli, tmp_path: Path) -> None:
    env = write(tmp_path, OPERATOR)
    ids = {}
    for job in ("greet", "review-pr"):
        done = cli("submit", f"{job}.yaml", "--input", "who=Bo", cwd=tmp_path, env=env)
        ids[job] = done.stdout.strip()
    assert cli("worker", "--drain", cwd=tmp_path, env=env).returncode == 0
    shown = {
        job: json.loads(cli("runs", "show", i, "--format", "json", cwd=tmp_path, env=env).stdout)
        for job, i in ids.items()
    }
    prepared = {
        job: (d["runner"], next(e["detail"] for e in d["timeline"] if e["state"] == "prepared"))
        for job, d in shown.items()
    }
    assert prepared == {
        "greet": ("echo", "runner echo"),
        "review-pr": (
            "command",
            f'runner command, bound by [jobs."review-*"] ({tmp_path / "operator.toml"}:5:1)',
        ),
    }


def test_dry_run_names_the_table(cli: Cli, tmp_path: Path) -> None:
    config = tmp_path / "operator.toml"
    for target, bound in (
        ("review-pr.yaml", f'[jobs."review-*"] ({config}:5:1)'),
        ("greet.yaml", "the base tables (no jobs table matches)"),
    ):
        done = hz(cli, tmp_path, OPERATOR, "run", target, "--input", "who=Ann", "--dry-run")
        assert done.stdout.splitlines()[-1] == f"  bound by:     {bound}"


def test_the_most_specific_table_wins(cli: Cli, tmp_path: Path) -> None:
    operator = """\
[jobs."*"]
model = "any"
[jobs."review-pr"]
model = "exact"
[jobs."review-*"]
model = "glob"
[jobs."r*"]
model = "short glob"
[jobs."review-?"]
model = "tie, defined last"
"""
    env = write(tmp_path, operator)
    for job, model in (
        ("review-pr", "exact"),
        ("review-x", "tie, defined last"),
        ("rust", "short glob"),
        ("greet", "any"),
    ):
        done = cli("config", "show", "--job", job, "--format", "json", cwd=tmp_path, env=env)
        settings = json.loads(done.stdout)["settings"]
        assert [s["value"] for s in settings if s["key"] == "model"] == [model], job


def test_config_show_job(cli: Cli, tmp_path: Path) -> None:
    operator = OPERATOR + "max_usd_ceiling = 2\n"
    done = hz(cli, tmp_path, operator, "config", "show", "--job", "review-pr")
    config = tmp_path / "operator.toml"
    lines = done.stdout.splitlines()
    assert lines[7:11] == [
        f'# job review-pr: [jobs."review-*"] applies (HZ_CONFIG {config}:5:1)',
        "",
        "[capabilities]",
        f'agent_runner = "command"  # HZ_CONFIG {config}:5:1',
    ]
    assert f"max_usd_ceiling = 2  # HZ_CONFIG {config}:9:1" in lines
    plain = hz(cli, tmp_path, operator, "config", "show", "--job", "greet").stdout.splitlines()
    assert plain[7:11] == [
        "# job greet: no jobs table matches; the base tables apply",
        "",
        "[capabilities]",
        f'agent_runner = "echo"  # HZ_CONFIG {config}:2:1',
    ]


def test_a_jobs_ceiling_holds_its_jobs_only(cli: Cli, tmp_path: Path) -> None:
    operator = '[capabilities]\nagent_runner = "echo"\n[jobs."review-*"]\nmax_usd_ceiling = 0.1\n'
    refused = hz(cli, tmp_path, operator, "run", "review-pr.yaml", "--input", "who=A")
    assert refused.returncode == 2
    assert refused.stderr.splitlines()[0] == (
        "hz: error: review-pr.yaml: the job's budget of 0.5 US dollars is over this machine's "
        "ceiling of 0.1"
    )
    assert hz(cli, tmp_path, operator, "run", "greet.yaml", "--input", "who=A").returncode == 0


def test_validate_and_compile_hold_each_job_to_its_tables_ceiling(cli: Cli, tmp_path: Path) -> None:
    """As hz run does: a table's ceiling below the job's budget fails validate and compile at
    the budget's line; a table's ceiling above [authoring]'s lets its job through."""
    lower = '[jobs."review-*"]\nmax_usd_ceiling = 0.1\n'
    for command in (("validate",), ("compile", "--out", "jobs")):
        done = hz(cli, tmp_path, lower, *command, "greet.yaml", "review-pr.yaml")
        assert done.returncode == 1
        assert done.stdout.splitlines()[0] == (
            "review-pr.yaml:7:14: error: hz.agent.max_usd: 0.5 is over the ceiling of 0.1 US "
            "dollars [HZ304]"
        )
    higher = '[authoring]\nmax_usd_ceiling = 0.2\n[jobs."review-*"]\nmax_usd_ceiling = 1\n'
    done = hz(cli, tmp_path, higher, "validate", "greet.yaml", "review-pr.yaml")
    assert (done.returncode, done.stdout.count("[HZ304]")) == (1, 1)
    assert done.stdout.startswith("greet.yaml:7:14: error: hz.agent.max_usd: 0.5 is over")


def test_validate_warns_of_a_table_no_job_matches(cli: Cli, tmp_path: Path) -> None:
    operator = '[jobs."reveiw-pr"]\nmodel = "x"\n[jobs."greet"]\nmodel = "y"\n'
    done = hz(cli, tmp_path, operator, "validate", "greet.yaml", "review-pr.yaml")
    assert done.returncode == 0
    assert done.stderr == (
        "Success: no issues found in 2 files\n"
        f'hz: warning: [jobs."reveiw-pr"] ({tmp_path / "operator.toml"}:2:1) '
        "matches no job here (did you mean 'review-pr'?)\n"
    )


@pytest.mark.parametrize(
    ("operator", "message"),
    [
        (
            '[jobs."review-*"]\nagent_runer = "echo"\n',
            "{config}:2:1: unknown key 'agent_runer' in [jobs.\"review-*\"] (did you mean "
            "'agent_runner'?)",
        ),
        (
            '[jobs."review-*"]\nmax_turns = 0\n',
            '{config}:2:1: [jobs."review-*"] max_turns must be',
        ),
        ("jobs = 3\n", "{config}:1:1: [jobs] must be a table of job names to tables, got int"),
        (
            '[jobs]\n"review-*" = "echo"\n',
            '{config}:2:1: [jobs."review-*"] must be a table of settings, got str',
        ),
        (
            f'[jobs."{"*" * 10_000}"]\nmodel = "x"\n',
            "{config}:1:1: the job name or glob of a jobs table has 10000 characters, more "
            "than 128",
        ),
        (
            '[jobs."a\\u0007b\\u001b[31m"]\nmodel = "x"\n',
            '{config}:1:1: the job name or glob "a\\x07b\\x1b[31m" holds control characters',
        ),
    ],
)
def test_hostile_jobs_tables(cli: Cli, tmp_path: Path, operator: str, message: str) -> None:
    done = hz(cli, tmp_path, operator, "config", "show")
    assert done.returncode == 2
    first = done.stderr.splitlines()[0]
    assert first.startswith("hz: error: " + message.format(config=tmp_path / "operator.toml"))


@pytest.mark.parametrize(
    ("operator", "line"),
    [
        ('[jobs."\\u202e"]\nmodel = "x"\n', "1:1"),
        ('[capabilities]\nagent_runner = "echo"\n\n  [ jobs . "\\u202E" ]\n', "4:3"),
        ('[jobs]\n"\\u202e" = { model = "x" }\n', "2:1"),
        ('# a comment\njobs."\\u202e".model = "x"\n', "2:1"),
    ],
)
def test_a_jobs_table_named_with_an_escape_is_located(
    cli: Cli, tmp_path: Path, operator: str, line: str
) -> None:
    """The file writes the name with an escape, so the name itself is not in its text: the
    table is found by reading its header (or key) as TOML."""
    done = hz(cli, tmp_path, operator, "config", "show")
    assert (done.returncode, done.stderr) == (
        2,
        f'hz: error: {tmp_path / "operator.toml"}:{line}: the job name or glob "\\u202e" holds '
        "control characters\n  hint: job names are printable text\n",
    )


def test_a_project_hz_toml_may_not_hold_jobs_tables(cli: Cli, tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "hz.toml").write_text(
        '[authoring]\nmax_usd_ceiling = 5\n\n[jobs."greet"]\nagent_runner = "echo"\n'
    )
    done = hz(cli, tmp_path, "", "config", "show")
    assert (done.returncode, done.stderr.splitlines()[0]) == (
        2,
        f"hz: error: {tmp_path / 'hz.toml'}:4:1: HZ801 [jobs.…] tables choose the runner per "
        "job and are not allowed in a project hz.toml",
    )


@pytest.mark.parametrize(
    ("project", "where"),
    [
        ('[jobs."greet"]\nagent_runner = "echo"\n', "1:1"),
        ('"jobs" = { "greet" = { agent_runner = "echo" } }\n', "1:1"),
        ('[authoring]\nmax_usd_ceiling = 5\n\n  [ \'jobs\' . "x" ]\nmodel = "x"\n', "4:3"),
    ],
    ids=["header", "quoted-inline", "quoted-header"],
)
def test_a_project_jobs_table_is_located_and_the_hint_says_where_it_goes(
    cli: Cli, tmp_path: Path, project: str, where: str
) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "hz.toml").write_text(project)
    done = hz(cli, tmp_path, "", "config", "show")
    assert (done.returncode, done.stderr) == (
        2,
        f"hz: error: {tmp_path / 'hz.toml'}:{where}: HZ801 [jobs.…] tables choose the runner "
        "per job and are not allowed in a project hz.toml\n"
        "  hint: they belong in the operator's files: the site or user configuration file or "
        "HZ_CONFIG (no HZ_* variable sets one)\n",
    )


def test_a_jobs_table_the_runner_refuses_is_named(cli: Cli, tmp_path: Path) -> None:
    operator = (
        '[jobs."review-*"]\nagent_runner = "claude-code"\nclaude_env = ["ANTHROPIC_API_KEY"]\n'
    )
    done = hz(cli, tmp_path, operator, "run", "greet.yaml", "--input", "who=Ann", "--dry-run")
    assert (done.returncode, done.stderr) == (
        2,
        f'hz: error: [jobs."review-*"] ({tmp_path / "operator.toml"}:2:1): [system.runner] '
        "claude_env: ANTHROPIC_API_KEY bills the Anthropic API account and is passed only with "
        "allow_api_key_billing = true\n",
    )


def test_a_worker_holds_a_queued_run_under_its_jobs_tables_runner(
    cli: Cli, tmp_path: Path, ledger_backend: str, request: pytest.FixtureRequest
) -> None:
    """The per-runner ceiling that holds a queued run is its job's runner's: the run waits in
    the queue, never claimed nor prepared, while the base runner (echo) has no ceiling. On
    both ledgers: each worker builds its own hold (serve.py, pg/worker.py)."""
    budget = "[system.budget]\nper_runner = { command = 0.75 }\n\n"
    if ledger_backend == "postgres":
        budget += '[system.queue]\nbackend = "postgres"\ndsn_env = "HZ_TEST_LEDGER_DSN"\n\n'
    env = write(tmp_path, OPERATOR.replace("[jobs.", budget + "[jobs.", 1))
    if ledger_backend == "postgres":
        env["HZ_TEST_LEDGER_DSN"] = request.getfixturevalue("pg_dsn")
    first = cli("run", "review-pr.yaml", "--input", "who=Ann", "-q", cwd=tmp_path, env=env)
    assert first.returncode == 0, first.stderr
    queued = cli("submit", "review-pr.yaml", "--input", "who=Bo", cwd=tmp_path, env=env)
    run_id = queued.stdout.strip()
    assert cli("worker", "--drain", cwd=tmp_path, env=env).returncode == 0
    shown = cli("runs", "show", run_id, "--format", "json", cwd=tmp_path, env=env)
    timeline = [(e["state"], e["detail"]) for e in json.loads(shown.stdout)["timeline"]]
    assert timeline[1:] == [
        (
            "queued",
            "waiting: reserving $0.50 would cross [system.budget] per_runner.command of $0.75 "
            "($0.50 reserved or spent today)",
        )
    ]


@pytest.mark.parametrize(
    ("name", "shown"),
    [
        ("n" * 100_000, "'" + "n" * 78 + "…"),
        ("x\x1b[2J", "'x\\x1b[2J'"),
        ("Review-PR", "'Review-PR'"),
    ],
)
def test_config_show_refuses_what_is_no_job_name(
    cli: Cli, tmp_path: Path, name: str, shown: str
) -> None:
    done = hz(cli, tmp_path, OPERATOR, "config", "show", "--job", name)
    assert (done.returncode, done.stdout, done.stderr.splitlines()[-1]) == (
        2,
        "",
        f"Error: Invalid value for '--job': {shown} is not a job name: a contract's hz.name is "
        "a lowercase slug of at most 64 characters (e.g. review-pr)",
    )
