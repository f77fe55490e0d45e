"""The output directory of ``hz compile``: write it, or check that it is up to date.

The directory holds exactly one ``<name>.job.json`` per compiled contract. Writing replaces
each file atomically, leaves identical files untouched (their mtimes too) and removes
``*.job.json`` files no contract compiles to any more; checking reports each difference as
a diagnostic so CI shows it like any other problem.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hz.compiler.compile import CompiledJob
from hz.compiler.diagnostics import Diagnostic, sort_diagnostics
from hz.compiler.rules.registry import HZ602, HZ603, HZ604
from hz.runtime import strict_json
from hz.runtime.canonical import canonical_json
from hz.runtime.errors import HzError
from hz.runtime.files import write_atomically
from hz.runtime.regular_file import check_links, read_regular

SUFFIX = ".job.json"
#: A larger file in --out is no job hz wrote (it differs), and is not read further.
MAX_JOB_BYTES = 16 * 1024 * 1024
_REGENERATE = "run the same hz compile command without --check and commit the result"


@dataclass(frozen=True, slots=True)
class WriteSummary:
    written: tuple[Path, ...]
    unchanged: tuple[Path, ...]
    removed: tuple[Path, ...]


def job_text(compiled: CompiledJob) -> str:
    return canonical_json(compiled.job.to_json_data())


def _expected(jobs: tuple[CompiledJob, ...], out_dir: Path) -> dict[Path, CompiledJob]:
    return {out_dir / f"{c.job.name}{SUFFIX}": c for c in jobs}


def _existing(out_dir: Path) -> set[Path]:
    if not out_dir.is_dir():
        return set()
    return {p for p in out_dir.iterdir() if p.name.endswith(SUFFIX) and not p.is_dir()}


def _read(path: Path) -> str | None:
    return _read_or_why(path)[0]


def _read_or_why(path: Path) -> tuple[str | None, OSError | None]:
    """The file's text, or None and the error (None when absent or not UTF-8: then it is
    missing or differs)."""
    try:
        data = read_regular(path, limit=MAX_JOB_BYTES)
        return (data.decode("utf-8") if len(data) <= MAX_JOB_BYTES else None), None
    except FileNotFoundError:
        return None, None
    except OSError as e:
        return None, e
    except UnicodeDecodeError:
        return None, None


def refuse_linked_out_dir(out_dir: Path, root: Path) -> None:
    """``--out`` may not lead through a symbolic link out of the compile root: compiling
    writes there and deletes stale ``*.job.json`` files, and a repository can plant the link."""
    try:
        check_links(out_dir, root)
    except OSError as e:
        raise HzError(
            f"--out {out_dir} is {e.strerror}",
            hint="give the real directory as --out, or compile with --root above it",
        ) from e


def write_jobs(jobs: tuple[CompiledJob, ...], out_dir: Path) -> WriteSummary:
    expected = _expected(jobs, out_dir)
    written: list[Path] = []
    unchanged: list[Path] = []
    removed: list[Path] = []
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
        for path, compiled in sorted(expected.items()):
            text = job_text(compiled)
            if _read(path) == text:
                unchanged.append(path)
                continue
            write_atomically(path, text)
            written.append(path)
        for path in sorted(_existing(out_dir) - expected.keys()):
            path.unlink()
            removed.append(path)
    except OSError as e:
        where = e.filename or out_dir
        raise HzError(f"cannot write {where}: {e.strerror or e}") from e
    return WriteSummary(tuple(written), tuple(unchanged), tuple(removed))


def stale_because(current: str, expected: str) -> str:
    """What differs between a job file's text and the job the contract compiles to: the
    fields by their dotted names (``budget.max_usd``, ``inputs.week``), or only the source hash
    (a comment or formatting edit). ``digest`` follows the rest and is never named."""
    try:
        old = strict_json.loads(current)  # the file in --out comes from the repository
    except strict_json.JsonError:
        old = None
    if not isinstance(old, dict):
        return "it is not the JSON this contract compiles to"
    fields = [f for f in _differing(old, json.loads(expected)) if f not in _DERIVED]
    if fields:
        these = "this field differs" if len(fields) == 1 else "these fields differ"
        return f"{these} from what the contract compiles to: {', '.join(fields)}"
    if old.get("source", {}).get("sha256") != json.loads(expected)["source"]["sha256"]:
        return (
            "only the source hash differs: the contract file changed (a comment or layout) "
            "but not what it compiles to"
        )
    return "its layout differs from the canonical JSON this contract compiles to"


#: Fields that change whenever another does, or with any edit of the contract file.
_DERIVED = frozenset({"digest", "source.sha256"})


def _differing(old: Any, new: Any, prefix: str = "", depth: int = 2) -> list[str]:
    if old == new:
        return []
    if depth == 0 or not isinstance(old, dict) or not isinstance(new, dict):
        return [prefix or "the whole job"]
    names: list[str] = []
    for key in sorted(old.keys() | new.keys()):
        name = f"{prefix}.{key}" if prefix else key
        names += _differing(old.get(key), new.get(key), name, depth - 1)
    return names


def check_jobs(jobs: tuple[CompiledJob, ...], out_dir: Path) -> tuple[Diagnostic, ...]:
    """One diagnostic per job that is stale (HZ602), missing (HZ603) or has no contract
    (HZ604). Stale and missing jobs are reported at their contract, where the change is."""
    expected = _expected(jobs, out_dir)
    problems: list[Diagnostic] = []
    for path, compiled in expected.items():
        current, error = _read_or_why(path)
        if current == job_text(compiled):
            continue
        if error is not None:
            message = f"job {path} cannot be read: {error.strerror or error}"
            code, hint = HZ602, "make it a readable file, or " + _REGENERATE
        elif current is None and not path.exists():
            message = f"job {path} is missing"
            code, hint = HZ603, _REGENERATE
        else:
            message = f"job {path} is stale: {stale_because(current or '', job_text(compiled))}"
            code, hint = HZ602, _REGENERATE
        problems.append(Diagnostic(code, message, compiled.contract_path, hint=hint))
    for path in _existing(out_dir) - expected.keys():
        problems.append(
            Diagnostic(
                HZ604,
                "no contract compiles to this job any more",
                str(path),
                hint="delete it, or " + _REGENERATE + " (compile removes it)",
            )
        )
    return sort_diagnostics(problems)
