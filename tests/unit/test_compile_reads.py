"""Inputs read through an operation compile into ``Job.inputs[name].read``; the catalog the
compiler checks against is a parameter of every entry point."""

from __future__ import annotations

from pathlib import Path

from syrupy.assertion import SnapshotAssertion

from hz.compiler.compile import CompiledJob, compile_each, compile_paths
from hz.compiler.jobdir import job_text
from hz.compiler.render.packet import job_from_contract
from hz.compiler.validate import validate_paths
from hz.runtime.artifacts.models import InputSpec, ReadSpec, parse_artifact
from hz.runtime.artifacts.operations import CATALOG, Operation

CASES = Path(__file__).resolve().parents[1] / "cases"
READS = CASES / "valid" / "read-inputs.yaml"


def test_three_reads_compile_to_the_expected_job(snapshot: SnapshotAssertion) -> None:
    run = compile_paths([str(READS)], root=CASES)
    assert run.diagnostics == ()
    [compiled] = run.jobs
    job = compiled.job
    assert job.inputs["merged"] == InputSpec(
        description="Pull requests merged into the app last week",
        schema_={"type": "array", "maxItems": 500},
        read=ReadSpec(
            operation="code-host.merged_pull_requests",
            args={"repository": "acme/app"},
            window="7d",
        ),
    )
    # Without a schema of its own, a read input takes the operation's result schema.
    assert job.inputs["commits"] == InputSpec(
        schema_=dict(CATALOG["git.log"].result),
        read=ReadSpec(operation="git.log", args={"max_commits": 200}, window="since-last-success"),
    )
    assert job.inputs["notes"].read == ReadSpec(
        operation="files.glob", args={"pattern": "docs/notes/*.md"}
    )
    assert job.inputs["notes"].required is True
    assert job.inputs["week"] == InputSpec(
        schema_={"type": "string"}, required=False, default="2026-W48"
    )
    text = job_text(compiled)
    assert parse_artifact(text, "job") == job
    assert text == snapshot


def test_a_job_without_reads_holds_no_read_key() -> None:
    run = compile_paths([str(CASES / "valid" / "full.yaml")], root=CASES)
    [compiled] = run.jobs
    assert '"read"' not in job_text(compiled)


def test_the_catalog_is_a_parameter_of_every_validate_and_compile_entry_point(
    tmp_path: Path,
) -> None:
    contract = tmp_path / "c.yaml"
    contract.write_text(
        "hz:\n  contract: 1\n  name: c\n  timeout: 1m\n  agent: {max_usd: 0.1}\n"
        "  inputs:\n    issues: {read: tracker.jira_issues, args: {project: APP}, window: 2w}\n"
        "contract: Be brief.\nprompt: '{{ inputs.issues }}'\n"
    )
    jira = Operation(
        "tracker.jira_issues",
        "the operator's tracker",
        {"type": "object", "properties": {"project": {"type": "string"}}},
        {"type": "array", "items": {"type": "object"}},
        window=True,
    )
    operations = {**CATALOG, jira.name: jira}

    assert [d.code for d in validate_paths([str(contract)]).diagnostics] == ["HZ410"]
    assert validate_paths([str(contract)], operations=operations).diagnostics == ()

    assert [d.code for d in compile_paths([str(contract)]).diagnostics] == ["HZ410"]
    [compiled] = compile_paths([str(contract)], operations=operations).jobs
    assert compiled.job.inputs["issues"] == InputSpec(
        schema_={"type": "array", "items": {"type": "object"}},
        read=ReadSpec(operation="tracker.jira_issues", args={"project": "APP"}, window="2w"),
    )

    emitted: list[CompiledJob] = []
    assert [d.code for d in compile_each([str(contract)], emitted.append).diagnostics] == ["HZ410"]
    assert emitted == []
    assert compile_each([str(contract)], emitted.append, operations=operations).diagnostics == ()
    assert [each.job for each in emitted] == [compiled.job]

    job, _, diagnostics = job_from_contract(contract)
    assert (job, [d.code for d in diagnostics]) == (None, ["HZ410"])
    job, _, diagnostics = job_from_contract(contract, operations=operations)
    assert diagnostics == []
    assert job == compiled.job


def test_a_markdown_contract_with_reads_compiles() -> None:
    job, _, diagnostics = job_from_contract(CASES / "valid" / "markdown-read-inputs.md")
    assert diagnostics == []
    assert job is not None
    assert {name: spec.read for name, spec in job.inputs.items()} == {
        "merged": ReadSpec(
            operation="code-host.merged_pull_requests",
            args={"repository": "acme/app"},
            window="7d",
        ),
        "notes": ReadSpec(operation="files.glob", args={"pattern": "docs/notes/*.md"}),
    }
    # The request built from the body shows each read input as any other.
    assert "## Input: merged\n\n{{ inputs.merged }}" in job.template
    assert "## Input: notes\n\n{{ inputs.notes }}" in job.template
