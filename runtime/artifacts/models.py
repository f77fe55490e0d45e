"""The job and packet formats: the file boundary between the compiler and the runtime.

A ``Job`` is what ``hz compile`` writes for one contract; a ``Packet`` is a job rendered with
concrete input values, ready to run. Both are canonical JSON documents with a ``kind`` and a
``format_version``; their JSON Schemas in ``schemas/`` are generated from these models.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    JsonValue,
    ValidationError,
    model_validator,
)
from pydantic_core import PydanticCustomError, to_json

from hz.runtime.artifacts import strict_json
from hz.runtime.artifacts.canonical import canonical_json, digest_of, sha256_hex
from hz.runtime.artifacts.errors import FormatError
from hz.runtime.artifacts.operations import AT_END as _AT_END
from hz.runtime.artifacts.operations import OPERATION_PATTERN, WINDOW_PATTERN
from hz.runtime.artifacts.packet_limits import (
    MAX_CONTRACT_BYTES,
    MAX_DIGEST,
    MAX_INPUT_BYTES,
    MAX_JOB_BYTES,
    MAX_NAME,
    MAX_PACKET_BYTES,
    MAX_PATH_BYTES,
    MAX_PROMPT_BYTES,
    MAX_TITLE,
    MAX_TOOLS,
    inputs_size,
    shown,
    utf8_size,
)
from hz.runtime.artifacts.regular_file import read_regular_text
from hz.runtime.artifacts.schedule import Schedule

#: Larger files are refused unread: a packet holds at most 8 MiB of inputs and a 1 MiB prompt
#: (``hz.runtime.artifacts.packet_limits``, checked as a packet is read), in canonical JSON with
#: indents.
MAX_ARTIFACT_BYTES = 64 * 1024 * 1024
JOB_FORMAT_VERSION: Literal[1] = 1
PACKET_FORMAT_VERSION: Literal[1] = 1


def _within(limit: int, what: str, rule: str) -> AfterValidator:
    """A text of at most ``limit`` bytes of UTF-8, the cap the compiler holds it to (``rule``)."""

    def check(text: str) -> str:
        size = utf8_size(text)
        if size > limit:
            raise PydanticCustomError(
                "too_large",
                f"{size:,} bytes of UTF-8, over the {shown(limit)} {what} ({rule})",
            )
        return text

    return AfterValidator(check)


#: A job's contract text and template come from one contract file; a prompt from rendering.
ContractText = Annotated[str, _within(MAX_CONTRACT_BYTES, "a contract file may be", "HZ003")]
Prompt = Annotated[str, _within(MAX_PROMPT_BYTES, "a rendered prompt may be", "HZ709")]


def _chars(limit: int, what: str) -> AfterValidator:
    """A text of at most ``limit`` characters (the contract schema's ``maxLength``)."""

    def check(text: str) -> str:
        if len(text) > limit:
            raise PydanticCustomError(
                "too_large", f"{len(text):,} characters, over the {limit} {what} may have"
            )
        return text

    return AfterValidator(check)


def _bytes(limit: int, what: str) -> AfterValidator:
    def check(text: str) -> str:
        size = utf8_size(text)
        if size > limit:
            raise PydanticCustomError(
                "too_large", f"{size:,} bytes of UTF-8, over the {shown(limit)} {what} may be"
            )
        return text

    return AfterValidator(check)


def _whole(value: BaseModel, limit: int, what: str) -> None:
    """``value`` as the JSON the ledger stores, within ``limit`` bytes."""
    size = len(to_json(value, by_alias=True))
    if size > limit:
        raise PydanticCustomError(
            "too_large", f"{size:,} bytes as JSON, over the {shown(limit)} {what} may be"
        )


#: The free text of a job, each capped as the contract schema caps it (and said so in the
#: published schemas).
Name = Annotated[
    str, _chars(MAX_NAME, "characters a name"), Field(json_schema_extra={"maxLength": MAX_NAME})
]
Title = Annotated[
    str, _chars(MAX_TITLE, "characters a title"), Field(json_schema_extra={"maxLength": MAX_TITLE})
]
Digest = Annotated[
    str,
    _chars(MAX_DIGEST, "characters a digest"),
    Field(json_schema_extra={"maxLength": MAX_DIGEST}),
]
PathText = Annotated[str, _bytes(MAX_PATH_BYTES, "a path")]


def _few_tools(tools: tuple[str, ...]) -> tuple[str, ...]:
    if len(tools) > MAX_TOOLS:
        raise PydanticCustomError(
            "too_large", f"{len(tools):,} tools, over the {MAX_TOOLS} a job may name"
        )
    return tools


#: An input's description comes from one contract file too.
Description = Annotated[str, _within(MAX_CONTRACT_BYTES, "a contract file may be", "HZ003")]


def _inputs_within(values: dict[str, JsonValue]) -> dict[str, JsonValue]:
    size = inputs_size(values)
    if size > MAX_INPUT_BYTES:
        raise PydanticCustomError(
            "too_large",
            f"{size:,} bytes as JSON, over the {shown(MAX_INPUT_BYTES)} the input values may be "
            "(HZ705)",
        )
    return values


class Frozen(BaseModel):
    """Base of every hz model: immutable, strict about unknown fields."""

    model_config = ConfigDict(
        frozen=True,
        extra="forbid",
        validate_by_name=True,
        validate_by_alias=True,
        serialize_by_alias=True,
    )

    def to_json_data(self) -> dict[str, Any]:
        return self.model_dump(mode="json", by_alias=True)


class ToolProfile(Frozen):
    """The read-only tools of a session, as the runner names them.

    ``tools == ()`` asks for the runner's own read-only default. ``working_dir`` is empty in a
    job and bound at run time (``bind``); it must exist then.
    """

    tools: Annotated[
        tuple[Name, ...],
        AfterValidator(_few_tools),
        Field(json_schema_extra={"maxItems": MAX_TOOLS}),
    ] = ()
    working_dir: PathText | None = None

    def bind(self, working_dir: str | Path) -> ToolProfile:
        path = Path(working_dir).resolve()
        if not path.is_dir():
            raise FormatError(f"working directory {working_dir} does not exist")
        return self.model_copy(update={"working_dir": str(path)})


class Budget(Frozen):
    """What one session may spend, in US dollars."""

    max_usd: Annotated[float, Field(gt=0)]


def _absent(value: object) -> bool:
    return value is None


class RemovedComments(Frozen):
    """The HTML comments taken out of a Markdown contract's body: how many, and the sha256 of
    their text (each as written, joined by a line break). The agent never sees them."""

    count: Annotated[int, Field(ge=1)]
    sha256: Digest


class SourceRef(Frozen):
    """Where a job came from: a POSIX path relative to the compile root, and its sha256; for a
    Markdown contract whose body held HTML comments, which comments were removed."""

    path: PathText
    sha256: Digest
    comments_removed: RemovedComments | None = Field(default=None, exclude_if=_absent)


class Identity(Frozen):
    """The identity keys a contract may carry beside ``hz:`` (name, kind, version,
    description): for people and listings, never read by hz itself."""

    name: Title | None = Field(default=None, exclude_if=_absent)
    kind: Name | None = Field(default=None, exclude_if=_absent)
    version: Name | int | None = Field(default=None, exclude_if=_absent)
    description: Description | None = Field(default=None, exclude_if=_absent)


#: (pydantic's patterns are Rust's regular expressions: ``$`` is the end of the text already.)
Operation = Annotated[str, Field(pattern=OPERATION_PATTERN.removesuffix(_AT_END), max_length=128)]
WindowText = Annotated[str, Field(pattern=WINDOW_PATTERN.removesuffix(_AT_END))]
#: A resolved window's end points and a fetch time: ISO 8601 UTC, to the second.
UtcTime = Annotated[str, Field(pattern=r"^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$")]


class ReadSpec(Frozen):
    """Where an input's value is fetched from before the session: a capability operation
    (``hz.runtime.artifacts.operations``), its arguments and, when it takes one, a window."""

    operation: Operation
    args: dict[Name, JsonValue] = Field(default_factory=dict)
    window: WindowText | None = Field(default=None, exclude_if=_absent)


#: ``read: contract:NAME`` (optionally ``#draft``): another job's draft from the run ledger.
CONTRACT_READ = re.compile(r"^contract:([a-z][a-z0-9]*(?:-[a-z0-9]+)*)(?:#(draft))?$(?!\n)")
#: What the contract schema's ``read`` takes: an operation, or another job's draft.
READ_PATTERN = (
    "^(?:"
    + OPERATION_PATTERN.removeprefix("^").removesuffix("$" + _AT_END)
    + "|contract:[a-z][a-z0-9]*(-[a-z0-9]+)*(#draft)?)$"
    + _AT_END
)


class UpstreamSpec(Frozen):
    """Where an input's value is taken from when it reads another job's draft
    (``read: contract:NAME``): the newest completed run of ``job`` at most ``max_age_seconds``
    old (any age when unset)."""

    job: Name
    part: Literal["draft"] = "draft"
    max_age_seconds: Annotated[int, Field(ge=60)] | None = Field(default=None, exclude_if=_absent)


class InputSpec(Frozen):
    """One declared input: its JSON Schema (2020-12) and, when optional, its default; or,
    with ``read``, the operation hz fetches it through."""

    description: Description | None = None
    schema_: dict[str, JsonValue] | bool = Field(default_factory=dict, alias="schema")
    required: bool = True
    default: JsonValue = None
    read: ReadSpec | None = Field(default=None, exclude_if=_absent)
    upstream: UpstreamSpec | None = Field(default=None, exclude_if=_absent)


class ResolvedWindow(Frozen):
    """A window as it was resolved at fetch time: the contract's text and two UTC times;
    ``fallback`` when ``since-last-success`` found no completed run and used the documented
    fallback instead."""

    spec: WindowText
    since: UtcTime
    until: UtcTime
    fallback: bool = Field(default=False, exclude_if=lambda value: not value)


class InputSource(Frozen):
    """Where one input's value came from. ``given``: typed in (``--input``, ``--inputs``)
    although the job reads it; otherwise the provider that fetched it, the operation and its
    arguments, the resolved window, when, and the value's sha256 (canonical JSON)."""

    given: bool = Field(default=False, exclude_if=lambda value: not value)
    provider: Name | None = Field(default=None, exclude_if=_absent)
    operation: Operation | None = Field(default=None, exclude_if=_absent)
    args: dict[Name, JsonValue] | None = Field(default=None, exclude_if=_absent)
    window: ResolvedWindow | None = Field(default=None, exclude_if=_absent)
    fetched_at: UtcTime | None = Field(default=None, exclude_if=_absent)
    #: For an input that reads another job's draft: that job and the run whose draft it is.
    job: Name | None = Field(default=None, exclude_if=_absent)
    run: Name | None = Field(default=None, exclude_if=_absent)
    sha256: Digest


class PublishSpec(Frozen):
    """Where the draft goes once the run completes (``hz.runtime.artifacts.publish_targets``):
    a target and its arguments. In a job the arguments may hold templates over the inputs;
    in a packet they are rendered."""

    to: Operation
    args: dict[Name, JsonValue] = Field(default_factory=dict)


#: At most this many publishes per contract (the contract schema's ``maxItems``).
MAX_PUBLISHES = 16


class OutputSpec(Frozen):
    """The draft's format; with ``json``, an optional JSON Schema the draft must satisfy."""

    format: Literal["markdown", "text", "json"] = "markdown"
    schema_: dict[str, JsonValue] | bool | None = Field(default=None, alias="schema")


class Job(Frozen):
    """One compiled contract. ``digest`` is the sha256 of the job without its digest."""

    kind: Literal["job"] = "job"
    format_version: Literal[1] = JOB_FORMAT_VERSION
    name: Name
    title: Title | None = None
    identity: Identity | None = Field(default=None, exclude_if=_absent)
    source: SourceRef
    timeout_seconds: Annotated[int, Field(ge=1, le=86400)]
    tools: ToolProfile
    budget: Budget
    inputs: dict[Name, InputSpec] = Field(default_factory=dict)
    output: OutputSpec = Field(default_factory=OutputSpec)
    #: When the job runs by itself (``hz worker`` fires it), and the jobs whose completion
    #: queues it: both left out of a job without them, so its digest is as before.
    schedule: Schedule | None = Field(default=None, exclude_if=_absent)
    after: Annotated[tuple[Name, ...], Field(max_length=16)] = Field(
        default=(), exclude_if=lambda value: not value
    )
    publishes: Annotated[list[PublishSpec], Field(max_length=MAX_PUBLISHES)] = Field(
        default_factory=list, exclude_if=lambda value: not value
    )
    contract: ContractText
    template: ContractText
    hz_version: Name
    digest: Digest = ""

    @model_validator(mode="after")
    def _within_caps(self) -> Job:
        # Whatever has no cap of its own (a schema, a default, many inputs) is held here.
        _whole(self, MAX_JOB_BYTES, "a job")
        return self

    def compute_digest(self) -> str:
        data = self.to_json_data()
        data.pop("digest", None)
        return digest_of(data)

    def sealed(self) -> Job:
        """This job with its digest filled in."""
        return self.model_copy(update={"digest": self.compute_digest()})

    def sealed_text(self) -> tuple[Job, str]:
        """``sealed()`` and its canonical JSON text, from one serialization (``hz compile``
        writes thousands: the model's dump is the larger part of each)."""
        data = self.to_json_data()
        data.pop("digest", None)
        digest = digest_of(data)
        data["digest"] = digest
        return self.model_copy(update={"digest": digest}), canonical_json(data)


class Packet(Frozen):
    """A job rendered with concrete inputs: everything one run needs."""

    kind: Literal["packet"] = "packet"
    format_version: Literal[1] = PACKET_FORMAT_VERSION
    job: Job
    prompt: Prompt
    contract: ContractText
    inputs: Annotated[dict[Name, JsonValue], AfterValidator(_inputs_within)] = Field(
        default_factory=dict
    )
    inputs_sha256: Digest
    job_digest: Digest
    #: Binds the prompt to the packet: a hand-edited prompt no longer matches (the job and the
    #: inputs are bound by ``job_digest`` and ``inputs_sha256``). Anyone who can write the
    #: packet can recompute all three; they guard against edits, not against its author.
    prompt_sha256: Digest
    #: For each input the job reads through a provider: where its value came from.
    sources: dict[Name, InputSource] = Field(
        default_factory=dict, exclude_if=lambda value: not value
    )
    #: The job's publishes with their arguments rendered over the inputs.
    publishes: Annotated[list[PublishSpec], Field(max_length=MAX_PUBLISHES)] = Field(
        default_factory=list, exclude_if=lambda value: not value
    )

    @model_validator(mode="after")
    def _within_caps(self) -> Packet:
        _whole(self, MAX_PACKET_BYTES, "a packet")
        return self

    @model_validator(mode="after")
    def _sources_fit(self) -> Packet:
        """Each source is of a value the packet holds: the receipt certifies these digests
        (``input_digests``), so a packet whose sources were edited — a digest of other data,
        a source for no input, another operation than the job reads — is refused, never run."""
        problem = _source_problem(self)
        if problem is not None:
            raise PydanticCustomError("source_mismatch", problem)
        return self


def _source_problem(packet: Packet) -> str | None:
    """What is wrong with the packet's ``sources``, or None. Every input the job reads (through
    an operation or another job's draft) that has a value has a source; every source is of
    such an input, its ``sha256`` the digest of that value; one that was not given by hand
    names the job's operation, arguments and window (or the upstream job)."""
    specs = packet.job.inputs
    for name, source in packet.sources.items():
        spec = specs.get(name)
        where = f"sources.{name}"
        if spec is None or (spec.read is None and spec.upstream is None):
            return f"{where}: the job reads no input {name!r}"
        if name not in packet.inputs:
            return f"{where}: the packet holds no value of input {name!r}"
        if source.sha256 != digest_of(packet.inputs[name]):
            return f"{where}: sha256 is not the digest of the input's value"
        if source.given:
            continue
        if spec.read is not None:
            window = None if source.window is None else source.window.spec
            if (source.operation, source.args, window) != (
                spec.read.operation,
                spec.read.args,
                spec.read.window,
            ):
                return f"{where}: the operation, arguments or window differ from the job's read"
        elif spec.upstream is not None and source.job != spec.upstream.job:
            return f"{where}: the job differs from the one the input reads a draft of"
    for name, spec in specs.items():
        reads = spec.read is not None or spec.upstream is not None
        if reads and name in packet.inputs and name not in packet.sources:
            return f"sources: input {name!r} is read, and the packet says not where from"
    return None


_VERSIONS = {"job": JOB_FORMAT_VERSION, "packet": PACKET_FORMAT_VERSION}
_TOO_LARGE = "hz render makes packets within the caps; nothing was recorded or run"


def parse_artifact(text: str, origin: str) -> Job | Packet:
    """Read a job or packet document, gating on kind and format version first."""
    try:
        data = strict_json.loads(text)
    except strict_json.JsonError as e:
        where = f"{origin}:{e.lineno}:{e.colno}" if e.located else origin
        raise FormatError(f"{where}: not valid JSON: {e.msg}") from e
    if not isinstance(data, dict):
        raise FormatError(f"{origin}: expected a JSON object with a 'kind' of job or packet")
    kind = data.get("kind")
    if kind not in _VERSIONS:
        raise FormatError(f"{origin}: not an hz job or packet (kind is {kind!r})")
    version = data.get("format_version")
    supported = _VERSIONS[kind]
    if isinstance(version, int) and not isinstance(version, bool) and version > supported:
        raise FormatError(
            f"{origin}: {kind} format version {version} needs a newer hz "
            f"(this hz reads version {supported})",
            hint="upgrade hz, or compile the contract with this hz",
        )
    if not isinstance(version, int) or isinstance(version, bool):
        # Checked here: pydantic's Literal[1] would take ``true`` for 1.
        raise FormatError(f"{origin}: invalid {kind}: format_version: must be the integer 1")
    model: type[Job] | type[Packet] = Job if kind == "job" else Packet
    try:
        # Strict: the file must match its published schema ("600" is not a timeout).
        artifact = model.model_validate_json(text, strict=True)
    except ValidationError as e:
        first = e.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "(top level)"
        more = f" (and {e.error_count() - 1} more)" if e.error_count() > 1 else ""
        hint = _TOO_LARGE if first["type"] == "too_large" else None
        raise FormatError(
            f"{origin}: invalid {kind}: {where}: {first['msg']}{more}", hint=hint
        ) from e
    job = artifact if isinstance(artifact, Job) else artifact.job
    if job.digest != job.compute_digest():
        raise FormatError(f"{origin}: the job's digest does not match its content")
    if isinstance(artifact, Packet) and artifact.job_digest != job.digest:
        raise FormatError(f"{origin}: job_digest does not match the embedded job")
    if isinstance(artifact, Packet) and artifact.contract != job.contract:
        raise FormatError(f"{origin}: the packet's contract text differs from its job's")
    if isinstance(artifact, Packet) and artifact.inputs_sha256 != digest_of(artifact.inputs):
        raise FormatError(f"{origin}: inputs_sha256 does not match the packet's input values")
    if isinstance(artifact, Packet) and artifact.prompt_sha256 != sha256_hex(artifact.prompt):
        raise FormatError(
            f"{origin}: prompt_sha256 does not match the packet's prompt (was it edited?)",
            hint="render the job again (hz render) to get a packet to run",
        )
    if isinstance(artifact, Packet) and not _publishes_follow(job, artifact):
        raise FormatError(
            f"{origin}: the packet's publishes are not its job's (was it edited?)",
            hint="render the job again (hz render) to get a packet to run",
        )
    return artifact


_TEMPLATE = re.compile(r"\{\{|\{%|\{#")


def _publishes_follow(job: Job, packet: Packet) -> bool:
    """Whether the packet's publishes are the job's with only its templated arguments
    rendered: the same targets in order, the same argument names, every other value as the
    job has it."""
    if len(job.publishes) != len(packet.publishes):
        return False
    for declared, rendered in zip(job.publishes, packet.publishes, strict=True):
        if declared.to != rendered.to or declared.args.keys() != rendered.args.keys():
            return False
        for key, value in declared.args.items():
            templated = isinstance(value, str) and _TEMPLATE.search(value) is not None
            if not templated and rendered.args[key] != value:
                return False
    return True


def read_artifact(path: str | Path) -> Job | Packet:
    try:
        text = read_regular_text(path, limit=MAX_ARTIFACT_BYTES)
    except (OSError, UnicodeDecodeError) as e:
        why = e.strerror if isinstance(e, OSError) else e
        raise FormatError(f"{path}: cannot read: {why}") from e
    return parse_artifact(text, str(path))
