"""Stumbles of a user's first hour, each as the user meets it: hz in process."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import Cli, CliResult
from tests.helpers.contracts import contract

REPO = Path(__file__).resolve().parents[2]


def hz(cli: Cli, cwd: Path, *args: str, **env: str) -> CliResult:
    return cli(*args, cwd=cwd, env=env)


def project(tmp_path: Path, comment: str = "v1", max_usd: str = "0.5") -> Path:
    (tmp_path / "contracts").mkdir(exist_ok=True)
    (tmp_path / "hz.toml").touch()
    text = contract(comment=comment, max_usd=max_usd, tools=())
    (tmp_path / "contracts" / "greet.yaml").write_text(text)
    return tmp_path


def test_echo_answers_a_json_job_with_an_example_of_its_schema(cli: Cli, tmp_path: Path) -> None:
    done = hz(
        cli,
        REPO,
        *("run", "contracts/issue-triage.yaml", "--inputs", "contracts/inputs/issue-triage.json"),
        *("--no-receipt", "--format", "json"),
        HZ_RUNNER="echo",
        HZ_SYSTEM_RUNNER__ECHO_DRAFT="example",
    )
    result = json.loads(done.stdout)
    assert (done.returncode, result["status"], result["structured_output"]) == (
        0,
        "completed",
        {"kind": "bug", "labels": [], "priority": "p0", "summary": ""},
    )


def test_compile_quiet_prints_only_problems(cli: Cli, tmp_path: Path) -> None:
    root = project(tmp_path)
    done = hz(cli, root, "compile", "contracts", "--out", "jobs", "-q")
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    checked = hz(cli, root, "compile", "contracts", "--out", "jobs", "--check", "--quiet")
    assert (checked.returncode, checked.stdout, checked.stderr) == (0, "", "")
    project(root, max_usd='"0.5"')
    broken = hz(cli, root, "compile", "contracts", "--out", "jobs", "-q")
    assert (broken.returncode, broken.stderr) == (1, "")
    assert broken.stdout.startswith("contracts/greet.yaml:7:14: error: ")


def test_check_names_what_differs(cli: Cli, tmp_path: Path) -> None:
    root = project(tmp_path)
    assert hz(cli, root, "compile", "contracts", "--out", "jobs").returncode == 0
    project(root, comment="v2: only a comment changed")
    done = hz(cli, root, "compile", "contracts", "--out", "jobs", "--check")
    assert done.stdout.splitlines()[0] == (
        "contracts/greet.yaml:0:0: error: job jobs/greet.job.json is stale: only the source hash "
        "differs: the contract file changed (a comment or layout) but not what it compiles to "
        "[HZ602]"
    )
    project(root, max_usd="0.75")
    done = hz(cli, root, "compile", "contracts", "--out", "jobs", "--check")
    assert done.stdout.splitlines()[0] == (
        "contracts/greet.yaml:7:5: error: job jobs/greet.job.json is stale: this field differs "
        "from what the contract compiles to: budget.max_usd [HZ602]"
    )
    assert done.stderr == "Found 1 error in 1 file (checked 1 contract and 1 job file)\n"


def test_render_counts_the_files_it_checked(cli: Cli, tmp_path: Path) -> None:
    root = project(tmp_path)
    assert hz(cli, root, "compile", "contracts", "--out", "jobs").returncode == 0
    (root / "in.json").write_text('{"who": 5}')
    done = hz(cli, root, "render", "jobs/greet.job.json", "--inputs", "in.json")
    # The job (its digest is checked as it is read) and the inputs file.
    assert done.stderr == (
        "in.json:1:9: error: input 'who': expected a string, got an integer (5) [HZ702]\n"
        '  hint: quote it, as in "5"\n'
        "Found 1 error in 1 file (checked 2 files)\n"
    )
    (root / "who.txt").write_text("Ann")
    (root / "more.json").write_text('{"who": "Bo", "whom": 1}')
    both = hz(
        cli,
        root,
        "render",
        "contracts/greet.yaml",
        "--inputs",
        "more.json",
        "--input",
        "who=@who.txt",
    )
    assert both.stderr.splitlines()[-1] == "Found 1 error in 1 file (checked 3 files)"


def test_config_show_aligns_comments_after_short_values_only(cli: Cli, tmp_path: Path) -> None:
    long_command = ["/opt/acme/bin/acme-agent", "run", "--system-file={contract_file}"]
    long_command += ["--prompt-file={prompt_file}", "--out={output_file}"]
    (tmp_path / "op.toml").write_text(
        '[capabilities]\nagent_runner = "command"\n[system.runner]\n'
        f"command = {json.dumps(long_command)}\n"
        'command_enforces_read_only = true\ncommand_read_only_tools = ["read"]\n'
    )
    done = hz(cli, tmp_path, "config", "show", HZ_CONFIG=str(tmp_path / "op.toml"))
    where = f"HZ_CONFIG {tmp_path}/op.toml"
    lines = done.stdout.split("[system.runner]\n")[1].split("\n\n")[0].splitlines()
    assert lines == [
        f"command = {json.dumps(long_command)}  # {where}:4:1",
        f"command_enforces_read_only = true   # {where}:5:1",
        f'command_read_only_tools = ["read"]  # {where}:6:1',
    ]


def test_explain_without_a_code_lists_the_codes(cli: Cli, tmp_path: Path) -> None:
    from hz.compiler.rules.docs import codes

    done = hz(cli, tmp_path, "explain")
    lines = done.stdout.splitlines()
    assert (done.returncode, len(lines)) == (0, len(codes()))
    assert lines[:2] == ["HZ001  Cannot read file", "HZ002  File is not UTF-8 text"]
    assert "HZ901  Tool no runner accepts (warning)" in lines


def test_refused_agent_keys_are_explained_in_the_authors_terms(cli: Cli, tmp_path: Path) -> None:
    doc = hz(cli, tmp_path, "explain", "HZ202").stdout
    assert "protocol" not in doc
    assert "AgentRunner" not in doc
    assert "hz never hands a\ncontract's model to the agent" in doc
    for code in ("HZ201", "HZ203", "HZ204"):
        other = hz(cli, tmp_path, "explain", code).stdout
        assert other.startswith(f"# {code}: Refused: `hz.agent.")
        assert ("protocol" in other, "AgentRunner" in other) == (False, False), code
    assert "hz never hands a contract's turn limit to the agent" in " ".join(
        hz(cli, tmp_path, "explain", "HZ204").stdout.split()
    )


def test_a_name_that_is_not_a_slug_gets_the_slug(cli: Cli, tmp_path: Path) -> None:
    root = project(tmp_path)
    path = root / "contracts" / "greet.yaml"
    path.write_text(path.read_text().replace("name: greet", "name: Todo-Summary"))
    done = hz(cli, root, "validate", "contracts")
    assert done.stdout.splitlines()[:2] == [
        "contracts/greet.yaml:4:9: error: hz.name: 'Todo-Summary' is not in the expected form "
        "[HZ104]",
        "  hint: did you mean 'todo-summary'? A lowercase slug naming the job: letters, digits "
        "and single hyphens, starting with a letter, at most 64 characters. Unique within one "
        "compile.",
    ]


def test_a_quoted_budget_says_remove_the_quotes(cli: Cli, tmp_path: Path) -> None:
    root = project(tmp_path, max_usd='"0.25"')
    done = hz(cli, root, "validate", "contracts")
    assert done.stdout == (
        "contracts/greet.yaml:7:14: error: hz.agent.max_usd: expected a number of US dollars, "
        "got a string ('0.25') [HZ103]\n"
        "  hint: remove the quotes: max_usd: 0.25\n"
    )


def test_validate_warns_about_tools_no_runner_accepts(cli: Cli, tmp_path: Path) -> None:
    root = project(tmp_path)
    path = root / "contracts" / "greet.yaml"
    path.write_text(
        path.read_text().replace("    max_usd:", "    tools: [Read, Bash]\n    max_usd:")
    )
    done = hz(cli, root, "validate", "contracts")
    hint = (
        "  hint: a runner refuses the job when it runs; name a tool the runner accepts, or ask "
        "whoever runs the job to allow this one (hz config show, hz runners)\n"
    )
    assert (done.returncode, done.stderr) == (0, "Success: no errors found in 1 file (1 warning)\n")
    assert done.stdout == (
        "contracts/greet.yaml:7:19: warning: hz.agent.tools: no runner here accepts 'Bash' "
        "(claude-code accepts Read, Grep, Glob; command accepts none) [HZ901]\n" + hint
    )
    claude = hz(cli, root, "validate", "contracts", "--runner", "claude-code")
    assert claude.stdout == (
        "contracts/greet.yaml:7:19: warning: hz.agent.tools: the claude-code runner does not "
        "accept 'Bash' (it accepts Read, Grep, Glob) [HZ901]\n" + hint
    )
    # Runners that cannot restrict tools by name are not asked.
    codex = hz(cli, root, "validate", "contracts", "--runner", "codex")
    assert (codex.returncode, codex.stdout) == (0, "")
    # What the operator configured counts.
    allowed = hz(
        cli,
        root,
        *("validate", "contracts"),
        HZ_SYSTEM_RUNNER__COMMAND='["agent", "--rules={contract_file}"]',
        HZ_SYSTEM_RUNNER__COMMAND_READ_ONLY_TOOLS='["Read", "Bash"]',
    )
    assert (allowed.returncode, allowed.stdout) == (0, "")
    unknown = hz(cli, root, "validate", "contracts", "--runner", "clod")
    assert (unknown.returncode, unknown.stderr.splitlines()[-1]) == (
        2,
        "Error: Invalid value for '--runner': unknown runner 'clod' (did you mean 'codex'?)",
    )
    hostile = hz(cli, root, "validate", "contracts", "--runner", "x\x1b[2J\n::warning::y")
    assert (hostile.returncode, hostile.stderr.splitlines()[-1]) == (
        2,
        "Error: Invalid value for '--runner': unknown runner 'x\\x1b[2J\\n::warning::y'",
    )
