"""`hz validate`, `hz schema`, `hz explain` as real processes: output, streams, exit codes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
CASES = REPO / "tests" / "cases"

GOOD = """\
hz:
  contract: 1
  name: tiny
  timeout: 45
  agent: {max_usd: 5}
contract: Rules.
prompt: Hello {{ inputs.who }}.
"""
BAD_LINE = (
    "{file}:7:18: error: prompt: inputs.who is not a declared input [HZ502]\n"
    "  hint: declare it under hz.inputs\n"
)


def hz(
    argv: list[str], *args: str, stdin: str | None = None, cwd: Path = REPO
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*argv, *args], input=stdin, capture_output=True, text=True, cwd=cwd, timeout=60
    )


def test_valid_contracts_exit_0(hz_argv: list[str]) -> None:
    result = hz(hz_argv, "validate", "contracts/")
    assert (result.returncode, result.stdout) == (0, "")
    assert result.stderr == "Success: no issues found in 3 files\n"


def test_invalid_file_exit_1_with_exact_text(hz_argv: list[str], tmp_path: Path) -> None:
    (tmp_path / "c.yaml").write_text(GOOD)
    result = hz(hz_argv, "validate", "c.yaml", cwd=tmp_path)
    assert result.returncode == 1
    assert result.stdout == BAD_LINE.format(file="c.yaml")
    assert result.stderr == "Found 1 error in 1 file (checked 1 file)\n"


def test_golden_case_through_the_cli(hz_argv: list[str]) -> None:
    result = hz(hz_argv, "validate", "invalid/many-problems.yaml", cwd=CASES)
    assert result.returncode == 1
    assert result.stdout == (CASES / "invalid" / "many-problems.expected").read_text()


def test_stdin_is_named_stdin(hz_argv: list[str]) -> None:
    result = hz(hz_argv, "validate", "-", stdin=GOOD)
    assert result.returncode == 1
    assert result.stdout == BAD_LINE.format(file="<stdin>")
    ok = hz(hz_argv, "validate", "-", stdin=GOOD.replace("{{ inputs.who }}", "you"))
    assert (ok.returncode, ok.stdout) == (0, "")


def test_directories_recurse_and_mix_with_files(hz_argv: list[str], tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "b.yml").write_text(GOOD)
    (tmp_path / "a.yaml").write_text(GOOD.replace("{{ inputs.who }}", "you"))
    (tmp_path / "notes.txt").write_text("not a contract")
    result = hz(hz_argv, "validate", ".", "a.yaml", cwd=tmp_path)
    assert result.returncode == 1
    assert result.stdout == BAD_LINE.format(file="./sub/b.yml")
    # a.yaml is ./a.yaml, found in "." already: checked once.
    assert result.stderr == "Found 1 error in 1 file (checked 2 files)\n"


def test_missing_path_exit_1(hz_argv: list[str], tmp_path: Path) -> None:
    result = hz(hz_argv, "validate", "nope.yaml", cwd=tmp_path)
    assert result.returncode == 1
    assert result.stdout == (
        "nope.yaml:0:0: error: cannot read file: No such file or directory [HZ001]\n"
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((), "Error: give at least one PATH: a contract file, a directory, or -"),
        (("--format", "xml", "x.yaml"), "Error: Invalid value for '--format': 'xml' is not one of"),
        (("--max-usd-ceiling", "0", "x.yaml"), "Error: Invalid value for '--max-usd-ceiling'"),
    ],
)
def test_usage_errors_exit_2(hz_argv: list[str], args: tuple[str, ...], message: str) -> None:
    result = hz(hz_argv, "validate", *args)
    assert result.returncode == 2
    assert result.stdout == ""
    assert message in result.stderr
    assert "Traceback" not in result.stderr


def test_ceiling_option(hz_argv: list[str]) -> None:
    text = GOOD.replace("{{ inputs.who }}", "you")
    assert hz(hz_argv, "validate", "--max-usd-ceiling", "5", "-", stdin=text).returncode == 0
    low = hz(hz_argv, "validate", "--max-usd-ceiling", "4.5", "-", stdin=text)
    assert low.returncode == 1
    assert low.stdout == (
        "<stdin>:5:20: error: hz.agent.max_usd: 5 is over the ceiling of 4.5 US dollars "
        "[HZ304]\n  hint: lower the budget, or raise the ceiling: "
        "[authoring] max_usd_ceiling in the hz configuration, or --max-usd-ceiling\n"
    )


def test_json_format(hz_argv: list[str]) -> None:
    result = hz(hz_argv, "validate", "--format", "json", "-", stdin=GOOD)
    assert result.returncode == 1
    assert json.loads(result.stdout) == {
        "version": 1,
        "files_checked": 1,
        "errors": 1,
        "warnings": 0,
        "diagnostics": [
            {
                "file": "<stdin>",
                "line": 7,
                "column": 18,
                "severity": "error",
                "code": "HZ502",
                "message": "prompt: inputs.who is not a declared input",
                "hint": "declare it under hz.inputs",
            }
        ],
    }


def test_github_format(hz_argv: list[str]) -> None:
    result = hz(hz_argv, "validate", "--format", "github", "-", stdin=GOOD)
    assert result.returncode == 1
    assert result.stdout == (
        "::error file=<stdin>,line=7,col=18,title=HZ502::prompt: inputs.who is not a declared "
        "input%0Ahint: declare it under hz.inputs\n"
    )


def test_sarif_format(hz_argv: list[str]) -> None:
    result = hz(hz_argv, "validate", "--format", "sarif", "-", stdin=GOOD)
    assert result.returncode == 1
    log = json.loads(result.stdout)
    assert log["version"] == "2.1.0"
    (sarif_result,) = log["runs"][0]["results"]
    assert sarif_result["ruleId"] == "HZ502"
    region = sarif_result["locations"][0]["physicalLocation"]["region"]
    assert (region["startLine"], region["startColumn"]) == (7, 18)


def test_validate_imports_neither_pydantic_nor_unneeded_modules(tmp_path: Path) -> None:
    (tmp_path / "c.yaml").write_text(GOOD.replace("{{ inputs.who }}", "you"))
    probe = (
        "import sys, atexit\n"
        "atexit.register(lambda: print(sorted({m.split('.')[0] for m in sys.modules}),"
        " file=sys.stderr))\n"
        "from hz.cli import main\n"
        "main(['validate', 'c.yaml'])\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, cwd=tmp_path, timeout=60
    )
    assert result.returncode == 0, result.stderr
    loaded = result.stderr.splitlines()[-1]
    assert "'pydantic'" not in loaded
    # A valid contract without input or output schemas takes the schema fast path:
    # jsonschema is not even imported (it is for an invalid file, to locate the errors).
    assert "'jsonschema'" not in loaded


def test_schema_prints_the_contract_schema(hz_argv: list[str]) -> None:
    result = hz(hz_argv, "schema")
    assert result.returncode == 0
    assert result.stdout == (REPO / "schemas" / "workflow-contract.schema.json").read_text()
    assert hz(hz_argv, "schema", "contract").stdout == result.stdout


def test_schema_of_a_runtime_kind(hz_argv: list[str]) -> None:
    result = hz(hz_argv, "schema", "packet")
    assert result.returncode == 0
    from hz.runtime.schemas import schema_text

    assert json.loads(result.stdout) == json.loads(schema_text("packet"))


def test_schema_unknown_kind_is_a_usage_error(hz_argv: list[str]) -> None:
    result = hz(hz_argv, "schema", "run")
    assert result.returncode == 2
    assert (
        "Error: Invalid value for '[contract|job|packet|receipt|result]': 'run' is not one of"
        in result.stderr
    )


def test_explain(hz_argv: list[str]) -> None:
    result = hz(hz_argv, "explain", "hz202")
    assert result.returncode == 0
    assert result.stdout == (REPO / "compiler" / "data" / "rules" / "HZ202.md").read_text()


def test_explain_unknown_code(hz_argv: list[str]) -> None:
    result = hz(hz_argv, "explain", "HZ299")
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr == (
        "hz: error: unknown rule code 'HZ299'\n"
        "  hint: close codes: HZ201, HZ202, HZ203, HZ204; docs/rules.md lists every code\n"
    )


def test_a_file_named_twice_is_checked_once(hz_argv: list[str], tmp_path: Path) -> None:
    (tmp_path / "f.yaml").write_text(GOOD)
    result = hz(hz_argv, "validate", "f.yaml", "./f.yaml", cwd=tmp_path)
    assert result.returncode == 1
    assert result.stdout == BAD_LINE.format(file="f.yaml")
    assert result.stderr == "Found 1 error in 1 file (checked 1 file)\n"


def test_a_directory_without_contracts_gets_a_warning(hz_argv: list[str], tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    result = hz(hz_argv, "validate", "empty", cwd=tmp_path)
    assert (result.returncode, result.stdout) == (0, "")
    assert result.stderr == (
        "hz: warning: empty holds no *.yaml or *.yml file\nSuccess: no issues found in 0 files\n"
    )


def test_fifo_in_a_directory_is_skipped_and_refused_by_name(
    hz_argv: list[str], tmp_path: Path
) -> None:
    import os

    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "ok.yaml").write_text(GOOD.replace("{{ inputs.who }}", "you"))
    os.mkfifo(tmp_path / "d" / "pipe.yaml")
    # Before, reading the FIFO blocked forever; hz() times out after 60 s.
    found = hz(hz_argv, "validate", "d", cwd=tmp_path)
    assert (found.returncode, found.stdout) == (0, "")
    assert found.stderr == "Success: no issues found in 1 file\n"
    named = hz(hz_argv, "validate", "d/pipe.yaml", cwd=tmp_path)
    assert (named.returncode, named.stdout) == (
        1,
        "d/pipe.yaml:0:0: error: not a regular file: a contract is read from a file "
        "(or - for stdin) [HZ001]\n",
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("",), "Error: a PATH must not be empty\n"),
        (
            ("--max-usd-ceiling", "nan", "x.yaml"),
            "Error: Invalid value for '--max-usd-ceiling': nan is not a finite number "
            "greater than 0\n",
        ),
        (
            ("--max-usd-ceiling", "inf", "x.yaml"),
            "Error: Invalid value for '--max-usd-ceiling': inf is not a finite number "
            "greater than 0\n",
        ),
        (
            ("--max-usd-ceiling", "ten", "x.yaml"),
            "Error: Invalid value for '--max-usd-ceiling': 'ten' is not a number of US dollars\n",
        ),
    ],
)
def test_more_usage_errors_exit_2(hz_argv: list[str], args: tuple[str, ...], message: str) -> None:
    result = hz(hz_argv, "validate", *args)
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr == (
        "Usage: hz validate [OPTIONS] PATH...\nTry 'hz validate --help' for help.\n\n" + message
    )


def test_a_project_hz_toml_with_an_error_counts_as_checked(
    hz_argv: list[str], tmp_path: Path
) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "hz.toml").write_text("[authoring]\nmax_usd_ceiling = 0\n")
    (tmp_path / "c.yaml").write_text(GOOD)
    result = hz(hz_argv, "validate", "c.yaml", cwd=tmp_path)
    assert result.returncode == 1
    assert result.stdout == (
        f"{tmp_path / 'hz.toml'}:2:1: error: [authoring] max_usd_ceiling must be a number "
        "greater than 0, got 0 [HZ804]\n" + BAD_LINE.format(file="c.yaml")
    )
    assert result.stderr == "Found 2 errors in 2 files (checked 2 files)\n"


def test_a_bug_exits_3_and_shows_the_working_debug_command(
    hz_argv: list[str], tmp_path: Path
) -> None:
    import os

    # A sitecustomize that breaks validate_paths: a bug in hz, seen as a user sees it.
    broken = tmp_path / "site"
    broken.mkdir()
    (broken / "sitecustomize.py").write_text(
        "import hz.compiler.validate\n"
        "def boom(*args, **kwargs):\n"
        "    raise RuntimeError('forced for a test')\n"
        "hz.compiler.validate.validate_paths = boom\n"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(broken), str(REPO)])}
    args = ["validate", "my file.yaml", "--format", "json"]
    result = subprocess.run(
        [*hz_argv, *args], capture_output=True, text=True, cwd=tmp_path, env=env, timeout=60
    )
    assert (result.returncode, result.stdout) == (3, "")
    assert result.stderr == (
        "hz: unexpected error: RuntimeError: forced for a test\n"
        "  (this is a bug in hz; run again with --debug for the traceback: "
        "hz --debug validate 'my file.yaml' --format json)\n"
    )
    debug_args = ["--debug", *args]
    again = subprocess.run(
        [*hz_argv, *debug_args], capture_output=True, text=True, cwd=tmp_path, env=env, timeout=60
    )
    assert again.returncode == 3
    assert again.stderr.startswith("Traceback (most recent call last):\n")
    assert again.stderr.endswith(
        "RuntimeError: forced for a test\nhz: unexpected error: RuntimeError: forced for a test\n"
    )
