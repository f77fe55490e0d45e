"""validate: a loaded ``SourceDoc`` -> a ``Contract`` or the located reasons it is not one.

``validate_source`` checks one document; ``validate_paths`` loads and checks files,
directories and stdin and collects every diagnostic in one pass.
"""

from __future__ import annotations

import copy
import os
import stat
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO, Literal, TypeVar, cast

from hz.compiler.checks.limits import check_max_usd, check_timeout, check_version
from hz.compiler.checks.tools import PolicySource, check_tools
from hz.compiler.contract import Contract, InputDecl
from hz.compiler.diagnostics import Diagnostic, sort_diagnostics
from hz.compiler.rules.registry import HZ001, HZ014
from hz.compiler.source import SourceDoc
from hz.runtime.artifacts.operations import CATALOG, Operation, window_length
from hz.runtime.artifacts.publish_targets import TARGETS, Target
from hz.runtime.artifacts.regular_file import check_links

DEFAULT_MAX_USD_CEILING = 100.0
SUFFIXES = (".yaml", ".yml")
MARKDOWN_SUFFIX = ".md"
#: The keys beside ``hz:`` that say what a contract is, carried into its job as ``identity``.
IDENTITY_KEYS = ("name", "kind", "version", "description")
V = TypeVar("V")


@dataclass(frozen=True, slots=True)
class ValidationRun:
    contracts: tuple[Contract, ...]
    diagnostics: tuple[Diagnostic, ...]
    files_checked: int
    empty_dirs: tuple[str, ...] = ()
    skipped: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        return not any(d.severity == "error" for d in self.diagnostics)


#: A budget ceiling in US dollars, or one per contract name (an operator's jobs tables give a
#: job a ceiling of its own: ``hz config show --job NAME``).
Ceiling = float | Callable[[str | None], float]


def ceiling_for(ceiling: Ceiling, doc: SourceDoc) -> float:
    """The ceiling that holds the contract in ``doc``: by its ``hz.name`` when ``ceiling`` is
    one per name (None for a document without a name of text)."""
    if not callable(ceiling):
        return ceiling
    hz = doc.data.get("hz") if isinstance(doc.data, dict) else None
    name = hz.get("name") if isinstance(hz, dict) else None
    return ceiling(name if isinstance(name, str) else None)


def validate_source(
    doc: SourceDoc,
    *,
    max_usd_ceiling: Ceiling = DEFAULT_MAX_USD_CEILING,
    tools: PolicySource | None = None,
    operations: Mapping[str, Operation] = CATALOG,
    targets: Mapping[str, Target] = TARGETS,
) -> tuple[Contract | None, list[Diagnostic]]:
    """Every problem of one document, sorted by position; the Contract only when none is an
    error (warnings do not stop it). With ``tools``, tools no runner accepts are warned about.
    ``operations`` are the operations an input may ``read`` (hz's own catalog, to which the
    command line adds the operator's ``command`` operations)."""
    from hz.compiler.checks.body import check_body
    from hz.compiler.checks.foreign import check_foreign
    from hz.compiler.checks.io_schemas import check_inputs, check_output
    from hz.compiler.checks.publishes import check_publishes
    from hz.compiler.checks.reads import check_reads
    from hz.compiler.checks.schedule import check_schedule
    from hz.compiler.checks.structure import check_structure
    from hz.compiler.checks.template import check_template

    gate = check_foreign(doc) or check_version(doc)
    if gate is not None:
        return None, [gate]
    diags = check_structure(doc)
    diags += check_body(doc)
    timeout, found = check_timeout(doc)
    diags += found
    max_usd, found = check_max_usd(doc, ceiling_for(max_usd_ceiling, doc))
    diags += found
    diags += check_inputs(doc)
    diags += check_reads(doc, operations)
    diags += check_output(doc)
    diags += check_schedule(doc)
    diags += check_template(doc)
    diags += check_publishes(doc, targets)
    diags += check_tools(doc, tools)
    diags = list(sort_diagnostics(diags))
    if any(d.severity == "error" for d in diags) or timeout is None or max_usd is None:
        return None, diags
    return _contract(doc, timeout, max_usd, operations), diags


def _contract(
    doc: SourceDoc, timeout: int, max_usd: float, operations: Mapping[str, Operation]
) -> Contract:
    # Only called on a document the schema and the checks accepted, so the shapes below hold
    # and every operation read is in ``operations``.
    hz: dict[str, Any] = doc.data["hz"]
    output: dict[str, Any] = hz.get("output", {})
    inputs = tuple(_input(name, spec, operations) for name, spec in hz.get("inputs", {}).items())
    fmt = cast(Literal["markdown", "text", "json"], output.get("format", "markdown"))
    from hz.compiler.checks.schedule import schedule_of

    return Contract(
        source=doc,
        name=hz["name"],
        title=hz.get("title"),
        timeout_seconds=timeout,
        tools=tuple(hz["agent"].get("tools", ())),
        max_usd=max_usd,
        inputs=inputs,
        output_format=fmt,
        output_schema=output.get("schema"),
        publishes=tuple(
            (spec["to"], dict(spec.get("args", {}))) for spec in hz.get("publishes", ())
        ),
        contract_text=doc.data["contract"],
        template=doc.data["prompt"],
        identity={key: doc.data[key] for key in IDENTITY_KEYS if key in doc.data},
        comments=doc.body.comments if doc.body is not None else (),
        schedule=schedule_of(hz.get("schedule")),
        after=tuple(hz.get("after", ())),
    )


def _input(name: str, spec: dict[str, Any], operations: Mapping[str, Operation]) -> InputDecl:
    if "read" not in spec:
        return InputDecl(
            name=name,
            description=spec.get("description"),
            schema=spec["schema"],
            has_default="default" in spec,
            default=spec.get("default"),
        )
    from hz.runtime.artifacts.models import CONTRACT_READ, ReadSpec, UpstreamSpec

    upstream = CONTRACT_READ.match(spec["read"])
    if upstream is not None:
        age = spec.get("max_age")
        length = None if age is None else window_length(age)
        seconds = None if length is None else int(length.total_seconds())
        # Any value unless the input says (HZ612 holds it to the upstream's output).
        return InputDecl(
            name,
            spec.get("description"),
            spec.get("schema", {}),
            has_default=False,
            upstream=UpstreamSpec(job=upstream.group(1), max_age_seconds=seconds),
        )
    op = operations[spec["read"]]
    read = ReadSpec(operation=op.name, args=spec.get("args", {}), window=spec.get("window"))
    # Without a schema of its own, a read input's value is held to the operation's result
    # schema (a copy: the catalog's is shared).
    schema = spec["schema"] if "schema" in spec else copy.deepcopy(dict(op.result))
    return InputDecl(name, spec.get("description"), schema, has_default=False, read=read)


#: What a directory is searched for, as the "no contracts found" message says it.
LOOKED_FOR = "*.yaml, *.yml, *.md with an hz: frontmatter"


@dataclass(frozen=True, slots=True)
class Expansion:
    """The files to check, the directories that could not be read (as HZ001), the
    directories given that hold no contract, and the Markdown files found there that are
    not contracts (no ``hz:`` frontmatter: ``-v`` lists them)."""

    files: tuple[str, ...]
    diagnostics: tuple[Diagnostic, ...] = ()
    empty_dirs: tuple[str, ...] = ()
    skipped: tuple[str, ...] = ()


def no_contracts(directory: str) -> Diagnostic:
    """HZ014: ``directory`` holds no contract; a check that checked nothing fails."""
    return Diagnostic(
        HZ014,
        f"no contracts found in {directory} (looked for {LOOKED_FOR})",
        directory,
        hint="name the directory that holds the contracts, or add one (hz init)",
    )


def _markdown_contract(path: str) -> bool:
    """Whether the Markdown file at ``path`` has a frontmatter with an ``hz:`` block (read
    up to the contract size limit: a larger file is a contract only if that part says so)."""
    from hz.compiler.load.markdown import has_hz_block
    from hz.runtime.artifacts.packet_limits import MAX_CONTRACT_BYTES

    try:
        with open(path, "rb") as f:
            head = f.read(MAX_CONTRACT_BYTES + 1)
    except OSError:
        return True  # reading it again says why it cannot be read
    return has_hz_block(head.decode("utf-8", errors="replace"))


def _regular(path: str) -> bool:
    """True for a regular file, and for a name that cannot be examined (reading it reports
    why): a FIFO or device named *.yaml would block the read forever."""
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except OSError:
        return True


def _walk(top: str, diags: list[Diagnostic], skipped: list[str]) -> list[str]:
    def unreadable(e: OSError) -> None:
        where = e.filename if isinstance(e.filename, str) else top
        message = f"cannot read directory: {e.strerror or e}"
        diags.append(Diagnostic(HZ001, message, where))

    found = []
    for root, dirs, files in os.walk(top, onerror=unreadable):
        dirs.sort()
        for f in files:
            path = os.path.join(root, f)
            markdown = f.lower().endswith(MARKDOWN_SUFFIX)
            if not (f.endswith(SUFFIXES) or markdown) or not _regular(path):
                continue
            try:
                # A repository can plant contracts/x.yaml -> ~/.ssh/config: it is named, never read.
                check_links(path, top)
            except OSError as e:
                diags.append(Diagnostic(HZ001, f"cannot read file: {e.strerror}", path))
                continue
            if markdown and not _markdown_contract(path):
                skipped.append(path)
                continue
            found.append(path)
    return sorted(found, key=lambda f: Path(f).relative_to(top).parts)


def expand_paths(paths: Sequence[str | os.PathLike[str]]) -> Expansion:
    """Files to check, in order: directories become their regular ``*.yaml``/``*.yml``
    files and their ``*.md`` files with an ``hz:`` frontmatter, sorted; a directory with none
    of them is an error (HZ014). A file named twice (``f.yaml`` and ``./f.yaml``) is checked
    once, under the first name it was given."""
    out: dict[str, str] = {}  # resolved path -> the name first given
    diags: list[Diagnostic] = []
    empty: list[str] = []
    skipped: list[str] = []
    for p in (os.fspath(each) for each in paths):
        if p != "-" and os.path.isdir(p):
            before = len(diags)
            found = _walk(p, diags, skipped)
            if not found and len(diags) == before:
                empty.append(p)
                diags.append(no_contracts(p))
        else:
            found = [p]
        for name in found:
            out.setdefault(name if name == "-" else os.path.realpath(name), name)
    return Expansion(tuple(out.values()), tuple(diags), tuple(empty), tuple(sorted(skipped)))


def validate_paths(
    paths: Sequence[str | os.PathLike[str]],
    *,
    max_usd_ceiling: Ceiling = DEFAULT_MAX_USD_CEILING,
    stdin: BinaryIO | None = None,
    tools: PolicySource | None = None,
    operations: Mapping[str, Operation] = CATALOG,
    targets: Mapping[str, Target] = TARGETS,
) -> ValidationRun:
    """Load and validate files, directories (recursively) and ``-`` (stdin), with
    ``operations`` the operations an input may ``read``."""
    expansion = expand_paths(paths)
    contracts, diags = gather(
        expansion,
        validate_each(
            expansion.files,
            max_usd_ceiling=max_usd_ceiling,
            stdin=stdin,
            tools=tools,
            operations=operations,
            targets=targets,
        ),
    )
    return ValidationRun(
        contracts, diags, len(expansion.files), expansion.empty_dirs, expansion.skipped
    )


def gather(
    expansion: Expansion, verdicts: Iterable[tuple[V | None, list[Diagnostic]]]
) -> tuple[tuple[V, ...], tuple[Diagnostic, ...]]:
    """Each file's verdict (``validate_each``'s, or one made of it) in one pass: the valid
    files' values in order (a contract, or its name) and every diagnostic, the expansion's
    first, sorted."""
    diags: list[Diagnostic] = list(expansion.diagnostics)
    valid: list[V] = []
    for value, found in verdicts:
        diags += found
        if value is not None:
            valid.append(value)
    return tuple(valid), sort_diagnostics(diags)


def validate_each(
    files: Sequence[str],
    *,
    max_usd_ceiling: Ceiling = DEFAULT_MAX_USD_CEILING,
    stdin: BinaryIO | None = None,
    tools: PolicySource | None = None,
    operations: Mapping[str, Operation] = CATALOG,
    targets: Mapping[str, Target] = TARGETS,
) -> Iterator[tuple[Contract | None, list[Diagnostic]]]:
    """Load and validate ``files`` (as ``expand_paths`` gives them) one at a time: a caller
    that drops each contract when done holds one document at a time, however many there are.
    ``operations`` are the operations an input may ``read``."""
    from hz.compiler.load.loader import load_path, load_stream

    for name in files:
        if name == "-":
            # Read through the loader's cap: a huge stdin is refused, never held in memory.
            doc, found = load_stream(stdin if stdin is not None else _stdin(), "<stdin>")
        elif not _regular(name) and not os.path.isdir(name):
            message = "not a regular file: a contract is read from a file (or - for stdin)"
            doc, found = None, [Diagnostic(HZ001, message, name)]
        else:
            doc, found = load_path(Path(name), display=name)
        if doc is None:
            yield None, list(found)
            continue
        contract, more = validate_source(
            doc,
            max_usd_ceiling=max_usd_ceiling,
            tools=tools,
            operations=operations,
            targets=targets,
        )
        yield contract, [*found, *more]


def _stdin() -> BinaryIO:
    import sys

    return sys.stdin.buffer
