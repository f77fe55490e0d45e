"""hz's distribution is ``hz-contracts``: the name ``hz`` on PyPI is an unrelated project whose
package ``hz`` overwrites hz's own files. No page and no string hz prints may tell anyone to
install ``hz`` by that name, and the hint for a missing extra names this environment's tool."""

from __future__ import annotations

import ast
import json
import re
import shlex
import tomllib
from pathlib import Path

import pytest

from hz.runtime.artifacts.distribution import DISTRIBUTION, extra_command

REPO = Path(__file__).resolve().parents[2]

#: An install command of pip, pipx or uv, and its arguments up to the end of the command.
_COMMAND = re.compile(
    r"\b(?:pip3?|pipx|uv(?:\s+tool|\s+pip)?)\s+(?:install|inject|add)\b([^\n`|;&]*)"
)
#: A requirement (or a pipx environment) named ``hz``: with extras, a version, or a URL.
_BARE_REQUIREMENT = re.compile(r"(?<![\w.$/-])hz\s*(?:\[|@\s*(?:git\+|https?:|file:)|[=<>!~]=)")
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")


def _arguments(text: str) -> list[str]:
    text = text.split(" #")[0]
    try:
        return shlex.split(text)
    except ValueError:  # an unbalanced quote: a table cell, prose
        return text.split()


def bare_hz_installs(text: str) -> list[str]:
    """Every install command or requirement in ``text`` that names the distribution ``hz``."""
    found = [m.group(0) for m in _BARE_REQUIREMENT.finditer(text)]
    for command in _COMMAND.finditer(text):
        for argument in _arguments(command.group(1)):
            name = _NAME.match(argument)
            if argument.startswith("-") or name is None:
                continue
            rest = argument[name.end() :]
            if name.group().lower() == "hz" and (not rest or rest[0] in "[=<>!~;@ "):
                found.append(command.group(0).strip())
    return found


@pytest.mark.parametrize(
    "text",
    [
        "pip install hz",
        "pip install 'hz[postgres]'",
        'python -m pip install -q "hz @ git+$HZ_REPO@v0.1.0"',
        "pip install hz==0.1.0",
        "pipx install hz",
        "pipx inject hz 'hz-contracts[postgres]'",
        "uv tool install hz",
        "uv tool install --with 'hz[postgres]' ./x.whl",
        "uv pip install hz",
        "uv add hz",
        "needs the extra `hz[postgres]`",
        'uv tool install "hz @ git+$HZ_REPO@v0.1.0"',
    ],
)
def test_the_scan_finds_a_bare_hz(text: str) -> None:
    assert bare_hz_installs(text) != []


@pytest.mark.parametrize(
    "text",
    [
        "pip install 'hz-contracts[postgres]'",
        'pipx install "hz-contracts @ git+$HZ_REPO@v0.1.0"',
        "pipx inject hz-contracts 'hz-contracts[postgres]'",
        "uv tool install ./hz_contracts-0.1.0-py3-none-any.whl",
        '"$RUNNER_TEMP/hz-venv/bin/pip" install -q "$HZ_ACTION_PATH"',
        "/opt/hz/bin/pip install -q -e .",
        "pip install -e . # hz itself",
        "hz run contracts/x.yaml",
        'data["hz"]',
    ],
)
def test_the_scan_leaves_the_right_name_alone(text: str) -> None:
    assert bare_hz_installs(text) == []


def _pages() -> list[Path]:
    """Every page a user follows. Decision records are history, not instructions: 0011 quotes
    the command that installed the other project."""
    pages = [REPO / "README.md", REPO / "action.yml", REPO / "Makefile", *REPO.glob("docs/**/*.md")]
    pages += [*REPO.glob(".github/workflows/*.yml"), *(REPO / ".ci").iterdir()]
    return sorted(p for p in pages if p.parent.name != "decisions")


def test_no_page_installs_the_other_projects_hz() -> None:
    found = {
        str(page.relative_to(REPO)): bare_hz_installs(page.read_text(encoding="utf-8"))
        for page in _pages()
    }
    assert {page: hits for page, hits in found.items() if hits} == {}
    assert len(found) > 20  # every doc page was read


def _strings(path: Path) -> list[str]:
    """Every string constant of a module, the literal parts of f-strings included."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [
        n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)
    ]


def test_no_string_in_the_code_installs_the_other_projects_hz() -> None:
    modules = sorted(p for top in ("hz", "compiler", "runtime") for p in (REPO / top).rglob("*.py"))
    found = {
        str(module.relative_to(REPO)): hits
        for module in modules
        if (hits := [hit for text in _strings(module) for hit in bare_hz_installs(text)])
    }
    assert found == {}
    assert len(modules) > 100


def test_the_project_is_named_hz_contracts_and_its_test_extra_names_itself() -> None:
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    assert (project["name"], DISTRIBUTION) == ("hz-contracts", "hz-contracts")
    assert project["optional-dependencies"]["test"][0] == "hz-contracts[postgres]"
    assert project["scripts"] == {"hz": "hz.cli:main"}


def test_the_extra_is_added_by_this_interpreters_pip(tmp_path: Path) -> None:
    python = str(tmp_path / "my env" / "bin" / "python")
    assert extra_command("postgres", prefix=str(tmp_path), python=python) == (
        f"{shlex.quote(python)} -m pip install 'hz-contracts[postgres]'"
    )


def test_the_extra_of_a_pipx_application_is_injected_into_its_environment(tmp_path: Path) -> None:
    venv = tmp_path / "venvs" / "hz-contracts"
    venv.mkdir(parents=True)
    (venv / "pipx_metadata.json").write_text(json.dumps({"main_package": {}}))
    assert extra_command("postgres", prefix=str(venv), python=str(venv / "bin" / "python")) == (
        "pipx inject hz-contracts 'hz-contracts[postgres]'"
    )


def test_the_extra_of_a_uv_tool_is_installed_by_uv_into_its_environment(tmp_path: Path) -> None:
    tool = tmp_path / "tools" / "hz-contracts"
    tool.mkdir(parents=True)
    (tool / "uv-receipt.toml").write_text("[tool]\n")
    python = str(tool / "bin" / "python")
    assert extra_command("postgres", prefix=str(tool), python=python) == (
        f"uv pip install --python {python} 'hz-contracts[postgres]'"
    )
