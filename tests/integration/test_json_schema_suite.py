"""The official JSON-Schema-Test-Suite, draft 2020-12, through hz's own paths.

Every core case (every file outside ``optional/``), the ``optional/format`` cases of every
format hz asserts and the optional ECMA-262 regex files run three ways, in-process:

- **validate**: a contract whose input ``v`` has the test's schema as ``schema`` (and as the
  output schema) and the test's data as ``default`` — the schema must be accepted, the default
  refused (HZ402) exactly when the suite says the data is invalid;
- **render**: the compiled job's input ``v`` given the data in an inputs file (HZ702);
- **run**: the data as the model's JSON answer, through the ``echo`` runner and the output
  check (``completed`` or ``failed``/``schema_invalid``).

The suite comes from the sdist of the installed jsonschema on PyPI (``make
json-schema-suite``, run by ``make test``); ``HZ_JSON_SCHEMA_SUITE`` names the directory.
Deliberate differences are listed in ``DIFFERENCES`` with the reason, and asserted to fail
the documented way; the score is printed.
"""

from __future__ import annotations

import importlib.metadata
import json
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import pytest

from hz.compiler.compile import compile_contract
from hz.compiler.diagnostics import Diagnostic
from hz.compiler.inputs.values import collect_inputs
from hz.compiler.load.loader import load_bytes
from hz.compiler.validate import validate_source
from hz.runtime.artifacts.canonical import sha256_hex
from hz.runtime.artifacts.models import (
    Budget,
    InputSpec,
    Job,
    OutputSpec,
    Packet,
    SourceRef,
    ToolProfile,
)
from hz.runtime.execution.execute import bind, execute
from hz.runtime.jsonschema.formats import ASSERTED
from hz.runtime.runners.protocol import RunRequest
from tests.helpers.run_request import runner_config

REPO = Path(__file__).resolve().parents[2]
VERSION = importlib.metadata.version("jsonschema")
#: Captured at import, before the autouse fixture gives each test a private HOME.
SUITE_DIR = Path(
    os.environ.get("HZ_JSON_SCHEMA_SUITE", Path.home() / ".cache/hz/json-schema-suite")
)
TESTS = SUITE_DIR / f"jsonschema-{VERSION}" / "json" / "tests" / "draft2020-12"


@dataclass(frozen=True)
class Difference:
    """A schema of the suite whose cases hz answers differently on purpose, and how.

    ``remote``: `hz validate` refuses the schema with HZ401 (and HZ403 for the output schema)
    at the reference, "the reference ... is outside this schema"; a job that carries such a
    schema anyway (written by hand) cannot check a value: render reports HZ702 "cannot be
    checked against its schema", a run ends ``schema_invalid`` "could not be checked".
    ``format`` and ``dialect``: the cases that differ are refused as the value check refuses
    any value (HZ402, HZ702, ``schema_invalid``); the other cases agree.
    """

    kind: Literal["remote", "format", "dialect"]
    reason: str


def _remote(ref: str) -> Difference:
    return Difference(
        "remote",
        f"a reference to another document ({ref}): values are checked offline and hz "
        "retrieves no schema, so the reference is refused when validating",
    )


def _asserted(name: str) -> Difference:
    return Difference(
        "format",
        f"hz asserts format {name} (2020-12 makes format an annotation unless a validator "
        "chooses to assert it); the formats hz asserts are the same for every value",
    )


#: A whole file of the suite (every schema in it).
ALL = "*"
#: The one list of cases hz does not follow on purpose: (file, schema description) -> how.
DIFFERENCES: dict[tuple[str, str], Difference] = {
    ("refRemote.json", ALL): _remote("a document the suite's harness serves on localhost"),
    ("vocabulary.json", ALL): Difference(
        "dialect",
        "`$schema` names a custom metaschema, another document: hz reads every schema as "
        "draft 2020-12 with all its vocabularies (a keyword of the validation vocabulary "
        "still validates)",
    ),
    ("dynamicRef.json", "strict-tree schema, guards against misspelled properties"): _remote(
        "tree.json"
    ),
    ("dynamicRef.json", "tests for implementation dynamic anchor and reference link"): _remote(
        "extendible-dynamic-ref.json"
    ),
    ("dynamicRef.json", "$ref and $dynamicAnchor are independent of order - $defs first"): (
        _remote("extendible-dynamic-ref.json")
    ),
    ("dynamicRef.json", "$ref and $dynamicAnchor are independent of order - $ref first"): (
        _remote("extendible-dynamic-ref.json")
    ),
    ("dynamicRef.json", "$ref to $dynamicRef finds detached $dynamicAnchor"): _remote(
        "detached-dynamicref.json"
    ),
    **{("format.json", f"{name} format"): _asserted(name) for name in ASSERTED},
}


@dataclass(frozen=True)
class Group:
    file: str
    description: str
    schema: Any
    tests: tuple[tuple[str, Any, bool], ...]


def groups(files: list[str]) -> list[Group]:
    if not TESTS.is_dir():
        pytest.fail(
            f"the JSON-Schema-Test-Suite is not at {TESTS}: run `make json-schema-suite` "
            "(or .ci/fetch-json-schema-suite .venv/bin/python DIR and set HZ_JSON_SCHEMA_SUITE=DIR)"
        )
    out = []
    for name in files:
        for group in json.loads((TESTS / name).read_text(encoding="utf-8")):
            tests = tuple((t["description"], t["data"], t["valid"]) for t in group["tests"])
            out.append(Group(name, group["description"], group["schema"], tests))
    return out


def core_files() -> list[str]:
    return sorted(p.name for p in TESTS.glob("*.json"))


#: The optional files that hold hz to its ECMA-262 claim (docs/contract-reference.md).
ECMA_FILES = (
    "optional/ecmascript-regex.json",
    "optional/non-bmp-regex.json",
    "optional/format/ecmascript-regex.json",
)


def format_files() -> list[str]:
    return [f"optional/format/{name}.json" for name in ASSERTED]


def flow(value: Any) -> str:
    """JSON as a YAML flow node; characters outside the BMP written as themselves (YAML has no
    surrogate-pair escapes)."""
    return json.dumps(value, ensure_ascii=False)


def contract(schema: Any, default: Any = None, *, with_default: bool = False) -> bytes:
    value = f"\n      default: {flow(default)}" if with_default else ""
    return f"""\
hz:
  contract: 1
  name: suite
  timeout: 60
  agent: {{max_usd: 1}}
  inputs:
    v:
      schema: {flow(schema)}{value}
  output:
    format: json
    schema: {flow(schema)}
contract: Check.
prompt: "{{{{ inputs.v }}}}"
""".encode()


def errors_of(data: bytes) -> list[Diagnostic]:
    doc, problems = load_bytes(data, "suite.yaml")
    if doc is None:
        return problems
    return [d for d in validate_source(doc)[1] if d.severity == "error"]


def raw_job(schema: Any) -> Job:
    """A job as `hz compile` would write it, for schemas validation refuses (hand-written)."""
    return Job(
        name="suite",
        source=SourceRef(path="suite.yaml", sha256="0" * 64),
        timeout_seconds=60,
        tools=ToolProfile(tools=()),
        budget=Budget(max_usd=1),
        inputs={"v": InputSpec(schema_=schema)},
        output=OutputSpec(format="json", schema_=schema),
        contract="Check.",
        template="{{ inputs.v }}",
        hz_version="0",
    ).sealed()


@dataclass(frozen=True)
class Outcome:
    """What one path said about one test: ``None`` for valid, else the messages."""

    group: Group
    test: str
    expected: bool
    path: str
    refused: tuple[str, ...] | None

    @property
    def agrees(self) -> bool:
        return (self.refused is None) is self.expected


def run_group(group: Group, tmp: Path) -> Iterator[Outcome]:
    schema_errors = errors_of(contract(group.schema))
    job = raw_job(group.schema)
    if not schema_errors:
        doc, _ = load_bytes(contract(group.schema), str(tmp / "suite.yaml"))
        assert doc is not None
        checked, _ = validate_source(doc)
        assert checked is not None
        job = compile_contract(checked, root=tmp, data=contract(group.schema))
    for description, data, valid in group.tests:

        def outcome(
            path: str, refused: list[str], *, test: str = description, valid: bool = valid
        ) -> Outcome:
            return Outcome(group, test, valid, path, tuple(refused) or None)

        if schema_errors:
            yield outcome("validate", [f"{d.code} {d.message}" for d in schema_errors])
        else:
            found = errors_of(contract(group.schema, data, with_default=True))
            yield outcome("validate", [f"{d.code} {d.message}" for d in found])
        inputs = tmp / "inputs.json"
        inputs.write_text(json.dumps({"v": data}), encoding="utf-8")
        diags = collect_inputs(job.inputs, inputs_file=inputs, input_args=(), target="job")[1]
        yield outcome("render", [f"{d.code} {d.message}" for d in diags])
        draft = json.dumps(data)
        packet = Packet(
            job=job,
            prompt=draft,
            contract="Check.",
            inputs_sha256="1" * 64,
            job_digest=job.digest,
            prompt_sha256=sha256_hex(draft),
        )
        result = execute(
            bind(runner_config("echo", {})), RunRequest.for_packet(packet, workdir=tmp)
        )
        refused = [] if result.status == "completed" else [f"{result.failure_kind} {result.reason}"]
        yield outcome("run", refused)


@pytest.fixture(scope="module")
def core(tmp_path_factory: pytest.TempPathFactory) -> list[Outcome]:
    tmp = tmp_path_factory.mktemp("suite")
    return [o for g in groups(core_files()) for o in run_group(g, tmp)]


@pytest.fixture(scope="module")
def ecma(tmp_path_factory: pytest.TempPathFactory) -> list[Outcome]:
    tmp = tmp_path_factory.mktemp("ecma")
    return [o for g in groups(list(ECMA_FILES)) for o in run_group(g, tmp)]


@pytest.fixture(scope="module")
def formats(tmp_path_factory: pytest.TempPathFactory) -> list[Outcome]:
    tmp = tmp_path_factory.mktemp("formats")
    return [o for g in groups(format_files()) for o in run_group(g, tmp)]


def difference_of(group: Group) -> Difference | None:
    return DIFFERENCES.get((group.file, group.description)) or DIFFERENCES.get((group.file, ALL))


def listed(outcome: Outcome) -> bool:
    return difference_of(outcome.group) is not None


def disagreements(outcomes: list[Outcome]) -> list[str]:
    return [
        f"{o.path}: {o.group.file}: {o.group.description}: {o.test}: expected "
        f"{'valid' if o.expected else 'invalid'}, got {o.refused or 'valid'}"
        for o in outcomes
        if not o.agrees and not listed(o)
    ]


def test_every_core_case_agrees_on_every_path_or_is_a_listed_difference(
    core: list[Outcome],
) -> None:
    assert disagreements(core) == []
    assert {o.path for o in core} == {"validate", "render", "run"}


def test_the_refusal_of_a_valid_default_or_value_is_the_value_check_itself(
    core: list[Outcome],
) -> None:
    # An invalid value is refused by the schema check of its path, not by anything else.
    prefixes = {"validate": ("HZ402 ",), "render": ("HZ702 ",), "run": ("schema_invalid ",)}
    wrong = [
        (o.path, o.group.description, o.test, message)
        for o in core
        if not listed(o) and o.refused
        for message in o.refused
        if not message.startswith(prefixes[o.path])
    ]
    assert wrong == []


def test_listed_differences_fail_the_documented_way(core: list[Outcome]) -> None:
    seen = {
        (o.group.file, o.group.description if (o.group.file, ALL) not in DIFFERENCES else ALL)
        for o in core
        if listed(o)
    }
    assert seen == set(DIFFERENCES)  # every listed difference is still in the suite
    for o in (o for o in core if listed(o)):
        difference = difference_of(o.group)
        assert difference is not None
        if difference.kind == "remote":
            assert o.refused is not None
            assert_refused_for_the_reference(o.path, o.refused)
        elif not o.agrees:  # hz refuses a value the suite accepts, as it refuses any value
            assert o.refused is not None
            (message,) = o.refused
            prefix = {
                "validate": "HZ402 the default does not match its schema: ",
                "render": "HZ702 input 'v",
                "run": "schema_invalid the draft does not match the output schema at $",
            }[o.path]
            assert message.startswith(prefix)
            if difference.kind == "format":
                name = o.group.description.removesuffix(" format")
                named = f"is not a '{name}'" if o.path == "run" else f"is not a valid {name}"
                assert named in message


def assert_refused_for_the_reference(path: str, refused: tuple[str, ...]) -> None:
    if path == "validate":
        assert {message.split()[0] for message in refused} == {"HZ401", "HZ403"}
        assert all(message.endswith("is outside this schema") for message in refused)
    elif path == "render":
        (message,) = refused
        assert message.startswith(
            "HZ702 input 'v': cannot be checked against its schema: cannot resolve the reference '"
        )
    else:
        (message,) = refused
        assert message.startswith(
            "schema_invalid the draft could not be checked against the output schema: "
            "cannot resolve the reference '"
        )


def test_ecma_regex_cases_agree(ecma: list[Outcome]) -> None:
    assert disagreements(ecma) == []
    assert {o.group.file for o in ecma} == set(ECMA_FILES)


def test_format_cases_agree_for_every_asserted_format(formats: list[Outcome]) -> None:
    assert disagreements(formats) == []
    assert {o.group.file for o in formats} == set(format_files())


def score(outcomes: list[Outcome]) -> tuple[int, int, int]:
    """(cases that agree on every path, cases that are listed differences, all cases). Every
    case of a schema refused for a remote reference is a difference (none was checked)."""
    agrees: dict[tuple[str, str, str], bool] = {}
    for o in outcomes:
        key = (o.group.file, o.group.description, o.test)
        difference = difference_of(o.group)
        remote = difference is not None and difference.kind == "remote"
        agrees[key] = agrees.get(key, True) and o.agrees and not remote
    agree = sum(agrees.values())
    return agree, len(agrees) - agree, len(agrees)


def listed_cases(outcomes: list[Outcome]) -> set[tuple[str, str, str]]:
    """The cases that are listed differences and do not agree (all of a remote schema's)."""
    return {
        (o.group.file, o.group.description, o.test)
        for o in outcomes
        if listed(o) and (not o.agrees or getattr(difference_of(o.group), "kind", None) == "remote")
    }


def test_score_is_printed(
    core: list[Outcome],
    ecma: list[Outcome],
    formats: list[Outcome],
    capsys: pytest.CaptureFixture[str],
) -> None:
    agree, differ, total = score(core)
    fmt_agree, _, fmt_total = score(formats)
    ecma_agree, _, ecma_total = score(ecma)
    line = (
        f"JSON-Schema-Test-Suite {VERSION} draft2020-12: core {agree}/{total} cases agree on "
        f"validate, render and run ({differ} listed deliberate differences); "
        f"optional ECMA-262 regex: {ecma_agree}/{ecma_total}; "
        f"formats {', '.join(ASSERTED)}: {fmt_agree}/{fmt_total}"
    )
    with capsys.disabled():
        print(f"\n{line}")
    assert (agree, differ) == (total - differ, len(listed_cases(core)))
    assert (fmt_agree, ecma_agree) == (fmt_total, ecma_total)
    # The contract reference states the same score.
    docs = (REPO / "docs" / "contract-reference.md").read_text(encoding="utf-8")
    rows = [
        f"| core draft 2020-12 ({total:,}) | {agree:,} | {differ} | 0 |",
        f"| `optional/format` for the asserted formats ({fmt_total}) | {fmt_agree} | — | 0 |",
        f"`format/ecmascript-regex.json` ({ecma_total}) | {ecma_agree} | — | 0 |",
    ]
    assert [row for row in rows if row not in docs] == []
