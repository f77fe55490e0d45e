"""User-controlled names and values in messages, and odd names that used to crash hz (exit 3):
each is a diagnostic, printed so that no terminal or CI log can take it for anything else."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.conftest import Cli
from tests.helpers.contracts import GREET_TIMES as CONTRACT


def _contract(tmp_path: Path, prompt: str, *, name: str = "greet") -> str:
    text = CONTRACT.replace("name: greet", f"name: {name}")
    head, _, _ = text.partition("prompt: |\n")
    (tmp_path / "c.yaml").write_text(head + "prompt: |\n  " + prompt + "\n", encoding="utf-8")
    return "c.yaml"


def test_an_undefined_value_inside_a_list_is_a_render_error(cli: Cli, tmp_path: Path) -> None:
    path = _contract(tmp_path, "{{ [inputs.who.typo] }} {{ inputs.times }}")
    done = cli("render", path, "--input", "who=Ann", cwd=tmp_path)
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr.splitlines()[0] == (
        "c.yaml:16:3: error: prompt: undefined: 'str object' has no attribute 'typo' [HZ707]"
    )


def test_a_name_with_a_trailing_newline_is_refused(cli: Cli, tmp_path: Path) -> None:
    path = _contract(tmp_path, "{{ inputs.who }} {{ inputs.times }}", name='"evil\\n"')
    done = cli("validate", path, cwd=tmp_path)
    assert (done.returncode, done.stdout.splitlines()[0]) == (
        1,
        "c.yaml:3:9: error: hz.name: 'evil\\n' is not in the expected form [HZ104]",
    )


def test_an_undeclared_input_name_cannot_write_a_workflow_command(cli: Cli, tmp_path: Path) -> None:
    path = _contract(
        tmp_path, "{{ inputs['x\\n::error::pwned'] }} {{ inputs.who }} {{ inputs.times }}"
    )
    done = cli("validate", path, "--format", "github", cwd=tmp_path)
    assert done.returncode == 1
    assert done.stdout.splitlines() == [
        "::error file=c.yaml,line=16,col=6,title=HZ502::prompt: inputs.x\\n::error::pwned is not "
        "a declared input%0Ahint: declared inputs: who, times"
    ]


def test_a_non_utf8_byte_in_an_input_is_a_diagnostic(cli: Cli, tmp_path: Path) -> None:
    path = _contract(tmp_path, "{{ inputs.who }} {{ inputs.times }}")
    done = cli("render", path, "--input", "who=\udcff", cwd=tmp_path)
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr.splitlines()[0] == (
        "--input who=\\udcff: error: byte 0xff is not UTF-8 text [HZ706]"
    )


def test_a_contract_whose_name_is_not_utf8_is_a_diagnostic(cli: Cli, tmp_path: Path) -> None:
    (tmp_path / "hz.toml").touch()
    (tmp_path / "c").mkdir()
    _contract(tmp_path, "{{ inputs.who }} {{ inputs.times }}")
    os.rename(tmp_path / "c.yaml", os.fsencode(tmp_path / "c") + b"/gr\xffeet.yaml")
    done = cli("compile", "c", "--out", "jobs", cwd=tmp_path)
    assert (done.returncode, done.stdout) == (
        1,
        "c/gr\\udcffeet.yaml:0:0: error: cannot compile a file whose name is not UTF-8 text: its "
        "job records the path as text [HZ001]\n  hint: rename the file\n",
    )
    assert not (tmp_path / "jobs").exists()


def test_a_regex_input_nested_too_deeply_is_a_diagnostic(cli: Cli, tmp_path: Path) -> None:
    path = _contract(tmp_path, "{{ inputs.who }} {{ inputs.times }}")
    text = (
        (tmp_path / path)
        .read_text()
        .replace("schema: {type: string}", "schema: {type: string, format: regex}")
    )
    (tmp_path / path).write_text(text)
    done = cli("render", path, "--input", "who=" + "(" * 5000 + ")" * 5000, cwd=tmp_path)
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr.splitlines()[0] == (
        "--input who=" + "(" * 35 + "…: error: input 'who': \"" + "(" * 58 + "… is not a valid "
        "regex: groups nested more than 100 deep [HZ702]"
    )


@pytest.mark.parametrize(
    "command",
    [("run",), ("run", "--no-ledger"), ("submit",), ("render",)],
    ids=["run", "run-no-ledger", "submit", "render"],
)
def test_running_a_contract_whose_name_is_not_utf8_says_so_as_compile_does(
    cli: Cli, tmp_path: Path, command: tuple[str, ...]
) -> None:
    """hz compile said so; hz run (with or without the ledger), submit and render exited 3:
    the job's source path was hashed as UTF-8 (attack on issue 21, H11). A repository can
    name its files so and break a CI step that runs ``hz run contracts/*.yaml``."""
    (tmp_path / "hz.toml").touch()
    (tmp_path / "c").mkdir()
    _contract(tmp_path, "{{ inputs.who }} {{ inputs.times }}")
    named = os.fsdecode(os.fsencode(tmp_path / "c") + b"/gr\xffeet.yaml")
    os.rename(tmp_path / "c.yaml", named)
    env = {"HZ_RUNNER": "echo", "HZ_STATE_DIR": str(tmp_path / "state")}
    done = cli(*command, "c/gr\udcffeet.yaml", "--input", "who=Ann", cwd=tmp_path, env=env)
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == (
        "c/gr\\udcffeet.yaml:0:0: error: cannot compile a file whose name is not UTF-8 text: its "
        "job records the path as text [HZ001]\n  hint: rename the file\n"
        "Found 1 error in 1 file (checked 1 file)\n"
    )
    assert not (tmp_path / "state").exists()


def test_a_checkout_under_a_directory_whose_name_is_not_utf8_compiles(
    cli: Cli, tmp_path: Path
) -> None:
    """Only the path a job records (relative to the compile root) must be text."""
    root = os.fsdecode(os.fsencode(tmp_path) + b"/caf\xe9")
    os.mkdir(root)
    (Path(root) / "hz.toml").touch()
    (Path(root) / "c").mkdir()
    _contract(Path(root), "{{ inputs.who }} {{ inputs.times }}")
    done = cli("compile", "c.yaml", "--out", "jobs", cwd=Path(root))
    assert done.returncode == 0, done.stdout + done.stderr
    assert json.loads((Path(root) / "jobs" / "greet.job.json").read_text())["source"]["path"] == (
        "c.yaml"
    )
