"""compile: the contract → job mapping, the compile root, and unique names."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from hz import __version__
from hz.compiler.compile import compile_contract, compile_contracts, compile_paths, find_root
from hz.compiler.contract import Contract, InputDecl
from hz.compiler.diagnostics import Diagnostic
from hz.compiler.source import Pos, SourceDoc
from hz.runtime.artifacts.canonical import canonical_json
from hz.runtime.artifacts.errors import HzError
from hz.runtime.artifacts.models import (
    Budget,
    InputSpec,
    Job,
    OutputSpec,
    SourceRef,
    ToolProfile,
    parse_artifact,
)

TEXT = "hz:\n  contract: 1\n  name: demo\n"  # the bytes only feed the sha256 here


def _contract(path: Path, name: str = "demo", **changes: object) -> Contract:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(TEXT, encoding="utf-8")
    doc = SourceDoc(str(path), TEXT, {}, values={("hz", "name"): Pos(3, 9)})
    fields: dict[str, object] = {
        "source": doc,
        "name": name,
        "title": "Demo",
        "timeout_seconds": 90,
        "tools": ("Read", "Grep"),
        "max_usd": 0.25,
        "inputs": (
            InputDecl("week", "The week", {"type": "string"}, True, "2026-W48"),
            InputDecl("issues", None, {"type": "array"}, False),
        ),
        "output_format": "json",
        "output_schema": {"type": "object"},
        "contract_text": "Be brief.\n",
        "template": "Week {{ inputs.week }}\n",
    }
    fields.update(changes)
    return Contract(**fields)  # type: ignore[arg-type]


def test_contract_maps_onto_job(tmp_path: Path) -> None:
    job = compile_contract(_contract(tmp_path / "contracts" / "demo.yaml"), root=tmp_path)
    expected = Job(
        name="demo",
        title="Demo",
        source=SourceRef(
            path="contracts/demo.yaml", sha256=hashlib.sha256(TEXT.encode()).hexdigest()
        ),
        timeout_seconds=90,
        tools=ToolProfile(tools=("Read", "Grep")),
        budget=Budget(max_usd=0.25),
        inputs={
            "issues": InputSpec(schema_={"type": "array"}, required=True),
            "week": InputSpec(
                description="The week",
                schema_={"type": "string"},
                required=False,
                default="2026-W48",
            ),
        },
        output=OutputSpec(format="json", schema_={"type": "object"}),
        contract="Be brief.\n",
        template="Week {{ inputs.week }}\n",
        hz_version=__version__,
    )
    assert job == expected.sealed()
    assert job.digest == job.compute_digest() != ""


def test_job_text_has_no_absolute_path_and_round_trips(tmp_path: Path) -> None:
    job = compile_contract(_contract(tmp_path / "c" / "demo.yaml"), root=tmp_path)
    text = canonical_json(job.to_json_data())
    assert str(tmp_path) not in text
    assert parse_artifact(text, "demo.job.json") == job


def test_sealed_text_is_the_sealed_jobs_canonical_json(tmp_path: Path) -> None:
    # hz compile writes the text sealed_text made with the job, from one serialization.
    job = compile_contract(_contract(tmp_path / "demo.yaml"), root=tmp_path)
    unsealed = job.model_copy(update={"digest": ""})
    sealed, text = unsealed.sealed_text()
    assert sealed == job
    assert text == canonical_json(job.to_json_data())


def test_contract_outside_the_root_is_an_error(tmp_path: Path) -> None:
    contract = _contract(tmp_path / "elsewhere" / "demo.yaml")
    root = tmp_path / "root"
    with pytest.raises(HzError) as e:
        compile_contract(contract, root=root)
    assert e.value.message == f"{tmp_path}/elsewhere/demo.yaml is outside the compile root {root}"
    assert e.value.hint == "pass --root with a directory that holds every contract"


def test_unreadable_source_is_an_error(tmp_path: Path) -> None:
    contract = _contract(tmp_path / "demo.yaml")
    (tmp_path / "demo.yaml").unlink()
    with pytest.raises(HzError) as e:
        compile_contract(contract, root=tmp_path)
    assert e.value.message == f"{tmp_path}/demo.yaml: cannot read file: No such file or directory"


def test_root_is_the_nearest_marked_directory(tmp_path: Path) -> None:
    (tmp_path / "a" / "b").mkdir(parents=True)
    (tmp_path / "a" / "b" / "x.yaml").touch()
    assert find_root([tmp_path / "a" / "b" / "x.yaml"]) == tmp_path / "a" / "b"
    (tmp_path / "hz.toml").touch()
    assert find_root([tmp_path / "a" / "b" / "x.yaml"]) == tmp_path
    (tmp_path / "a" / ".git").mkdir()
    assert find_root([tmp_path / "a" / "b", tmp_path / "a" / "b" / "x.yaml"]) == tmp_path / "a"


def test_root_without_marker_is_the_common_directory(tmp_path: Path) -> None:
    (tmp_path / "p" / "one").mkdir(parents=True)
    (tmp_path / "p" / "two").mkdir()
    assert find_root([tmp_path / "p" / "one", tmp_path / "p" / "two"]) == tmp_path / "p"


def test_two_contracts_with_one_name(tmp_path: Path) -> None:
    first = _contract(tmp_path / "a.yaml")
    second = _contract(tmp_path / "sub" / "b.yaml")
    run = compile_contracts([second, first], root=tmp_path)
    assert run.jobs == ()
    assert run.failed
    message = f"two contracts are named 'demo': {tmp_path}/a.yaml and {tmp_path}/sub/b.yaml"
    hint = "hz.name names the job file; give each contract its own name"
    # Both files, each where its name is.
    assert run.diagnostics == (
        Diagnostic("HZ601", message, f"{tmp_path}/a.yaml", 3, 9, hint=hint),
        Diagnostic("HZ601", message, f"{tmp_path}/sub/b.yaml", 3, 9, hint=hint),
    )


def test_jobs_come_in_path_order(tmp_path: Path) -> None:
    b = _contract(tmp_path / "b.yaml", name="beta")
    a = _contract(tmp_path / "a.yaml", name="alpha")
    run = compile_contracts([b, a], root=tmp_path)
    assert [c.job.name for c in run.jobs] == ["alpha", "beta"]
    assert [c.contract_path for c in run.jobs] == [f"{tmp_path}/a.yaml", f"{tmp_path}/b.yaml"]
    assert not run.failed


VALID = """\
hz:
  contract: 1
  name: {name}
  timeout: 90s
  agent:
    max_usd: 0.5
contract: |
  Be brief.
prompt: |
  Hello.
"""


def test_compile_paths_validates_first(tmp_path: Path) -> None:
    (tmp_path / "good.yaml").write_text(VALID.format(name="good"), encoding="utf-8")
    (tmp_path / "bad.yaml").write_text(VALID.format(name="Bad Name"), encoding="utf-8")
    run = compile_paths([str(tmp_path)])
    assert run.jobs == ()
    assert [(d.file, d.code) for d in run.diagnostics] == [(f"{tmp_path}/bad.yaml", "HZ104")]
    assert run.files_checked == 2


def test_compile_paths_relative_to_found_root(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "contracts").mkdir()
    (tmp_path / "contracts" / "one.yaml").write_text(VALID.format(name="one"), encoding="utf-8")
    run = compile_paths([str(tmp_path / "contracts")])
    assert run.root == tmp_path
    assert [c.job.source.path for c in run.jobs] == ["contracts/one.yaml"]
    assert run.diagnostics == ()
