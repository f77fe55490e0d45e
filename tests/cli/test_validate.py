"""`hz validate`, `hz schema`, `hz explain` in process: output, streams, exit codes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import Cli, CliResult
from tests.helpers.contracts import TINY

REPO = Path(__file__).resolve().parents[2]
CASES = REPO / "tests" / "cases"

BAD_LINE = (
    "{file}:7:18: error: prompt: inputs.who is not a declared input [HZ502]\n"
    "  hint: declare it under hz.inputs\n"
)


def hz(cli: Cli, *args: str, stdin: str | None = None, cwd: Path = REPO) -> CliResult:
    return cli(*args, stdin=stdin, cwd=cwd)


def test_valid_contracts_exit_0(cli: Cli) -> None:
    result = hz(cli, "validate", "contracts/")
    assert (result.returncode, result.stdout) == (0, "")
    assert result.stderr == "Success: no issues found in 5 files\n"


def test_invalid_file_exit_1_with_exact_text(cli: Cli, tmp_path: Path) -> None:
    (tmp_path / "c.yaml").write_text(TINY)
    result = hz(cli, "validate", "c.yaml", cwd=tmp_path)
    assert result.returncode == 1
    assert result.stdout == BAD_LINE.format(file="c.yaml")
    assert result.stderr == "Found 1 error in 1 file (checked 1 file)\n"


def test_golden_case_through_the_cli(cli: Cli) -> None:
    result = hz(cli, "validate", "invalid/many-problems.yaml", cwd=CASES)
    assert result.returncode == 1
    assert result.stdout == (CASES / "invalid" / "many-problems.expected").read_text()


def test_stdin_is_named_stdin(cli: Cli) -> None:
    result = hz(cli, "validate", "-", stdin=TINY)
    assert result.returncode == 1
    assert result.stdout == BAD_LINE.format(file="<stdin>")
    ok = hz(cli, "validate", "-", stdin=TINY.replace("{{ inputs.who }}", "you"))
    assert (ok.returncode, ok.stdout) == (0, "")


def test_directories_recurse_and_mix_with_files(cli: Cli, tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "b.yml").write_text(TINY)
    (tmp_path / "a.yaml").write_text(TINY.replace("{{ inputs.who }}", "you"))
    (tmp_path / "notes.txt").write_text("not a contract")
    result = hz(cli, "validate", ".", "a.yaml", cwd=tmp_path)
    assert result.returncode == 1
    assert result.stdout == BAD_LINE.format(file="./sub/b.yml")
    # a.yaml is ./a.yaml, found in "." already: checked once.
    assert result.stderr == "Found 1 error in 1 file (checked 2 files)\n"


def test_missing_path_exit_1(cli: Cli, tmp_path: Path) -> None:
    result = hz(cli, "validate", "nope.yaml", cwd=tmp_path)
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
def test_usage_errors_exit_2(cli: Cli, args: tuple[str, ...], message: str) -> None:
    result = hz(cli, "validate", *args)
    assert result.returncode == 2
    assert result.stdout == ""
    assert message in result.stderr
    assert "Traceback" not in result.stderr


def test_ceiling_option(cli: Cli) -> None:
    text = TINY.replace("{{ inputs.who }}", "you")
    assert hz(cli, "validate", "--max-usd-ceiling", "5", "-", stdin=text).returncode == 0
    low = hz(cli, "validate", "--max-usd-ceiling", "4.5", "-", stdin=text)
    assert low.returncode == 1
    assert low.stdout == (
        "<stdin>:5:20: error: hz.agent.max_usd: 5 is over the ceiling of 4.5 US dollars "
        "[HZ304]\n  hint: lower the budget, or raise the ceiling: "
        "[authoring] max_usd_ceiling in the hz configuration, or --max-usd-ceiling\n"
    )


def test_json_format(cli: Cli) -> None:
    result = hz(cli, "validate", "--format", "json", "-", stdin=TINY)
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


def test_github_format(cli: Cli) -> None:
    result = hz(cli, "validate", "--format", "github", "-", stdin=TINY)
    assert result.returncode == 1
    assert result.stdout == (
        "::error file=<stdin>,line=7,col=18,title=HZ502::prompt: inputs.who is not a declared "
        "input%0Ahint: declare it under hz.inputs\n"
    )


def test_sarif_format(cli: Cli) -> None:
    result = hz(cli, "validate", "--format", "sarif", "-", stdin=TINY)
    assert result.returncode == 1
    log = json.loads(result.stdout)
    assert log["version"] == "2.1.0"
    (sarif_result,) = log["runs"][0]["results"]
    assert sarif_result["ruleId"] == "HZ502"
    region = sarif_result["locations"][0]["physicalLocation"]["region"]
    assert (region["startLine"], region["startColumn"]) == (7, 18)


def test_schema_prints_the_contract_schema(cli: Cli) -> None:
    result = hz(cli, "schema")
    assert result.returncode == 0
    assert result.stdout == (REPO / "schemas" / "workflow-contract.schema.json").read_text()
    assert hz(cli, "schema", "contract").stdout == result.stdout


def test_schema_of_a_runtime_kind(cli: Cli) -> None:
    result = hz(cli, "schema", "packet")
    assert result.returncode == 0
    from hz.runtime.artifacts.schemas import schema_text

    assert json.loads(result.stdout) == json.loads(schema_text("packet"))


def test_schema_unknown_kind_is_a_usage_error(cli: Cli) -> None:
    result = hz(cli, "schema", "run")
    assert result.returncode == 2
    assert (
        "Error: Invalid value for '[contract|job|packet|receipt|result|runs]': 'run' is not one of"
        in result.stderr
    )


def test_explain(cli: Cli) -> None:
    result = hz(cli, "explain", "hz202")
    assert result.returncode == 0
    assert result.stdout == (REPO / "compiler" / "data" / "rules" / "HZ202.md").read_text()


@pytest.mark.parametrize("code", ["HZ410", "HZ411", "HZ412", "HZ413", "HZ414", "HZ415"])
def test_explain_the_rules_of_read_inputs(cli: Cli, code: str) -> None:
    result = hz(cli, "explain", code.lower())
    assert (result.returncode, result.stderr) == (0, "")
    assert result.stdout == (REPO / "compiler" / "data" / "rules" / f"{code}.md").read_text()


def test_read_inputs_through_the_cli(cli: Cli) -> None:
    bad = hz(cli, "validate", "invalid/HZ411-arguments.yaml", cwd=CASES)
    assert bad.returncode == 1
    assert bad.stdout == (CASES / "invalid" / "HZ411-arguments.expected").read_text()
    assert bad.stderr == "Found 6 errors in 1 file (checked 1 file)\n"
    good = hz(cli, "validate", "valid/read-inputs.yaml", cwd=CASES)
    assert (good.returncode, good.stdout) == (0, "")


def test_explain_unknown_code(cli: Cli) -> None:
    result = hz(cli, "explain", "HZ299")
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr == (
        "hz: error: unknown rule code 'HZ299'\n"
        "  hint: close codes: HZ201, HZ202, HZ203, HZ204; `hz explain` lists every code, "
        "`hz explain CODE` shows one\n"
    )


def test_a_file_named_twice_is_checked_once(cli: Cli, tmp_path: Path) -> None:
    (tmp_path / "f.yaml").write_text(TINY)
    result = hz(cli, "validate", "f.yaml", "./f.yaml", cwd=tmp_path)
    assert result.returncode == 1
    assert result.stdout == BAD_LINE.format(file="f.yaml")
    assert result.stderr == "Found 1 error in 1 file (checked 1 file)\n"


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
def test_more_usage_errors_exit_2(cli: Cli, args: tuple[str, ...], message: str) -> None:
    result = hz(cli, "validate", *args)
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr == (
        "Usage: hz validate [OPTIONS] PATH...\nTry 'hz validate --help' for help.\n\n" + message
    )


def test_a_project_hz_toml_with_an_error_counts_as_checked(cli: Cli, tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "hz.toml").write_text("[authoring]\nmax_usd_ceiling = 0\n")
    (tmp_path / "c.yaml").write_text(TINY)
    result = hz(cli, "validate", "c.yaml", cwd=tmp_path)
    assert result.returncode == 1
    assert result.stdout == (
        f"{tmp_path / 'hz.toml'}:2:1: error: [authoring] max_usd_ceiling must be a finite "
        "number greater than 0, got 0 [HZ804]\n"
        "  hint: an amount of US dollars such as 25 or 0.5\n" + BAD_LINE.format(file="c.yaml")
    )
    assert result.stderr == "Found 2 errors in 2 files (checked 2 files)\n"


def test_a_ceiling_that_is_not_finite_is_shown_escaped(cli: Cli) -> None:
    # float() takes the surrounding whitespace; the message shows it escaped, on one line.
    result = hz(cli, "validate", "--max-usd-ceiling", "\tinf\n", "x.yaml")
    assert (result.returncode, result.stderr.splitlines()[-1]) == (
        2,
        "Error: Invalid value for '--max-usd-ceiling': \\tinf\\n is not a finite number "
        "greater than 0",
    )
