"""Diagnostics that point where the user acts: the contract line of a stale job's field, the
--input argument, counts of what was checked, hints for YAML layout and for a number that
should be text, and what a missing key needs. hz in process."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import Cli, CliResult

REGENERATE = "run the same hz compile command without --check and commit the result"

CONTRACT = """\
hz:
  contract: 1
  name: digest
  title: Weekly digest
  timeout: 2m
  agent: {tools: [Read], max_usd: 0.5}
  inputs:
    week:
      description: The ISO week
      schema: {type: string, pattern: "^[0-9]{4}-W[0-9]{2}$"}
      default: 2026-W01
    limit:
      schema: {type: integer}
      default: 5
contract: |
  Be brief.
prompt: |
  Digest of {{ inputs.week }}, at most {{ inputs.limit }} items.
"""


def hz(cli: Cli, cwd: Path, *args: str) -> CliResult:
    return cli(*args, cwd=cwd)


@pytest.fixture
def compiled(cli: Cli, tmp_path: Path) -> Path:
    """A project with one contract compiled into jobs/."""
    (tmp_path / "hz.toml").touch()
    (tmp_path / "contracts").mkdir()
    (tmp_path / "contracts" / "digest.yaml").write_text(CONTRACT)
    assert hz(cli, tmp_path, "compile", "contracts", "--out", "jobs").returncode == 0
    return tmp_path


def edit(root: Path, old: str, new: str) -> None:
    contract = root / "contracts" / "digest.yaml"
    text = contract.read_text()
    assert old in text
    contract.write_text(text.replace(old, new))


def check(cli: Cli, root: Path) -> CliResult:
    return hz(cli, root, "compile", "contracts", "--out", "jobs", "--check")


# --- HZ602 at the line of the field that differs ----------------------------------------------


@pytest.mark.parametrize(
    ("old", "new", "where", "fields"),
    [
        # A value in a flow mapping: the key inside the braces.
        ("max_usd: 0.5}", "max_usd: 0.75}", "6:26", "this field differs: budget.max_usd"),
        ("timeout: 2m", "timeout: 3m", "5:3", "this field differs: timeout_seconds"),
        # An input's default, two levels down in the job.
        ("default: 2026-W01", "default: 2026-W02", "11:7", "this field differs: inputs.week"),
        # A default removed: `required` and `default` change, the input's key is the line.
        ("      default: 5\n", "", "12:5", "this field differs: inputs.limit"),
        # Two fields: the first in the contract.
        (
            "  title: Weekly digest\n  timeout: 2m",
            "  title: Digest\n  timeout: 3m",
            "4:3",
            "these fields differ: timeout_seconds, title",
        ),
        # A field the contract no longer writes at all: the block that held it.
        ("  title: Weekly digest\n", "", "1:1", "this field differs: title"),
        ("  Be brief.", "  Be briefer.", "15:1", "this field differs: contract"),
        ("at most", "no more than", "17:1", "this field differs: template"),
    ],
)
def test_a_stale_job_is_reported_at_the_field_that_differs(
    cli: Cli, compiled: Path, old: str, new: str, where: str, fields: str
) -> None:
    edit(compiled, old, new)
    done = check(cli, compiled)
    these, _, names = fields.partition(": ")
    assert (done.returncode, done.stdout) == (
        1,
        f"contracts/digest.yaml:{where}: error: job jobs/digest.job.json is stale: {these} from "
        f"what the contract compiles to: {names} [HZ602]\n  hint: {REGENERATE}\n",
    )
    assert done.stderr == "Found 1 error in 1 file (checked 1 contract and 1 job file)\n"


def test_a_job_edited_by_hand_points_at_the_contract_field_it_came_from(
    cli: Cli, compiled: Path
) -> None:
    job = compiled / "jobs" / "digest.job.json"
    job.write_text(job.read_text().replace('"pattern": "^[0-9]{4}', '"pattern": "^[0-9]{5}'))
    done = check(cli, compiled)
    assert done.stdout.splitlines()[0] == (
        "contracts/digest.yaml:10:30: error: job jobs/digest.job.json is stale: this field "
        "differs from what the contract compiles to: inputs.week [HZ602]"
    )


@pytest.mark.parametrize(
    ("old", "new", "why"),
    [
        ('"hz_version": "', '"hz_version": "0.0.0-', "this field differs from what the contract "),
        ('"kind": "job",', '"kind": "job", "extra": [1],', "this field differs from what the "),
        ('"sha256": "', '"sha256": "0', "only the source hash differs: "),
        ("{", "[", "it is not the JSON this contract compiles to"),
    ],
)
def test_a_difference_no_contract_field_holds_is_the_whole_file(
    cli: Cli, compiled: Path, old: str, new: str, why: str
) -> None:
    job = compiled / "jobs" / "digest.job.json"
    job.write_text(job.read_text().replace(old, new, 1))
    done = check(cli, compiled)
    first = done.stdout.splitlines()[0]
    assert first.startswith(
        f"contracts/digest.yaml:0:0: error: job jobs/digest.job.json is stale: {why}"
    )


def test_an_anchor_in_the_edited_contract_is_refused_before_any_job_is_compared(
    cli: Cli, compiled: Path
) -> None:
    """Anchors and aliases never reach the compare: the field an alias would share cannot be
    stale in one place and current in another."""
    edit(
        compiled, "    week:\n      description: The ISO week", "    week:\n      description: &d W"
    )
    edit(compiled, "    limit:\n", "    limit:\n      description: *d\n")
    done = check(cli, compiled)
    assert done.stdout == (
        "contracts/digest.yaml:9:20: error: anchor '&d' is not allowed in a contract [HZ005]\n"
        "  hint: write the value out in full; hz refuses anchors and aliases\n"
    )
    assert done.stderr == "Found 1 error in 1 file (checked 1 file)\n"


# --- --input problems at the argument ----------------------------------------------------------


def test_an_input_value_that_fails_its_schema_names_the_flag(cli: Cli, compiled: Path) -> None:
    done = hz(cli, compiled, "render", "jobs/digest.job.json", "--input", "week=bad")
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == (
        "--input week=bad: error: input 'week': \"bad\" does not match the pattern "
        '"^[0-9]{4}-W[0-9]{2}$" [HZ702]\n'
        "Found 1 error on the command line (checked 1 file)\n"
    )


def test_an_input_value_with_newlines_and_escape_codes_is_escaped_and_cut(
    cli: Cli, compiled: Path
) -> None:
    value = "W\n::error::x\x1b[31mred\r" + "z" * 60
    done = hz(cli, compiled, "render", "jobs/digest.job.json", "--input", f"week={value}")
    first = done.stderr.splitlines()[0]
    # One line, no raw control character; the argument cut after 40 characters.
    assert first.startswith("--input week=W\\n::error::x\\x1b[31mred\\rzzzzzzzzzzzzz…: error: ")
    assert first.isprintable()
    assert len(done.stderr.splitlines()) == 2


def test_every_kind_of_bad_argument_names_it(cli: Cli, compiled: Path) -> None:
    done = hz(
        cli,
        compiled,
        *("render", "jobs/digest.job.json", "--input", "limit=[1"),
        *("--input", "nonsense", "--input", "weeks=W1"),
    )
    assert done.stderr == (
        "--input limit=[1: error: not valid JSON: Expecting ',' delimiter [HZ706]\n"
        "  hint: input 'limit' has a schema type other than string, so its value is JSON\n"
        "--input nonsense: error: not NAME=VALUE or NAME=@FILE [HZ706]\n"
        "--input weeks=W1: error: input 'weeks' is not declared by the job [HZ704]\n"
        "  hint: did you mean 'week'?\n"
        "Found 3 errors on the command line (checked 1 file)\n"
    )


def test_problems_in_a_file_and_on_the_command_line_are_counted_apart(
    cli: Cli, compiled: Path
) -> None:
    (compiled / "in.json").write_text('{"limit": "five"}')
    done = hz(
        cli, compiled, "render", "jobs/digest.job.json", "--inputs", "in.json", "--input", "week=x"
    )
    assert done.stderr == (
        "--input week=x: error: input 'week': \"x\" does not match the pattern "
        '"^[0-9]{4}-W[0-9]{2}$" [HZ702]\n'
        "in.json:1:11: error: input 'limit': expected an integer, got a string (\"five\") [HZ702]\n"
        "Found 2 errors in 1 file and on the command line (checked 2 files)\n"
    )


def test_a_render_error_counts_the_job_it_rendered(cli: Cli, compiled: Path) -> None:
    edit(compiled, "at most {{ inputs.limit }}", "at most {{ inputs.limit // 0 }}")
    assert hz(cli, compiled, "compile", "contracts", "--out", "jobs").returncode == 0
    done = hz(cli, compiled, "render", "jobs/digest.job.json")
    assert done.stderr == (
        "jobs/digest.job.json:0:0: error: prompt line 1: template failed: ZeroDivisionError: "
        "integer division or modulo by zero [HZ707]\n"
        "Found 1 error in 1 file (checked 1 file)\n"
    )


# --- hints ----------------------------------------------------------------------------------


def validate(cli: Cli, tmp_path: Path, text: str) -> CliResult:
    (tmp_path / "c.yaml").write_text(text)
    return hz(cli, tmp_path, "validate", "c.yaml")


def test_a_key_indented_one_space_too_far_gets_a_hint(cli: Cli, tmp_path: Path) -> None:
    done = validate(cli, tmp_path, CONTRACT.replace("  timeout: 2m", "   timeout: 2m"))
    assert done.stdout == (
        "c.yaml:5:11: error: YAML syntax error: mapping values are not allowed in this context "
        "[HZ004]\n"
        "  hint: check the indentation of line 5: it starts in column 4, line 4 above it in "
        "column 3; the keys of one mapping start in the same column\n"
    )


def test_numbers_where_text_belongs_get_quote_it(cli: Cli, tmp_path: Path) -> None:
    text = CONTRACT.replace("title: Weekly digest", "title: 2026")
    text = text.replace("description: The ISO week", "description: 1.10")
    done = validate(cli, tmp_path, text.replace("default: 2026-W01", "default: 0x1F"))
    assert done.stdout == (
        "c.yaml:4:10: error: hz.title: expected a string, got an integer (2026) [HZ103]\n"
        '  hint: quote it, as in title: "2026"\n'
        "c.yaml:9:20: error: hz.inputs.week.description: expected a string, got a number (1.1) "
        "[HZ103]\n"
        '  hint: quote it, as in description: "1.10"\n'
        "c.yaml:11:16: error: the default does not match its schema: hz.inputs.week.default: "
        "expected a string, got an integer (31) [HZ402]\n"
        '  hint: quote it, as in default: "0x1F"\n'
    )
    fixed = validate(cli, tmp_path, text.replace("2026\n", '"2026"\n').replace("1.10", '"1.10"'))
    assert (fixed.returncode, fixed.stdout) == (0, "")


def test_a_missing_key_says_what_to_add(cli: Cli, tmp_path: Path) -> None:
    done = validate(cli, tmp_path, CONTRACT.replace("  timeout: 2m\n", ""))
    assert done.stdout == (
        "c.yaml:1:1: error: missing required key 'timeout' in hz [HZ102]\n"
        "  hint: Wall-clock limit of the agent session: integer seconds, or a duration string of "
        'hours, minutes and seconds such as "90s", "10m", "1h" or "1h30m"; add it, as in '
        "timeout: 10m\n"
    )
    schema = validate(cli, tmp_path, CONTRACT.replace("      schema: {type: integer}\n", ""))
    assert schema.stdout == (
        "c.yaml:12:5: error: missing required key 'schema' in hz.inputs.limit [HZ102]\n"
        "  hint: A JSON Schema (2020-12) the value must validate against; add it, as in "
        "schema: {type: array, items: {type: object}}\n"
    )


def test_a_huge_undeclared_input_name_is_cut_in_the_message_too(cli: Cli, compiled: Path) -> None:
    """A 100,000-character name: the argument and the message each show 60 characters at most."""
    name = "a" * 100_000
    done = hz(cli, compiled, "render", "jobs/digest.job.json", "--input", f"{name}=1")
    assert done.stderr == (
        f"--input {'a' * 39}…: error: input '{'a' * 59}…' is not declared by the job [HZ704]\n"
        "  hint: declared inputs: limit, week\n"
        "Found 1 error on the command line (checked 1 file)\n"
    )
    (compiled / "in.json").write_text(f'{{"{name}": 1}}')
    from_file = hz(cli, compiled, "render", "jobs/digest.job.json", "--inputs", "in.json")
    assert from_file.stderr.splitlines()[0] == (
        f"in.json:1:2: error: input '{'a' * 59}…' is not declared by the job [HZ704]"
    )


def test_a_long_number_is_not_copied_whole_into_the_quote_hint(cli: Cli, tmp_path: Path) -> None:
    done = validate(cli, tmp_path, CONTRACT.replace("title: Weekly digest", "title: " + "7" * 4000))
    assert done.stdout == (
        f"c.yaml:4:10: error: hz.title: expected a string, got an integer ({'7' * 37}...) "
        "[HZ103]\n"
        f'  hint: quote it, as in title: "{"7" * 39}…"\n'
    )
