"""Render a job with input values into a packet: the prompt, ready to run.

The template runs in Jinja2's sandbox with ``StrictUndefined``, no autoescaping and no loader
(it can read nothing from disk). Input values are data: they are inserted, never evaluated,
so a value holding ``{{ 7*7 }}`` stays that text. Whatever goes wrong while rendering is a
diagnostic located at the template's line (HZ707–HZ709), never a traceback.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hz.compiler.diagnostics import Diagnostic
from hz.compiler.inputs.values import Fetched, gather_inputs
from hz.compiler.render.bound import render_bounded
from hz.compiler.render.generate import OUT_OF_MEMORY
from hz.compiler.render.outcome import Crashed, Failed, OutOfMemory, Rendered, TimedOut
from hz.compiler.render.sandbox import environment
from hz.compiler.rules.registry import HZ707, HZ708, HZ710, HZ712
from hz.compiler.source import SourceDoc
from hz.runtime.artifacts.canonical import digest_of, sha256_hex
from hz.runtime.artifacts.models import InputSource, Job, Packet, PublishSpec, read_artifact
from hz.runtime.artifacts.operations import CATALOG, Operation
from hz.runtime.artifacts.packet_limits import MAX_PROMPT_BYTES
from hz.runtime.artifacts.publish_targets import TARGETS, Target

if TYPE_CHECKING:
    from hz.compiler.validate import Ceiling

MAX_RENDER_SECONDS = 10.0
__all__ = [
    "MAX_PROMPT_BYTES",
    "JobFetch",
    "TemplatePlace",
    "environment",
    "render_job",
    "render_prompt",
]

#: Fetches a job's ``read`` inputs but those given by hand (the names given): composed by the
#: CLI from the runtime's providers (``hz.runtime.providers.fetch``), which the compiler never
#: imports.
JobFetch = Callable[[Job, frozenset[str]], Fetched]


@dataclass(frozen=True, slots=True)
class TemplatePlace:
    """Where the template text lives, to turn a template line into a diagnostic location.

    With ``doc`` (rendering a contract) the line is the contract file's line; without (a job
    file, JSON) the template line is named in the message instead.
    """

    file: str
    doc: SourceDoc | None = None

    def diagnostic(self, code: str, message: str, template_line: int | None) -> Diagnostic:
        if template_line is None:
            return Diagnostic(code, f"prompt: {message}", self.file)
        if self.doc is None:
            return Diagnostic(code, f"prompt line {template_line}: {message}", self.file)
        line, column = _file_line(self.doc, template_line)
        return Diagnostic(code, f"prompt: {message}", self.file, line, column)


def _file_line(doc: SourceDoc, template_line: int) -> tuple[int, int]:
    info = doc.scalars.get(("prompt",))
    start = doc.pos(("prompt",))
    if info is None or info.style not in ("|", ">"):
        return start.line, start.column  # a flow scalar folds its lines: only its start is sure
    line = info.content_line + template_line - 1
    lines = doc.text.splitlines()
    text = lines[line - 1] if 0 < line <= len(lines) else ""
    return line, len(text) - len(text.lstrip(" ")) + 1


def render_prompt(
    template: str, values: dict[str, Any], place: TemplatePlace
) -> tuple[str | None, list[Diagnostic]]:
    seconds = MAX_RENDER_SECONDS
    match render_bounded(template, values, seconds):
        case Rendered(prompt):
            return prompt, []
        case Failed(code, message, line):
            return None, [place.diagnostic(code, message, line)]
        case TimedOut():  # C-level work the tracer could not interrupt
            message = f"rendering took longer than {seconds:g} s"
        case OutOfMemory():
            return None, [place.diagnostic(HZ708, OUT_OF_MEMORY, None)]
        case Crashed(None, launch_error):
            message = f"rendering could not start its process: {launch_error}"
        case Crashed(status):
            message = f"rendering stopped unexpectedly (its process exited with status {status})"
    return None, [place.diagnostic(HZ707, message, None)]


def render_publishes(
    job: Job,
    values: dict[str, Any],
    place: TemplatePlace,
    targets: Mapping[str, Target] = TARGETS,
) -> tuple[list[PublishSpec] | None, list[Diagnostic]]:
    """The job's publishes with every templated argument rendered over the inputs (in the
    same bounded sandbox as the prompt) and checked against the target's argument schema: a
    number or a boolean argument may be written as a template that renders to one."""
    from hz.compiler.checks.publishes import argument_problem, is_template

    rendered: list[PublishSpec] = []
    diagnostics: list[Diagnostic] = []
    for index, spec in enumerate(job.publishes):
        target = targets.get(spec.to)
        properties: dict[str, Any] = target.args["properties"] if target else {}
        args: dict[str, Any] = {}
        for key, value in spec.args.items():
            if not is_template(value):
                args[key] = value
                continue
            where = f"publishes[{index}].args.{key}"
            match render_bounded(str(value), values, MAX_RENDER_SECONDS):
                case Rendered(text):
                    args[key] = _typed(text, properties.get(key, {}))
                case Failed(code, message, _):
                    diagnostics.append(_at(place, (index, key), code, f"{where}: {message}"))
                    continue
                case _:
                    message = f"{where}: rendering did not finish"
                    diagnostics.append(_at(place, (index, key), HZ707, message))
                    continue
            problem = argument_problem(properties.get(key, {}), args[key])
            if problem is not None:
                diagnostics.append(
                    _at(
                        place,
                        (index, key),
                        HZ712,
                        f"{where} rendered to {args[key]!r}: {problem}",
                        hint=f"the input values must make a valid argument of {spec.to}",
                    )
                )
        rendered.append(PublishSpec(to=spec.to, args=args))
    return (None if diagnostics else rendered), diagnostics


def _at(
    place: TemplatePlace, arg: tuple[int, str], code: str, message: str, hint: str | None = None
) -> Diagnostic:
    """A diagnostic at the argument in the contract (rendering a contract), or at the file."""
    if place.doc is None:
        return Diagnostic(code, message, place.file, hint=hint)
    pos = place.doc.pos(("hz", "publishes", arg[0], "args", arg[1]))
    return Diagnostic(code, message, place.file, pos.line, pos.column, hint=hint)


def _typed(text: str, schema: Any) -> Any:
    """A rendered argument as the type its schema asks for, where the text spells one."""
    kind = schema.get("type") if isinstance(schema, dict) else None
    stripped = text.strip()
    if kind == "integer" and stripped.lstrip("-").isdigit() and len(stripped) <= 18:
        return int(stripped)
    if kind == "boolean" and stripped in ("true", "false"):
        return stripped == "true"
    return text


def make_packet(
    job: Job,
    values: dict[str, Any],
    prompt: str,
    sources: dict[str, InputSource] | None = None,
    publishes: list[PublishSpec] | None = None,
) -> Packet:
    return Packet(
        publishes=publishes or [],
        job=job,
        prompt=prompt,
        contract=job.contract,
        inputs=values,
        inputs_sha256=digest_of(values),
        job_digest=job.digest,
        prompt_sha256=sha256_hex(prompt),
        sources=sources or {},
    )


def render_job(
    job: Job,
    *,
    place: TemplatePlace,
    inputs_file: Path | None = None,
    input_args: Sequence[str] = (),
    fetch: JobFetch | None = None,
    targets: Mapping[str, Target] = TARGETS,
) -> tuple[Packet | None, list[Diagnostic]]:
    """The packet of ``job`` with these input values; ``fetch`` fetches its ``read`` inputs
    (without it, a read input not given by hand is an HZ711 diagnostic); ``targets`` are the
    publish targets its arguments are checked against. The diagnostics beside a packet are
    warnings (the fetch's)."""
    found = gather_inputs(
        job.inputs,
        inputs_file=inputs_file,
        input_args=input_args,
        target=place.file,
        fetch=None if fetch is None else functools.partial(fetch, job),
    )
    values = found.values
    if values is None:
        return None, list(found.diagnostics)
    prompt, diagnostics = render_prompt(job.template, values, place)
    if prompt is None:
        return None, [*found.warnings, *diagnostics]
    publishes, diagnostics = render_publishes(job, values, place, targets)
    if publishes is None:
        return None, [*found.warnings, *diagnostics]
    return make_packet(job, values, prompt, found.sources, publishes), list(found.warnings)


def job_from_contract(
    path: Path,
    *,
    max_usd_ceiling: Ceiling = 100.0,
    operations: Mapping[str, Operation] = CATALOG,
    targets: Mapping[str, Target] = TARGETS,
) -> tuple[Job | None, SourceDoc | None, list[Diagnostic]]:
    """Validate and compile one contract in memory, with the diagnostics ``hz validate``
    gives (``operations``: those an input may ``read``). Warnings come back with the job."""
    from hz.compiler.compile import compile_contract, find_root, name_problem
    from hz.compiler.validate import validate_paths

    run = validate_paths(
        [str(path)], max_usd_ceiling=max_usd_ceiling, operations=operations, targets=targets
    )
    diagnostics = list(run.diagnostics)
    if any(d.severity == "error" for d in diagnostics) or not run.contracts:
        return None, None, diagnostics
    contract = run.contracts[0]
    root = find_root([path])
    unnamed = name_problem(contract.source.path, root)
    if unnamed is not None:  # as hz compile says it
        return None, None, [*diagnostics, unnamed]
    job = compile_contract(contract, root=root)
    return job, contract.source, diagnostics


def packet_from_path(
    path: Path,
    *,
    inputs_file: Path | None = None,
    input_args: Sequence[str] = (),
    max_usd_ceiling: Ceiling = 100.0,
    fetch: JobFetch | None = None,
    operations: Mapping[str, Operation] | None = None,
    targets: Mapping[str, Target] | None = None,
) -> tuple[Packet | None, list[Diagnostic]]:
    """A packet from a packet file, a job file (rendered) or a contract (``.yaml``/``.yml``/``.md``:
    validated, compiled in memory and rendered); ``fetch`` fetches the job's ``read`` inputs;
    ``operations`` are those a contract's input may ``read`` (default: hz's catalog).

    Problems with the contract or the inputs are diagnostics; a job or packet file that
    cannot be read, has an unknown format version or fails its schema raises
    ``hz.runtime.artifacts.errors.FormatError``.
    """
    if path.suffix.lower() in (".yaml", ".yml", ".md"):
        job, doc, diagnostics = job_from_contract(
            path,
            max_usd_ceiling=max_usd_ceiling,
            operations=CATALOG if operations is None else operations,
            targets=TARGETS if targets is None else targets,
        )
        if job is None:
            return None, diagnostics
        packet, problems = render_job(
            job,
            place=TemplatePlace(str(path), doc),
            inputs_file=inputs_file,
            input_args=input_args,
            fetch=fetch,
            targets=TARGETS if targets is None else targets,
        )
        return packet, diagnostics + problems
    artifact = read_artifact(path)
    if isinstance(artifact, Packet):
        if inputs_file is not None or input_args:
            message = "a packet already holds its input values; inputs cannot be given"
            hint = "render the job again with these inputs to get a new packet"
            return None, [Diagnostic(HZ710, message, str(path), hint=hint)]
        return artifact, []
    return render_job(
        artifact,
        place=TemplatePlace(str(path)),
        inputs_file=inputs_file,
        input_args=input_args,
        fetch=fetch,
        targets=TARGETS if targets is None else targets,
    )
