"""The job directory: atomic writes, pruning, and the stale / missing / extra check."""

from __future__ import annotations

import os
from pathlib import Path

from hz.compiler.compile import CompiledJob
from hz.compiler.diagnostics import Diagnostic
from hz.compiler.jobdir import check_jobs, job_text, write_jobs
from hz.runtime.artifacts.files import write_atomically
from hz.runtime.artifacts.models import Budget, Job, SourceRef, ToolProfile

HINT = "run the same hz compile command without --check and commit the result"


def _compiled(name: str, template: str = "Hi\n") -> CompiledJob:
    job = Job(
        name=name,
        source=SourceRef(path=f"contracts/{name}.yaml", sha256="0" * 64),
        timeout_seconds=60,
        tools=ToolProfile(),
        budget=Budget(max_usd=1.0),
        contract="Rules.\n",
        template=template,
        hz_version="0.1.0",
    ).sealed()
    return CompiledJob(job, f"contracts/{name}.yaml")


def test_write_then_check_is_clean(tmp_path: Path) -> None:
    out = tmp_path / "build" / "jobs"
    jobs = (_compiled("a"), _compiled("b"))
    summary = write_jobs(jobs, out)
    assert summary.written == (out / "a.job.json", out / "b.job.json")
    assert (out / "a.job.json").read_text(encoding="utf-8") == job_text(jobs[0])
    assert check_jobs(jobs, out) == ()
    assert sorted(p.name for p in out.iterdir()) == ["a.job.json", "b.job.json"]


def test_rewrite_leaves_identical_files_alone_and_prunes(tmp_path: Path) -> None:
    out = tmp_path / "jobs"
    write_jobs((_compiled("a"), _compiled("gone")), out)
    (out / "notes.txt").write_text("kept", encoding="utf-8")
    os.utime(out / "a.job.json", (1, 1))
    summary = write_jobs((_compiled("a"), _compiled("new")), out)
    assert summary.written == (out / "new.job.json",)
    assert summary.unchanged == (out / "a.job.json",)
    assert summary.removed == (out / "gone.job.json",)
    assert (out / "a.job.json").stat().st_mtime == 1
    assert sorted(p.name for p in out.iterdir()) == ["a.job.json", "new.job.json", "notes.txt"]


def test_check_reports_stale_missing_and_extra(tmp_path: Path) -> None:
    out = tmp_path / "jobs"
    write_jobs((_compiled("a"), _compiled("b"), _compiled("old")), out)
    jobs = (_compiled("a", template="Changed\n"), _compiled("b"), _compiled("c"))
    (out / "b.job.json").write_text(job_text(jobs[1]), encoding="utf-8")
    # Sorted by file: the absolute job path before the relative contract paths.
    assert check_jobs(jobs, out) == (
        Diagnostic(
            "HZ604",
            "no contract compiles to this job any more",
            f"{out}/old.job.json",
            hint=f"delete it, or {HINT} (compile removes it)",
        ),
        Diagnostic(
            "HZ602",
            f"job {out}/a.job.json is stale: this field differs from what the contract compiles "
            "to: template",
            "contracts/a.yaml",
            hint=HINT,
        ),
        Diagnostic("HZ603", f"job {out}/c.job.json is missing", "contracts/c.yaml", hint=HINT),
    )


def test_check_of_a_missing_directory_lists_every_job(tmp_path: Path) -> None:
    found = check_jobs((_compiled("a"),), tmp_path / "nowhere")
    assert [(d.code, d.file) for d in found] == [("HZ603", "contracts/a.yaml")]
    assert not (tmp_path / "nowhere").exists()


def test_job_file_that_is_not_utf8_is_stale(tmp_path: Path) -> None:
    (tmp_path / "a.job.json").write_bytes(b"\xff\xfe")
    assert [d.code for d in check_jobs((_compiled("a"),), tmp_path)] == ["HZ602"]


def test_unreadable_job_file_says_so(tmp_path: Path) -> None:
    # A directory in the job's place: a real read error even for root (chmod 000 is not).
    (tmp_path / "a.job.json").mkdir()
    assert check_jobs((_compiled("a"),), tmp_path) == (
        Diagnostic(
            "HZ602",
            f"job {tmp_path}/a.job.json cannot be read: Is a directory",
            "contracts/a.yaml",
            hint=f"make it a readable file, or {HINT}",
        ),
    )


def test_write_atomically_leaves_no_temporary_file(tmp_path: Path) -> None:
    target = tmp_path / "x.job.json"
    write_atomically(target, "one\n")
    write_atomically(target, "two\n")
    assert [p.name for p in tmp_path.iterdir()] == ["x.job.json"]
    assert target.read_text(encoding="utf-8") == "two\n"
    mask = os.umask(0)
    os.umask(mask)
    assert target.stat().st_mode & 0o777 == 0o666 & ~mask


def test_a_hostile_job_file_is_stale_not_a_crash(tmp_path: Path) -> None:
    for text in ("[" * 100_000 + "]" * 100_000, '{"name": NaN}', '{"a": ' + "1" * 5000 + "}"):
        (tmp_path / "a.job.json").write_text(text)
        assert check_jobs((_compiled("a"),), tmp_path) == (
            Diagnostic(
                "HZ602",
                f"job {tmp_path}/a.job.json is stale: it is not the JSON this contract compiles to",
                "contracts/a.yaml",
                hint=HINT,
            ),
        )
