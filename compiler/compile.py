"""Compile validated contracts into jobs: a pure mapping plus the name-uniqueness rule.

A job must be byte-identical whichever machine or directory compiles it, so it holds no
timestamp and no absolute path: the contract's path is stored relative to the *compile root*
(``find_root``) and the rest is the contract's own content.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from hz import __version__
from hz.compiler.chains import Link, Read, chain_problems
from hz.compiler.contract import Contract
from hz.compiler.diagnostics import Diagnostic, sort_diagnostics
from hz.compiler.rules.registry import HZ001, HZ601
from hz.compiler.source import SourceDoc
from hz.runtime.artifacts.canonical import sha256_hex
from hz.runtime.artifacts.errors import HzError
from hz.runtime.artifacts.models import (
    Budget,
    Identity,
    InputSpec,
    Job,
    OutputSpec,
    PublishSpec,
    RemovedComments,
    SourceRef,
    ToolProfile,
)
from hz.runtime.artifacts.operations import CATALOG, Operation
from hz.runtime.artifacts.publish_targets import TARGETS, Target

if TYPE_CHECKING:
    from hz.compiler.validate import Ceiling

#: A directory holding one of these is a project root: source paths are relative to it.
ROOT_MARKERS = ("hz.toml", ".git")


@dataclass(frozen=True, slots=True)
class CompiledJob:
    """A job and the contract file it came from (as the user named it, for messages), with
    the contract's node positions when it was loaded here (``--check`` points at them)."""

    job: Job
    contract_path: str
    source: SourceDoc | None = None
    #: The job's canonical JSON when it was made with the job (``compile_each``), else "".
    text: str = ""


@dataclass(frozen=True, slots=True)
class CompileRun:
    jobs: tuple[CompiledJob, ...]
    diagnostics: tuple[Diagnostic, ...]
    files_checked: int
    root: Path
    #: Markdown files in the directories given that are not contracts (no hz: frontmatter).
    skipped: tuple[str, ...] = ()
    #: How many jobs were compiled (``compile_each`` hands them on instead of keeping them).
    compiled: int = 0

    @property
    def failed(self) -> bool:
        return any(d.severity == "error" for d in self.diagnostics)


def _absolute(path: Path) -> Path:
    # Lexical, not resolve(): a symlinked checkout keeps the paths its user sees.
    return Path(os.path.normpath(path.absolute()))


def find_root(paths: Sequence[Path]) -> Path:
    """The compile root for ``paths``: the nearest directory at or above all of them that
    holds ``hz.toml`` or ``.git``, else their common directory."""
    dirs = [_absolute(p) if p.is_dir() else _absolute(p).parent for p in paths]
    common = Path(os.path.commonpath(dirs)) if dirs else _absolute(Path.cwd())
    for candidate in (common, *common.parents):
        if any((candidate / marker).exists() for marker in ROOT_MARKERS):
            return candidate
    return common


def lf_bytes(data: bytes) -> bytes:
    """``data`` with CRLF and CR line endings as LF: a checkout with core.autocrlf (Windows)
    holds the same contract as one without, and must compile to the same job."""
    return data.replace(b"\r\n", b"\n").replace(b"\r", b"\n")


def _relative(path: Path | str, root: Path) -> str | None:
    """``path`` relative to ``root`` as a job records it (POSIX); None when it is outside."""
    # String operations: this runs once per contract and pathlib's parsing dominated it.
    absolute = os.path.normpath(os.path.join(os.getcwd(), path))
    base = os.path.normpath(os.path.join(os.getcwd(), root))
    if absolute != base and absolute.startswith(base.rstrip(os.sep) + os.sep):
        return Path(absolute[len(base.rstrip(os.sep)) + 1 :]).as_posix()
    return None


def source_ref(path: Path, *, root: Path, data: bytes, comments: tuple[str, ...] = ()) -> SourceRef:
    relative = _relative(path, root)
    if relative is None:
        raise HzError(
            f"{path} is outside the compile root {root}",
            hint="pass --root with a directory that holds every contract",
        )
    if name_problem(path, root) is not None:
        raise HzError(f"{path}: {_NOT_UTF8}", hint="rename the file")
    removed = (
        RemovedComments(count=len(comments), sha256=sha256_hex("\n".join(comments)))
        if comments
        else None
    )
    return SourceRef(path=relative, sha256=sha256_hex(lf_bytes(data)), comments_removed=removed)


_NOT_UTF8 = "cannot compile a file whose name is not UTF-8 text: its job records the path as text"


def name_problem(path: Path | str, root: Path) -> Diagnostic | None:
    """HZ001 when the path a job of ``path`` would record (relative to ``root``) holds bytes
    that are not UTF-8: a job is JSON, which holds text only. (A directory above the root
    may be named so: it is not recorded.)"""
    relative = _relative(path, root)
    try:
        (str(path) if relative is None else relative).encode("utf-8")
    except UnicodeEncodeError:
        return Diagnostic(HZ001, _NOT_UTF8, str(path), hint="rename the file")
    return None


def compile_contract(contract: Contract, *, root: Path, data: bytes | None = None) -> Job:
    """The job of ``contract``. ``data`` is the file's bytes (read from disk when omitted)."""
    return _unsealed(contract, root=root, data=data).sealed()


def _unsealed(contract: Contract, *, root: Path, data: bytes | None = None) -> Job:
    path = Path(contract.source.path)
    if data is None:
        try:
            data = path.read_bytes()
        except OSError as e:
            raise HzError(f"{path}: cannot read file: {e.strerror or e}") from e
    inputs = {
        decl.name: InputSpec(
            description=decl.description,
            schema_=decl.schema,
            required=not decl.has_default,
            default=decl.default if decl.has_default else None,
            read=decl.read,
            upstream=decl.upstream,
        )
        for decl in contract.inputs
    }
    job = Job(
        name=contract.name,
        title=contract.title,
        identity=Identity(**contract.identity) if contract.identity else None,
        source=source_ref(path, root=root, data=data, comments=contract.comments),
        timeout_seconds=contract.timeout_seconds,
        tools=ToolProfile(tools=contract.tools),
        budget=Budget(max_usd=contract.max_usd),
        inputs=inputs,
        output=OutputSpec(format=contract.output_format, schema_=contract.output_schema),
        schedule=contract.schedule,
        after=contract.after,
        publishes=[PublishSpec(to=to, args=args) for to, args in contract.publishes],
        contract=contract.contract_text,
        template=contract.template,
        hz_version=__version__,
    )
    return job


#: Where a contract's ``hz.name`` is: (file, line, column), all a name clash needs to say.
NamedAt = tuple[str, int, int]


def _link(contract: Contract) -> Link:
    """What the contract depends on (``hz.after``, ``read: contract:NAME``), each where it is
    written, and what its own draft is."""
    doc = contract.source

    def where(*path: str | int) -> tuple[str, int, int]:
        pos = doc.pos(path)
        return doc.path, pos.line, pos.column

    after = tuple(
        (upstream, where("hz", "after", index)) for index, upstream in enumerate(contract.after)
    )
    reads = tuple(
        Read(decl.name, decl.upstream.job, decl.schema, where("hz", "inputs", decl.name, "read"))
        for decl in contract.inputs
        if decl.upstream is not None
    )
    return Link(
        contract.name,
        after,
        reads,
        contract.output_format,
        contract.output_schema,
        where("hz", "name"),
    )


def _named_at(contract: Contract) -> NamedAt:
    pos = contract.source.pos(("hz", "name"))
    return contract.source.path, pos.line, pos.column


def _clash(name: str, earlier: NamedAt, later: NamedAt) -> list[Diagnostic]:
    """HZ601, said in both files: an annotation on each, whichever the reader opens first."""
    message = f"two contracts are named {name!r}: {earlier[0]} and {later[0]}"
    hint = "hz.name names the job file; give each contract its own name"
    return [
        Diagnostic(HZ601, message, path, line, col, hint=hint)
        for path, line, col in (earlier, later)
    ]


def compile_contracts(contracts: Sequence[Contract], *, root: Path) -> CompileRun:
    """Compile validated contracts; two with one name are an error (HZ601) and compile none."""
    ordered = sorted(contracts, key=lambda c: c.source.path)
    first_of: dict[str, NamedAt] = {}
    diagnostics: list[Diagnostic] = []
    for contract in ordered:
        here = _named_at(contract)
        earlier = first_of.setdefault(contract.name, here)
        if earlier is not here:
            diagnostics += _clash(contract.name, earlier, here)
    for contract in ordered:
        problem = name_problem(contract.source.path, root)
        if problem is not None:
            diagnostics.append(problem)
    diagnostics += chain_problems([_link(c) for c in ordered])
    if diagnostics:
        return CompileRun((), sort_diagnostics(diagnostics), len(contracts), root)
    jobs = tuple(
        CompiledJob(compile_contract(c, root=root), c.source.path, c.source) for c in ordered
    )
    return CompileRun(jobs, (), len(contracts), root)


def compile_root(paths: Sequence[str], root: Path | None = None) -> Path:
    """The root the jobs of ``paths`` record their source paths against: ``root`` when given,
    else ``find_root``."""
    return _absolute(root) if root is not None else find_root([Path(p) for p in paths])


def compile_paths(
    paths: Sequence[str],
    *,
    root: Path | None = None,
    max_usd_ceiling: Ceiling = 100.0,
    operations: Mapping[str, Operation] = CATALOG,
    targets: Mapping[str, Target] = TARGETS,
) -> CompileRun:
    """Validate and compile every contract under ``paths``. Nothing compiles if any fails.
    ``operations`` are the operations an input may ``read``."""
    from hz.compiler.validate import validate_paths

    run = validate_paths(
        paths, max_usd_ceiling=max_usd_ceiling, operations=operations, targets=targets
    )
    compile_root = _absolute(root) if root is not None else find_root([Path(p) for p in paths])
    if any(d.severity == "error" for d in run.diagnostics):
        return CompileRun((), run.diagnostics, run.files_checked, compile_root, run.skipped)
    compiled = compile_contracts(run.contracts, root=compile_root)
    diagnostics = sort_diagnostics([*run.diagnostics, *compiled.diagnostics])
    return CompileRun(compiled.jobs, diagnostics, run.files_checked, compile_root, run.skipped)


def compile_each(
    paths: Sequence[str],
    emit: Callable[[CompiledJob], None],
    *,
    root: Path | None = None,
    max_usd_ceiling: Ceiling = 100.0,
    operations: Mapping[str, Operation] = CATALOG,
    targets: Mapping[str, Target] = TARGETS,
) -> CompileRun:
    """``compile_paths`` one contract at a time: each is loaded, validated, compiled and
    handed to ``emit``, then dropped, so memory stays flat whatever the number of contracts;
    only the names seen are kept (for HZ601). Once any contract fails, nothing more is
    emitted, and the run reports the failure: the caller discards what it was handed (as
    ``jobdir.JobWriter`` does), so nothing compiles if any fails, as with ``compile_paths``.
    ``operations`` are the operations an input may ``read``."""
    from hz.compiler.validate import expand_paths, validate_each

    expansion = expand_paths(paths)
    where = compile_root(paths, root)
    found: list[Diagnostic] = list(expansion.diagnostics)
    invalid = any(d.severity == "error" for d in found)
    clashes: list[Diagnostic] = []  # reported only when every contract is valid, as before
    first_of: dict[str, NamedAt] = {}
    links: list[Link] = []
    compiled = 0
    for contract, diagnostics in validate_each(
        expansion.files, max_usd_ceiling=max_usd_ceiling, operations=operations, targets=targets
    ):
        found += diagnostics
        invalid = invalid or any(d.severity == "error" for d in diagnostics)
        if contract is None:
            continue
        here = _named_at(contract)
        links.append(_link(contract))
        earlier = first_of.setdefault(contract.name, here)
        if earlier is not here:
            clashes += _clash(contract.name, earlier, here)
        problem = name_problem(contract.source.path, where)
        if problem is not None:
            clashes.append(problem)
        if invalid or clashes:
            continue
        job, text = _unsealed(contract, root=where).sealed_text()
        emit(CompiledJob(job, here[0], contract.source, text))
        compiled += 1
    if not invalid:
        clashes += chain_problems(links)
        found += clashes
    return CompileRun(
        (),
        sort_diagnostics(found),
        len(expansion.files),
        where,
        expansion.skipped,
        compiled=compiled if not (invalid or clashes) else 0,
    )


class Staging(Protocol):
    """Where ``compile_fanned`` puts each job: ``write`` may run in a forked process and
    returns what ``note`` records in this one (picklable)."""

    def prepare(self) -> None: ...
    def write(self, compiled: CompiledJob) -> Any: ...
    def note(self, receipt: Any) -> None: ...


#: One file's part of a compile: its diagnostics; for a valid contract where its name is,
#: its links, a problem with its path (HZ001), and what ``Staging.write`` returned or why
#: writing failed (the message of its HzError).
_FileResult = tuple[
    list[Diagnostic], NamedAt | None, Link | None, Diagnostic | None, Any, str | None
]


def compile_fanned(
    paths: Sequence[str],
    staging: Staging,
    *,
    root: Path | None = None,
    max_usd_ceiling: Ceiling = 100.0,
    operations: Mapping[str, Operation] = CATALOG,
    targets: Mapping[str, Target] = TARGETS,
    processes: int | None = None,
) -> CompileRun:
    """``compile_each`` with the per-file work — loading, validating, compiling, writing
    the staged job — split over forked processes when CPUs are idle
    (``hz.compiler.fanout.fan_out``). The names (HZ601), the chains and the verdict are
    decided here, in the order of the files, exactly as ``compile_each`` decides them. A
    child writes the jobs of its share whatever the others find: when the compile fails,
    the caller discards the staging directory as ``compile_each``'s caller does."""
    from hz.compiler.fanout import fan_out
    from hz.compiler.validate import expand_paths, validate_each

    expansion = expand_paths(paths)
    where = compile_root(paths, root)
    found: list[Diagnostic] = list(expansion.diagnostics)
    invalid = any(d.severity == "error" for d in found)
    clashes: list[Diagnostic] = []
    first_of: dict[str, NamedAt] = {}
    links: list[Link] = []
    receipts: list[Any] = []
    write_error: str | None = None

    def share(files: Sequence[str]) -> list[_FileResult]:
        out: list[_FileResult] = []
        for contract, diagnostics in validate_each(
            files, max_usd_ceiling=max_usd_ceiling, operations=operations, targets=targets
        ):
            if contract is None:
                out.append((diagnostics, None, None, None, None, None))
                continue
            here = _named_at(contract)
            problem = name_problem(contract.source.path, where)
            receipt, error = None, None
            if problem is None and not any(d.severity == "error" for d in diagnostics):
                job, text = _unsealed(contract, root=where).sealed_text()
                try:
                    receipt = staging.write(CompiledJob(job, here[0], contract.source, text))
                except HzError as e:  # a name staged twice (HZ601 says so), a full disk
                    error = e.message
            out.append((diagnostics, here, _link(contract), problem, receipt, error))
        return out

    staging.prepare()  # the staging directory exists before any child writes into it
    for diagnostics, here, link, problem, receipt, error in fan_out(
        expansion.files, share, processes=processes
    ):
        found += diagnostics
        invalid = invalid or any(d.severity == "error" for d in diagnostics)
        if here is None or link is None:
            continue
        links.append(link)
        earlier = first_of.setdefault(link.job, here)
        if earlier != here:
            clashes += _clash(link.job, earlier, here)
        if problem is not None:
            clashes.append(problem)
        if receipt is not None:
            receipts.append(receipt)
        write_error = write_error or error
    if not invalid:
        clashes += chain_problems(links)
        found += clashes
    failed = invalid or bool(clashes)
    if not failed and write_error is not None:
        raise HzError(write_error)
    if not failed:
        for receipt in receipts:
            staging.note(receipt)
    return CompileRun(
        (),
        sort_diagnostics(found),
        len(expansion.files),
        where,
        expansion.skipped,
        compiled=0 if failed else len(receipts),
    )
