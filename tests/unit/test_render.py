"""render: the sandboxed template, located runtime errors, caps and deterministic packets."""

from __future__ import annotations

from pathlib import Path

import pytest

from hz.compiler.diagnostics import Diagnostic
from hz.compiler.render.packet import TemplatePlace, packet_from_path, render_job, render_prompt
from hz.runtime.artifacts.canonical import canonical_json, digest_of
from hz.runtime.artifacts.errors import FormatError
from hz.runtime.artifacts.models import Budget, InputSpec, Job, Packet, SourceRef, ToolProfile

CONTRACT = """\
hz:
  contract: 1
  name: demo
  timeout: 60
  agent:
    max_usd: 0.5
  inputs:
    who:
      schema: {{type: string}}
contract: |
  Be kind.
prompt: |
  Hello {{{{ inputs.who }}}}.
{body}"""


@pytest.fixture(autouse=True)
def _here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)


def _job(template: str, inputs: dict[str, InputSpec] | None = None) -> Job:
    return Job(
        name="demo",
        source=SourceRef(path="demo.yaml", sha256="0" * 64),
        timeout_seconds=60,
        tools=ToolProfile(),
        budget=Budget(max_usd=1.0),
        inputs=inputs if inputs is not None else {"who": InputSpec(schema_={"type": "string"})},
        contract="Be kind.\n",
        template=template,
        hz_version="0.1.0",
    ).sealed()


def _render(template: str, who: str = "Ada") -> tuple[str | None, list[Diagnostic]]:
    return render_prompt(template, {"who": who}, TemplatePlace("demo.job.json"))


def _contract(body: str) -> Path:
    path = Path("demo.yaml")
    path.write_text(CONTRACT.format(body=body), encoding="utf-8")
    return path


def test_values_are_data_not_templates() -> None:
    assert _render("Hi {{ inputs.who }}\n", "{{ 7*7 }} {% raw %}") == (
        "Hi {{ 7*7 }} {% raw %}\n",
        [],
    )


def test_trailing_newline_kept_and_no_escaping() -> None:
    assert _render("<{{ inputs.who }}>\n\n", "a & b") == ("<a & b>\n\n", [])


@pytest.mark.parametrize(
    ("template", "message"),
    [
        (
            "x\n{{ inputs.who.__class__ }}",
            "prompt line 2: refused by the template sandbox: "
            "access to attribute '__class__' of 'str' object is unsafe.",
        ),
        (
            "{{ inputs.__class__.mro() }}",
            "prompt line 1: refused by the template sandbox: "
            "access to attribute '__class__' of 'dict' object is unsafe.",
        ),
        (
            "{{ inputs.who.__len__() }}",
            "prompt line 1: refused by the template sandbox: "
            "access to attribute '__len__' of 'str' object is unsafe.",
        ),
        (
            "\n\n{{ 'x' * 2000000 }}",
            "prompt line 3: refused by the template sandbox: "
            "repetition larger than the prompt cap (1 MiB)",
        ),
        (
            "{{ 10 ** 100000 }}",
            "prompt line 1: refused by the template sandbox: "
            "exponent larger than 1000 is not allowed",
        ),
    ],
)
def test_sandbox_refusals_are_located(template: str, message: str) -> None:
    assert _render(template) == (None, [Diagnostic("HZ708", message, "demo.job.json")])


@pytest.mark.parametrize(
    ("template", "message"),
    [
        (
            "a\nb\n{{ inputs.nope }}",
            "prompt line 3: undefined: 'dict object' has no attribute 'nope'",
        ),
        (
            "{% if inputs.x %}{% endif %}",
            "prompt line 1: undefined: 'dict object' has no attribute 'x'",
        ),
        (
            "a\n{{ 1 // 0 }}",
            "prompt line 2: template failed: ZeroDivisionError: integer division or modulo by zero",
        ),
        (
            "{{ inputs.who + 1 }}",
            "prompt line 1: template failed: TypeError: "
            'can only concatenate str (not "int") to str',
        ),
        (
            "a\n{% for x in %}",
            "prompt line 2: template syntax error: "
            "Expected an expression, got 'end of statement block'",
        ),
    ],
)
def test_runtime_errors_are_located(template: str, message: str) -> None:
    assert _render(template) == (None, [Diagnostic("HZ707", message, "demo.job.json")])


def test_prompt_over_one_mib() -> None:
    template = "{% for i in range(3000) %}{{ inputs.who }}{% endfor %}"
    assert _render(template, "x" * 1000) == (
        None,
        [
            Diagnostic(
                "HZ709",
                "prompt: the rendered prompt is larger than 1 MiB (1,048,576 bytes)",
                "demo.job.json",
            )
        ],
    )


def test_prompt_of_exactly_one_mib_renders() -> None:
    prompt, found = _render("{{ inputs.who }}", "é" * (512 * 1024))
    assert found == []
    assert prompt is not None
    assert len(prompt.encode()) == 1024 * 1024


def test_packet_is_deterministic_and_sealed() -> None:
    job = _job("Hi {{ inputs.who }}\n")
    Path("in.json").write_text('{"who": "Ada"}', encoding="utf-8")
    first, found = render_job(job, place=TemplatePlace("j"), inputs_file=Path("in.json"))
    second, _ = render_job(job, place=TemplatePlace("j"), input_args=["who=Ada"])
    assert found == []
    assert first is not None
    assert second is not None
    assert canonical_json(first.to_json_data()) == canonical_json(second.to_json_data())
    assert first.inputs_sha256 == digest_of({"who": "Ada"})
    assert (first.job_digest, first.contract, first.prompt) == (
        job.digest,
        "Be kind.\n",
        "Hi Ada\n",
    )


def test_render_from_contract_locates_errors_at_the_file_line() -> None:
    path = _contract("  {{ inputs.who.__class__ }}\n")
    assert packet_from_path(path, input_args=["who=x"]) == (
        None,
        [
            Diagnostic(
                "HZ708",
                "prompt: refused by the template sandbox: "
                "access to attribute '__class__' of 'str' object is unsafe.",
                "demo.yaml",
                14,
                3,
            )
        ],
    )


def test_render_from_contract_reports_validation_errors() -> None:
    path = _contract("  {{ inputs.whom }}\n")
    packet, found = packet_from_path(path, input_args=["who=x"])
    assert packet is None
    assert [(d.code, d.line) for d in found] == [("HZ502", 14)]


def test_contract_job_and_packet_files_give_one_packet(tmp_path: Path) -> None:
    (tmp_path / "hz.toml").touch()
    path = _contract("")
    from_contract, found = packet_from_path(path, input_args=["who=Ada"])
    assert found == []
    assert from_contract is not None
    job_file = Path("demo.job.json")
    job_file.write_text(canonical_json(from_contract.job.to_json_data()), encoding="utf-8")
    from_job, _ = packet_from_path(job_file, input_args=["who=Ada"])
    packet_file = Path("demo.packet.json")
    packet_file.write_text(canonical_json(from_contract.to_json_data()), encoding="utf-8")
    from_packet, _ = packet_from_path(packet_file)
    assert from_contract == from_job == from_packet
    assert isinstance(from_packet, Packet)
    assert from_contract.job.source.path == "demo.yaml"


def test_packet_takes_no_inputs() -> None:
    job = _job("Hi\n", inputs={})
    packet, _ = render_job(job, place=TemplatePlace("j"))
    assert packet is not None
    Path("p.json").write_text(canonical_json(packet.to_json_data()), encoding="utf-8")
    assert packet_from_path(Path("p.json"), input_args=["who=x"]) == (
        None,
        [
            Diagnostic(
                "HZ710",
                "a packet already holds its input values; inputs cannot be given",
                "p.json",
                hint="render the job again with these inputs to get a new packet",
            )
        ],
    )


def test_unknown_job_version_is_a_format_error() -> None:
    data = _job("Hi\n").to_json_data() | {"format_version": 3}
    Path("new.job.json").write_text(canonical_json(data), encoding="utf-8")
    with pytest.raises(FormatError) as e:
        packet_from_path(Path("new.job.json"))
    assert (
        e.value.message
        == "new.job.json: job format version 3 needs a newer hz (this hz reads version 1)"
    )


def test_endless_loops_stop_at_the_deadline(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    import hz.compiler.render.packet

    monkeypatch.setattr(hz.compiler.render.packet, "MAX_RENDER_SECONDS", 0.5)
    tracer = sys.gettrace()
    template = "a\n{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}"
    assert _render(template) == (
        None,
        [
            Diagnostic(
                "HZ707",
                "prompt line 2: rendering took longer than 0.5 s: the template loops too much",
                "demo.job.json",
            )
        ],
    )
    assert sys.gettrace() is tracer
