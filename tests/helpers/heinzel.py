"""Heinzelmännchen's own contracts, from the sdist of heinzel 0.7.19 (fetched by
``.ci/fetch-heinzel`` into ``HZ_HEINZEL``, default ``~/.cache/hz/heinzel``; never vendored).

``CONTRACTS`` are the six: the five ``.prose.md`` files the sdist ships (its graph module's
template, its test fixtures, its playbook's template contract) and the starter its ``new``
command writes (``starter()`` in ``_starter.py``, taken from the source as written: heinzel
needs Python 3.12, so it is read, not imported). ``workspace`` lays them out as a user has
them, the template filled as ``new --asset`` fills it, with an operator file that binds every
capability they read: ``code-host`` and ``tracker`` to the fake GitHub, ``team-graph`` and
``documents`` to command-provider scripts; and a ``[publish]`` policy with the commands their
publish actions became.
"""

from __future__ import annotations

import ast
import json
import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.fakes.github_server import FakeGitHub

VERSION = "0.7.19"
#: Captured at import, before the autouse fixture gives each test a private HOME.
SDIST = Path(os.environ.get("HZ_HEINZEL", Path.home() / ".cache/hz/heinzel")) / f"heinzel-{VERSION}"
#: The GitHub token of the operator's environment (planted: no artifact may show it).
TOKEN = "ghp_PlantedHeinzelToken0123456789abcdXYZ"
#: The assets a user gives the playbook's template (`hz heinzel new --asset TYPE=REF`).
ASSETS = {
    "team-repository": "acme/app",
    "team-project": "acme/app",
    "weekly-report": "reports/last-week.md",
    "team-tracker": "reports/tracker.md",
}
_PLACEHOLDER = re.compile(r"\{\{asset:([a-z0-9-]+)\}\}")


@dataclass(frozen=True)
class Contract:
    """One contract of the sdist: where it came from, and where a user keeps it (``path``:
    relative to the working directory; a ``me/`` or ``team/`` folder is its namespace)."""

    id: str
    source: str
    path: str


CONTRACTS = (
    Contract(
        "team-graph-keeper",
        "src/heinzel/modules/graph/templates/team-graph-keeper.prose.md",
        "me/team-graph-keeper.prose.md",
    ),
    Contract(
        "tracker-update",
        "tests/fixtures/graph/team/workflows/tracker-update.prose.md",
        "team/workflows/tracker-update.prose.md",
    ),
    Contract(
        "weekly-report",
        "tests/fixtures/graph/team/workflows/weekly-report.prose.md",
        "team/workflows/weekly-report.prose.md",
    ),
    Contract(
        "weekly-digest",
        "tests/fixtures/workflows/weekly-digest.prose.md",
        "workflows/weekly-digest.prose.md",
    ),
    Contract(
        "weekly-report-template",
        "tests/fixtures/playbook/templates/weekly-report.prose.md",
        "me/weekly-report.prose.md",
    ),
    Contract("starter", "src/heinzel/modules/heinzel/_starter.py", "me/my-workflow.prose.md"),
)


def sdist() -> Path:
    if not (SDIST / "pyproject.toml").is_file():
        pytest.fail(
            f"the heinzel {VERSION} sdist is not at {SDIST}: run `make heinzel` (or "
            ".ci/fetch-heinzel .venv/bin/python DIR and set HZ_HEINZEL=DIR)"
        )
    return SDIST


def prose_files() -> list[str]:
    """Every ``.prose.md`` file the sdist ships, relative to it."""
    root = sdist()
    return sorted(str(p.relative_to(root)) for p in root.rglob("*.prose.md"))


def _constant(tree: ast.Module, name: str) -> str:
    for node in tree.body:
        if isinstance(node, ast.Assign) and [getattr(t, "id", "") for t in node.targets] == [name]:
            value = ast.literal_eval(node.value)
            assert isinstance(value, str)
            return value
    raise AssertionError(f"no constant {name}")  # pragma: no cover - the sdist is pinned


def starter(name: str = "my-workflow") -> str:
    """The contract ``hz heinzel new NAME`` writes: the function ``starter`` of the sdist,
    run with the one constant it reads (``GUIDE``)."""
    root = sdist() / "src/heinzel/modules/heinzel"
    models = ast.parse((root / "_models.py").read_text(encoding="utf-8"))
    module = ast.parse((root / "_starter.py").read_text(encoding="utf-8"))
    [function] = [
        n for n in module.body if isinstance(n, ast.FunctionDef) and n.name in ("starter",)
    ]
    title = next(n for n in module.body if isinstance(n, ast.FunctionDef) and n.name == "title_of")
    code = ast.Module(body=[title, function], type_ignores=[])
    scope: dict[str, object] = {"GUIDE": _constant(models, "GUIDE")}
    exec(compile(code, "_starter.py", "exec"), scope)
    text = scope["starter"](name)  # type: ignore[operator]
    assert isinstance(text, str)
    return text


def fill(text: str, assets: dict[str, str]) -> str:
    """A template contract with its ``{{asset:TYPE}}`` placeholders filled, as the sdist's
    ``ContractTemplate.fill`` does (JSON-escaped into the string it stands in)."""
    return _PLACEHOLDER.sub(
        lambda m: json.dumps(assets[m.group(1)])[1:-1] if m.group(1) in assets else m.group(0),
        text,
    )


def original(contract: Contract) -> str:
    """The contract's text as Heinzelmännchen's user has it."""
    if contract.id == "starter":
        return starter()
    text = (sdist() / contract.source).read_text(encoding="utf-8")
    return fill(text, ASSETS) if contract.id == "weekly-report-template" else text


#: The command provider's program: one JSON answer per operation, from what it is asked.
COMMAND = """\
import json, sys
request = json.load(sys.stdin)
if request["operation"] == "team-graph.snapshot":
    print(json.dumps({"graph": {"nodes": {"weekly-report": {"label": "Weekly report"}},
                                "metadata": {"waiting": ["Weekly report waiting on 2 updates"]}}}))
else:
    print(json.dumps({"ref": request["args"]["ref"], "text": "Last week we shipped retries."}))
"""


#: The operator's publish commands (Heinzelmännchen's publish actions, as ``hz migrate`` names
#: them): each writes the draft it is given to ``published/NAME.md`` beside the workspace.
PUBLISH = """\
import pathlib, sys
out = pathlib.Path(sys.argv[1]) / (sys.argv[2] + ".md")
out.parent.mkdir(exist_ok=True)
out.write_text(sys.stdin.read())
"""
PUBLISH_COMMANDS = ("notes-publish", "teamwork-send-report")


@dataclass(frozen=True)
class Workspace:
    work: Path
    config: Path

    @property
    def published(self) -> Path:
        """Where the publish commands write: ``NAME.md`` per command."""
        return self.work.parent / "published"

    def env(self) -> dict[str, str]:
        return {"HZ_CONFIG": str(self.config), "GITHUB_TOKEN": TOKEN}


def serve(github: FakeGitHub) -> None:
    """What the fake GitHub holds: pull requests and issues of acme/app and fjordlight/app."""
    for repo in ("acme/app", "fjordlight/app"):
        github.add_pull(repo, 7, title="Cache the parsed schema", merged_at="2026-03-05T10:00:00Z")
        github.add_pull(repo, 8, title="Retry on 429", merged_at="2026-03-08T16:30:00Z")
        github.add_issue(repo, 21, title="Flaky upload", updated_at="2026-03-06T09:00:00Z")


def workspace(
    tmp_path: Path, api_url: str, *, runner: str = "echo", runner_table: str = ""
) -> Workspace:
    """Every contract of the sdist under ``work/`` as its user keeps it, and the operator
    file: ``runner`` is the ``agent_runner``, ``runner_table`` more of the file."""
    work = tmp_path / "work"
    for contract in CONTRACTS:
        path = work / contract.path
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(original(contract), encoding="utf-8")
    script = tmp_path / "provider.py"
    script.write_text(COMMAND)
    documents = {
        "type": "object",
        "properties": {"ref": {"type": "string"}},
        "required": ["ref"],
        "additionalProperties": False,
    }
    publish = tmp_path / "publish.py"
    publish.write_text(PUBLISH)
    commands = "".join(
        f"\n[publish.commands.{name}]\n"
        f"argv = {json.dumps([sys.executable, str(publish), str(tmp_path / 'published'), name])}\n"
        for name in PUBLISH_COMMANDS
    )
    config = tmp_path / "operator.toml"
    config.write_text(
        "[capabilities]\n"
        f"agent_runner = {json.dumps(runner)}\n"
        'code-host = "github"\n'
        'tracker = "github"\n'
        'team-graph = "command"\n'
        'documents = "command"\n\n'
        "[providers.github]\n"
        f"api_url = {json.dumps(api_url)}\n"
        'repositories = ["acme/*", "fjordlight/*"]\n'
        'token_env = "GITHUB_TOKEN"\n\n'
        '[providers.command.operations."team-graph.snapshot"]\n'
        f"argv = {json.dumps([sys.executable, str(script)])}\n"
        'result = {type = "object"}\n\n'
        '[providers.command.operations."documents.read"]\n'
        f"argv = {json.dumps([sys.executable, str(script)])}\n"
        f"args = {_toml(documents)}\n"
        'result = {type = "object"}\n\n'
        "[publish]\n"
        'allow = ["command.run"]\n' + commands + runner_table
    )
    return Workspace(work, config)


def _toml(value: object) -> str:
    """A JSON value as a TOML inline value (the JSON Schemas above need no more)."""
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k} = {_toml(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    if isinstance(value, bool):
        return "true" if value else "false"
    return json.dumps(value)
