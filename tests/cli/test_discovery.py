"""Which files `hz validate DIR` and `hz compile DIR` take as contracts, and that a directory
with none fails instead of passing on nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import Cli

CONTRACT_MD = """\
---
hz:
  contract: 1
  name: weekly-status
  timeout: 10m
  agent:
    max_usd: 0.5
---

## Goal

Draft the status.

## Done when

It is drafted.
"""
NOTHING = (
    "contracts:0:0: error: no contracts found in contracts (looked for *.yaml, *.yml, *.md "
    "with an hz: frontmatter) [HZ014]\n"
    "  hint: name the directory that holds the contracts, or add one (hz init)\n"
)
COMMANDS = {
    "validate": ("validate", "contracts"),
    "compile": ("compile", "contracts", "--out", "jobs"),
    "check": ("compile", "contracts", "--out", "jobs", "--check"),
}


@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize("readme", [False, True], ids=["empty", "only-readme"])
def test_a_directory_without_contracts_fails(
    cli: Cli, tmp_path: Path, command: str, readme: bool
) -> None:
    (tmp_path / "contracts").mkdir()
    (tmp_path / "jobs").mkdir()
    if readme:
        (tmp_path / "contracts" / "README.md").write_text("# Contracts\n\n---\n\nhz: none\n")
    result = cli(*COMMANDS[command], cwd=tmp_path)
    assert (result.returncode, result.stdout) == (1, NOTHING)
    assert result.stderr.endswith("Found 1 error in 1 file (checked 0 files)\n")


def test_verbose_lists_the_markdown_files_skipped(cli: Cli, tmp_path: Path) -> None:
    (tmp_path / "contracts" / "sub").mkdir(parents=True)
    (tmp_path / "contracts" / "README.md").write_text("# Contracts\n")
    (tmp_path / "contracts" / "sub" / "notes.md").write_text("---\ntitle: notes\n---\n")
    (tmp_path / "contracts" / "weekly.prose.md").write_text(CONTRACT_MD)
    result = cli("validate", "-v", "contracts", cwd=tmp_path)
    assert (result.returncode, result.stdout) == (0, "")
    assert result.stderr == (
        "hz: skipped contracts/README.md: no hz: frontmatter\n"
        "hz: skipped contracts/sub/notes.md: no hz: frontmatter\n"
        "Success: no issues found in 1 file\n"
    )
    quiet = cli("compile", "contracts", "--out", "jobs", cwd=tmp_path)
    assert (quiet.returncode, quiet.stderr) == (
        0,
        "Success: no issues found in 1 file\n1 job in jobs: 1 written, 0 unchanged, 0 removed\n",
    )


def test_one_name_in_two_folders_names_both_files(cli: Cli, tmp_path: Path) -> None:
    (tmp_path / "contracts" / "a").mkdir(parents=True)
    (tmp_path / "contracts" / "b").mkdir()
    (tmp_path / "contracts" / "a" / "weekly.md").write_text(CONTRACT_MD)
    (tmp_path / "contracts" / "b" / "weekly.md").write_text(CONTRACT_MD)
    result = cli("compile", "contracts", "--out", "jobs", "--format", "github", cwd=tmp_path)
    message = (
        "two contracts are named 'weekly-status': contracts/a/weekly.md and "
        "contracts/b/weekly.md%0Ahint: hz.name names the job file; give each contract its own "
        "name"
    )
    assert (result.returncode, result.stdout) == (
        1,
        f"::error file=contracts/a/weekly.md,line=4,col=9,title=HZ601::{message}\n"
        f"::error file=contracts/b/weekly.md,line=4,col=9,title=HZ601::{message}\n",
    )


@pytest.mark.parametrize(
    ("front", "where"),
    [
        ('"hz":\n  contract: 1\n  name: x\nx-a: [}\n', "line=5,col=7"),  # a quoted key
        ("{hz: {contract: 1, name: x}, x-a: [}\n", "line=2,col=36"),  # a flow mapping
        ("? hz\n: {contract: 1, name: x}\nx-a: b: c\n", "line=4,col=7"),  # a complex key
    ],
    ids=["quoted", "flow", "complex"],
)
def test_a_contract_whose_hz_key_is_not_plain_is_found(
    cli: Cli, tmp_path: Path, front: str, where: str
) -> None:
    """A frontmatter that names hz: other than at the start of a line is still a contract:
    a broken one is reported, not skipped while the directory passes on the others."""
    (tmp_path / "contracts").mkdir()
    (tmp_path / "contracts" / "good.md").write_text(CONTRACT_MD)
    (tmp_path / "contracts" / "odd.md").write_text(f"---\n{front}---\n\nbody\n")
    result = cli("validate", "contracts", "--format", "github", cwd=tmp_path)
    assert (result.returncode, result.stdout.split(",title=")[0], result.stderr) == (
        1,
        f"::error file=contracts/odd.md,{where}",
        "Found 1 error in 1 file (checked 2 files)\n",
    )


def test_a_valid_contract_with_a_quoted_hz_key_is_checked(cli: Cli, tmp_path: Path) -> None:
    (tmp_path / "contracts").mkdir()
    quoted = CONTRACT_MD.replace("\nhz:\n", '\n"hz":\n')
    (tmp_path / "contracts" / "weekly.md").write_text(quoted)
    result = cli("validate", "contracts", cwd=tmp_path)
    assert (result.returncode, result.stderr) == (0, "Success: no issues found in 1 file\n")
