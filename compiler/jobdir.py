"""The output directory of ``hz compile``: write it, or check that it is up to date.

The directory holds exactly one ``<name>.job.json`` per compiled contract. Writing replaces
each file atomically, leaves identical files untouched (their mtimes too) and removes
``*.job.json`` files no contract compiles to any more; checking reports each difference as
a diagnostic so CI shows it like any other problem.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from hz.compiler.compile import CompiledJob
from hz.compiler.diagnostics import Diagnostic, sort_diagnostics
from hz.compiler.rules.registry import HZ602, HZ603, HZ604
from hz.compiler.stale import WHOLE_FILE, stale_because, stale_position
from hz.runtime.artifacts.canonical import canonical_json
from hz.runtime.artifacts.errors import HzError
from hz.runtime.artifacts.files import write_atomically
from hz.runtime.artifacts.regular_file import check_links, read_regular

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
    return compiled.text or canonical_json(compiled.job.to_json_data())


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


def check_jobs(jobs: tuple[CompiledJob, ...], out_dir: Path) -> tuple[Diagnostic, ...]:
    """One diagnostic per job that is stale (HZ602), missing (HZ603) or has no contract
    (HZ604). Stale and missing jobs are reported at their contract, where the change is: a
    stale one at the line of the first field that differs, when the contract holds it."""
    checker = JobChecker(out_dir)
    for compiled in jobs:
        checker.add(compiled)
    return checker.finish()


def _check_one(path: Path, compiled: CompiledJob) -> Diagnostic | None:
    text = job_text(compiled)
    current, error = _read_or_why(path)
    if current == text:
        return None
    pos = WHOLE_FILE
    if error is not None:
        message = f"job {path} cannot be read: {error.strerror or error}"
        code, hint = HZ602, "make it a readable file, or " + _REGENERATE
    elif current is None and not path.exists():
        message = f"job {path} is missing"
        code, hint = HZ603, _REGENERATE
    else:
        message = f"job {path} is stale: {stale_because(current or '', text)}"
        code, hint = HZ602, _REGENERATE
        pos = stale_position(current or "", text, compiled.source)
    return Diagnostic(code, message, compiled.contract_path, pos.line, pos.column, hint=hint)


class JobChecker:
    """``hz compile --check`` one job at a time: each is compared as it comes and dropped;
    only the names of the expected files and the problems are kept."""

    def __init__(self, out_dir: Path) -> None:
        self.out_dir = out_dir
        self.expected: set[Path] = set()
        self.problems: list[Diagnostic] = []

    def add(self, compiled: CompiledJob) -> None:
        path = self.out_dir / f"{compiled.job.name}{SUFFIX}"
        self.expected.add(path)
        problem = _check_one(path, compiled)
        if problem is not None:
            self.problems.append(problem)

    def finish(self) -> tuple[Diagnostic, ...]:
        for path in _existing(self.out_dir) - self.expected:
            self.problems.append(
                Diagnostic(
                    HZ604,
                    "no contract compiles to this job any more",
                    str(path),
                    hint="delete it, or " + _REGENERATE + " (compile removes it)",
                )
            )
        return sort_diagnostics(self.problems)


#: The prefix of the private directory a compile stages changed jobs in, inside --out.
STAGING_PREFIX = ".hz-compile-"
#: Attempts at a staging directory that another compile's cleanup removes as it is made.
_STAGING_ATTEMPTS = 5


class JobWriter:
    """``hz compile`` one job at a time: a job whose file already holds its text is left
    alone (its mtime too); any other is written to a private staging directory inside
    ``out_dir`` as it comes and dropped. ``commit`` then renames each staged file into place
    (each appears whole: a rename within one file system) and removes the jobs no contract
    compiles to; ``abort`` removes the staging directory, so a failed compile changes
    nothing in ``out_dir``.

    The staging directory is locked (``flock``) while its compile lives, forked processes
    included; the lock goes with the last of them, however they end. ``commit`` also removes
    the staging directories nobody holds: those of a compile that was SIGKILLed or lost its
    machine (decision 0027)."""

    def __init__(self, out_dir: Path) -> None:
        self.out_dir = out_dir
        self.expected: set[Path] = set()
        self.staged: list[Path] = []
        self.unchanged: list[Path] = []
        self._stage: Path | None = None
        self._lock = -1  # the locked descriptor of the staging directory
        self._made: list[Path] = []

    def add(self, compiled: CompiledJob) -> None:
        self.note(self.write(compiled))

    def prepare(self) -> None:
        """Make the staging directory now (before ``write`` runs in forked processes)."""
        self._staging()

    def write(self, compiled: CompiledJob) -> tuple[bool, Path]:
        """Stage ``compiled`` unless its file already holds its text: (staged?, its path).
        Touches no state of this object but the staging directory, so that a forked process
        may write and this one ``note`` it."""
        path = self.out_dir / f"{compiled.job.name}{SUFFIX}"
        text = job_text(compiled)
        try:
            if _read(path) == text:
                return False, path
            # Replaces what is there: the share of a forked process that died is staged again
            # (its last file perhaps cut short). A name given twice is HZ601, which fails the
            # compile, so nothing staged twice is ever committed.
            with open(self._staging() / path.name, "w", encoding="utf-8", newline="") as f:
                f.write(text)
        except OSError as e:
            raise HzError(f"cannot write {e.filename or path}: {e.strerror or e}") from e
        return True, path

    def note(self, receipt: tuple[bool, Path]) -> None:
        staged, path = receipt
        self.expected.add(path)
        (self.staged if staged else self.unchanged).append(path)

    def _staging(self) -> Path:
        if self._stage is None:
            # The directories made here go again on abort: a failed compile creates nothing.
            missing = [d for d in (self.out_dir, *self.out_dir.parents) if not d.exists()]
            self.out_dir.mkdir(parents=True, exist_ok=True)
            self._made = missing
            self._stage, self._lock = _locked_staging(self.out_dir)
        return self._stage

    def commit(self) -> WriteSummary:
        removed: list[Path] = []
        try:
            self.out_dir.mkdir(parents=True, exist_ok=True)
            for path in self.staged:
                os.replace(self._staging() / path.name, path)
            for path in sorted(_existing(self.out_dir) - self.expected):
                path.unlink()
                removed.append(path)
        except OSError as e:
            where = e.filename or self.out_dir
            raise HzError(f"cannot write {where}: {e.strerror or e}") from e
        finally:
            self._made = []  # committed: the directories made stay
            self.abort()
        remove_abandoned_staging(self.out_dir)
        return WriteSummary(
            tuple(sorted(self.staged)), tuple(sorted(self.unchanged)), tuple(removed)
        )

    def abort(self) -> None:
        if self._stage is not None:
            shutil.rmtree(self._stage, ignore_errors=True)
            self._stage = None
        if self._lock >= 0:
            os.close(self._lock)
            self._lock = -1
        for directory in self._made:
            try:
                directory.rmdir()
            except OSError:
                break  # not empty (another writer): leave it and what is above it
        self._made = []


def _locked_staging(out_dir: Path) -> tuple[Path, int]:
    """A new staging directory in ``out_dir`` and its descriptor, locked. Made, then locked,
    then checked to be still there: another compile's ``remove_abandoned_staging`` may find
    it unlocked in between and remove it (then another is made)."""
    for _ in range(_STAGING_ATTEMPTS):
        stage = Path(tempfile.mkdtemp(dir=out_dir, prefix=STAGING_PREFIX))
        fd = os.open(stage, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            if os.stat(stage, follow_symlinks=False).st_ino == os.fstat(fd).st_ino:
                return stage, fd
        except FileNotFoundError:
            pass
        except BaseException:
            os.close(fd)
            raise
        os.close(fd)
    raise HzError(
        f"cannot write {out_dir}: its staging directories keep being removed",
        hint="run one hz compile at a time into the same --out",
    )


def remove_abandoned_staging(out_dir: Path) -> tuple[Path, ...]:
    """Remove the staging directories (``STAGING_PREFIX``) in ``out_dir`` that no process
    holds locked: left by a compile that could not clean up (SIGKILL, a power cut). A live
    compile's is left alone, as is anything that is not a directory of that name. Best
    effort: what cannot be removed stays. The directories removed."""
    removed: list[Path] = []
    try:
        with os.scandir(out_dir) as found:
            entries = [e for e in found if e.name.startswith(STAGING_PREFIX)]
    except OSError:
        return ()
    for entry in entries:
        try:
            fd = os.open(entry.path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
        except OSError:
            continue  # gone, a link, not a directory
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            continue  # a compile at work
        try:
            shutil.rmtree(entry.path, ignore_errors=True)
        finally:
            os.close(fd)
        removed.append(Path(entry.path))
    return tuple(removed)
