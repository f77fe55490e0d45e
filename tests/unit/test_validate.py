"""validate_source and validate_paths: the Contract value, the version gate, file discovery."""

from __future__ import annotations

import io
import textwrap
from pathlib import Path

import pytest

from hz.compiler.contract import InputDecl
from hz.compiler.diagnostics import Diagnostic
from hz.compiler.load.loader import load_bytes
from hz.compiler.source import SourceDoc
from hz.compiler.validate import expand_paths, validate_paths, validate_source

GOOD = """\
hz:
  contract: 1
  name: weekly-status
  title: Weekly status
  timeout: 1h30m
  agent:
    tools: [Read, Grep]
    max_usd: 2
  inputs:
    week:
      description: The ISO week
      schema: {type: string}
      default: "2026-W48"
    issues:
      schema: {type: array}
  output:
    format: json
    schema: {type: object}
contract: |
  Rules.
prompt: |
  {{ inputs.week }} {{ inputs.issues | length }}
"""

MINIMAL = """\
hz:
  contract: 1
  name: tiny
  timeout: 45
  agent: {max_usd: 0.5}
contract: Rules.
prompt: Hello.
"""


def doc_of(text: str, path: str = "c.yaml") -> SourceDoc:
    doc, diags = load_bytes(textwrap.dedent(text).encode(), path)
    assert diags == []
    assert doc is not None
    return doc


def test_valid_contract_fills_every_field() -> None:
    doc = doc_of(GOOD)
    contract, diags = validate_source(doc)
    assert diags == []
    assert contract is not None
    assert contract.source is doc
    assert contract.name == "weekly-status"
    assert contract.title == "Weekly status"
    assert contract.timeout_seconds == 5400
    assert contract.tools == ("Read", "Grep")
    assert contract.max_usd == 2.0
    assert isinstance(contract.max_usd, float)
    assert contract.inputs == (
        InputDecl("week", "The ISO week", {"type": "string"}, True, "2026-W48"),
        InputDecl("issues", None, {"type": "array"}, False, None),
    )
    assert contract.output_format == "json"
    assert contract.output_schema == {"type": "object"}
    assert contract.contract_text == "Rules.\n"
    assert contract.template == "{{ inputs.week }} {{ inputs.issues | length }}\n"


def test_defaults_of_optional_fields() -> None:
    contract, diags = validate_source(doc_of(MINIMAL))
    assert diags == []
    assert contract is not None
    assert (contract.title, contract.tools, contract.inputs) == (None, (), ())
    assert (contract.output_format, contract.output_schema) == ("markdown", None)
    assert contract.timeout_seconds == 45


def test_version_gate_reports_one_error_and_nothing_else() -> None:
    text = MINIMAL.replace("contract: 1", "contract: 7").replace("timeout: 45", "timeout: no")
    contract, diags = validate_source(doc_of(text + "extra: key\n"))
    assert contract is None
    assert diags == [
        Diagnostic(
            "HZ100",
            "this contract is written in format version 7 and needs a newer hz "
            "(this hz reads version 1)",
            "c.yaml",
            2,
            13,
            hint="upgrade hz, or write the contract in format version 1",
        )
    ]


@pytest.mark.parametrize(
    ("value", "code", "message"),
    [
        ('"2"', "HZ103", "hz.contract: expected an integer, got a string ('2')"),
        ("true", "HZ103", "hz.contract: expected an integer, got a boolean (true)"),
        ("0.5", "HZ103", "hz.contract: expected an integer, got a number (0.5)"),
        ("0", "HZ104", "hz.contract: must be at least 1, got 0"),
    ],
)
def test_a_version_that_is_not_a_newer_integer_gets_schema_errors(
    value: str, code: str, message: str
) -> None:
    _, diags = validate_source(doc_of(MINIMAL.replace("contract: 1", f"contract: {value}")))
    assert [(d.code, d.message) for d in diags] == [(code, message)]


def test_missing_version_is_a_missing_key() -> None:
    _, diags = validate_source(doc_of(MINIMAL.replace("  contract: 1\n", "")))
    assert [(d.code, d.message, d.line, d.column) for d in diags] == [
        ("HZ102", "missing required key 'contract' in hz", 1, 1)
    ]


def test_ceiling_is_a_parameter() -> None:
    doc = doc_of(MINIMAL)
    assert validate_source(doc, max_usd_ceiling=0.5)[1] == []
    contract, diags = validate_source(doc, max_usd_ceiling=0.25)
    assert contract is None
    assert [d.message for d in diags] == [
        "hz.agent.max_usd: 0.5 is over the ceiling of 0.25 US dollars"
    ]


def test_every_problem_in_one_pass() -> None:
    text = MINIMAL.replace("name: tiny", "name: Tiny").replace("timeout: 45", "timeout: 0")
    text = text.replace("{max_usd: 0.5}", "{max_usd: -1, model: x}")
    text = text.replace("prompt: Hello.", "prompt: '{{ inputs.x }}'")
    _, diags = validate_source(doc_of(text))
    assert [d.code for d in diags] == ["HZ104", "HZ302", "HZ303", "HZ202", "HZ502"]


def write(path: Path, text: str = MINIMAL) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_expand_directories_recursively_sorted(tmp_path: Path) -> None:
    for rel in ["b.yaml", "a.yml", "sub/z.yaml", "sub/deeper/a.yaml", "c.json", "a.yaml.bak"]:
        write(tmp_path / rel)
    base = str(tmp_path)
    assert list(expand_paths([base]).files) == [
        f"{base}/a.yml",
        f"{base}/b.yaml",
        f"{base}/sub/deeper/a.yaml",
        f"{base}/sub/z.yaml",
    ]


def test_expand_keeps_order_of_arguments_and_drops_repeats(tmp_path: Path) -> None:
    a, b = write(tmp_path / "a.yaml"), write(tmp_path / "b.yaml")
    assert list(expand_paths([str(b), str(a), str(b), "-", "missing.yaml"]).files) == [
        str(b),
        str(a),
        "-",
        "missing.yaml",
    ]


def test_validate_paths_collects_over_files_sorted(tmp_path: Path) -> None:
    write(tmp_path / "b.yaml", MINIMAL.replace("timeout: 45", "timeout: 45x"))
    write(tmp_path / "a.yaml", MINIMAL.replace("name: tiny", "name: A"))
    write(tmp_path / "ok.yaml")
    run = validate_paths([tmp_path])
    assert run.files_checked == 3
    assert [c.name for c in run.contracts] == ["tiny"]
    assert [(Path(d.file).name, d.code) for d in run.diagnostics] == [
        ("a.yaml", "HZ104"),
        ("b.yaml", "HZ301"),
    ]
    assert not run.ok


def test_validate_paths_missing_file_is_hz001(tmp_path: Path) -> None:
    missing = str(tmp_path / "nope.yaml")
    run = validate_paths([missing])
    assert run.diagnostics == (
        Diagnostic("HZ001", "cannot read file: No such file or directory", missing),
    )
    assert run.files_checked == 1
    assert run.contracts == ()


def test_validate_paths_reads_stdin_as_stdin_name() -> None:
    bad = MINIMAL.replace("timeout: 45", "timeout: 99h")
    run = validate_paths(["-"], stdin=io.BytesIO(bad.encode()))
    assert [(d.file, d.code, d.line) for d in run.diagnostics] == [("<stdin>", "HZ302", 4)]
    good = validate_paths(["-"], stdin=io.BytesIO(MINIMAL.encode()))
    assert good.ok
    assert good.contracts[0].source.path == "<stdin>"


def test_loader_problems_stop_that_file_only(tmp_path: Path) -> None:
    write(tmp_path / "a.yaml", "hz: [\n")
    write(tmp_path / "b.yaml")
    run = validate_paths([str(tmp_path)])
    assert [d.code for d in run.diagnostics] == ["HZ004"]
    assert len(run.contracts) == 1


def test_empty_directory_is_an_error_not_a_pass(tmp_path: Path) -> None:
    run = validate_paths([str(tmp_path)])
    message = (
        f"no contracts found in {tmp_path} (looked for *.yaml, *.yml, *.md with an hz: frontmatter)"
    )
    assert (run.files_checked, run.ok) == (0, False)
    assert [(d.code, d.message, d.file) for d in run.diagnostics] == [
        ("HZ014", message, str(tmp_path))
    ]


def test_huge_stdin_is_refused_without_reading_it_all() -> None:
    class Endless(io.RawIOBase):
        served = 0

        def readable(self) -> bool:
            return True

        def readinto(self, buffer: bytearray) -> int:  # type: ignore[override]
            buffer[:] = b"#" * len(buffer)
            self.served += len(buffer)
            return len(buffer)

    source = Endless()
    run = validate_paths(["-"], stdin=io.BufferedReader(source))
    assert [d.code for d in run.diagnostics] == ["HZ003"]
    assert source.served < 1024 * 1024


def test_expand_checks_a_file_named_twice_once_under_its_first_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write(tmp_path / "contracts" / "a.yaml")
    monkeypatch.chdir(tmp_path)
    assert list(
        expand_paths(["contracts", "./contracts/a.yaml", "contracts/../contracts/a.yaml"]).files
    ) == ["contracts/a.yaml"]
    assert list(expand_paths(["./contracts/a.yaml", "contracts"]).files) == ["./contracts/a.yaml"]


def test_unreadable_directory_is_hz001(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    write(tmp_path / "ok.yaml")
    locked = tmp_path / "locked"
    locked.mkdir()
    write(locked / "hidden.yaml")
    real_scandir = os.scandir

    def scandir(path: str) -> object:
        # Root ignores permissions; this is what os.walk meets under chmod 000 as a user.
        if os.fspath(path) == str(locked):
            raise PermissionError(13, "Permission denied", os.fspath(path))
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", scandir)
    run = validate_paths([tmp_path])
    assert run.diagnostics == (
        Diagnostic("HZ001", "cannot read directory: Permission denied", str(locked)),
    )
    assert (run.files_checked, run.empty_dirs) == (1, ())


def test_non_regular_files_are_skipped_in_directories_and_refused_by_name(
    tmp_path: Path,
) -> None:
    import os

    write(tmp_path / "ok.yaml")
    os.mkfifo(tmp_path / "pipe.yaml")
    run = validate_paths([tmp_path])
    assert (run.files_checked, run.diagnostics, len(run.contracts)) == (1, (), 1)
    named = validate_paths([tmp_path / "pipe.yaml"])
    assert named.diagnostics == (
        Diagnostic(
            "HZ001",
            "not a regular file: a contract is read from a file (or - for stdin)",
            str(tmp_path / "pipe.yaml"),
        ),
    )


def test_a_directory_without_contracts_is_named(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "a.txt").write_text("no contract")
    run = validate_paths([tmp_path / "empty", tmp_path / "notes"])
    assert run.empty_dirs == (str(tmp_path / "empty"), str(tmp_path / "notes"))
    assert run.files_checked == 0
    assert [(d.code, d.file) for d in run.diagnostics] == [
        ("HZ014", str(tmp_path / "empty")),
        ("HZ014", str(tmp_path / "notes")),
    ]


@pytest.mark.parametrize(
    ("version", "code", "message", "hint"),
    [
        (
            "2.0",
            "HZ100",
            "this contract is written in format version 2.0 and needs a newer hz "
            "(this hz reads version 1)",
            "upgrade hz, or write the contract in format version 1",
        ),
        (
            "1.5",
            "HZ100",
            "this contract is written in format version 1.5 and needs a newer hz "
            "(this hz reads version 1)",
            "upgrade hz, or write the contract in format version 1",
        ),
        (
            "9" * 5000,
            "HZ100",
            f"this contract is written in format version {'9' * 40}… and needs a newer hz "
            "(this hz reads version 1)",
            "upgrade hz, or write the contract in format version 1",
        ),
        (
            '"2"',
            "HZ103",
            "hz.contract: expected an integer, got a string ('2')",
            "write the version as a number, without quotes: contract: 2",
        ),
        (
            "two",
            "HZ103",
            "hz.contract: expected an integer, got a string ('two')",
            "the format version is a number: contract: 1",
        ),
    ],
)
def test_version_gate_reports_one_error_only(
    version: str, code: str, message: str, hint: str
) -> None:
    # The rest is written in some other format: unknown and missing keys are not reported.
    text = f"hz:\n  contract: {version}\n  retries: 3\nsteps: []\n"
    doc, loaded = load_bytes(text.encode(), "c.yaml")
    assert (doc is not None, loaded) == (True, [])
    assert validate_source(doc) == (None, [Diagnostic(code, message, "c.yaml", 2, 13, hint=hint)])
