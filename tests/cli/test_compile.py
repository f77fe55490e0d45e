"""`hz compile` in process: jobs on disk, determinism, --check, formats, exit codes."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.conftest import Cli, CliResult
from tests.helpers.contracts import project, write

REGENERATE = "run the same hz compile command without --check and commit the result"


def hz(cli: Cli, cwd: Path, *args: str) -> CliResult:
    return cli(*args, cwd=cwd)


def tree(directory: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(directory.iterdir())}


def test_compile_then_check(cli: Cli, tmp_path: Path) -> None:
    root = project(tmp_path, "alpha", "beta")
    done = hz(cli, root, "compile", "contracts", "--out", "build/jobs")
    assert (done.returncode, done.stdout) == (0, "")
    assert done.stderr == (
        "Success: no issues found in 2 files\n"
        "2 jobs in build/jobs: 2 written, 0 unchanged, 0 removed\n"
    )
    assert sorted(tree(root / "build" / "jobs")) == ["alpha.job.json", "beta.job.json"]
    job = json.loads((root / "build/jobs/alpha.job.json").read_text(encoding="utf-8"))
    assert job["source"]["path"] == "contracts/alpha.yaml"
    checked = hz(cli, root, "compile", "contracts", "--out", "build/jobs", "--check")
    assert (checked.returncode, checked.stdout) == (0, "")
    assert checked.stderr == (
        "Success: no issues found in 2 contracts and 2 job files\n2 jobs in build/jobs up to date\n"
    )
    again = hz(cli, root, "compile", "contracts", "--out", "build/jobs")
    assert again.stderr.endswith("2 jobs in build/jobs: 0 written, 2 unchanged, 0 removed\n")


def test_jobs_are_identical_from_any_directory_and_checkout(cli: Cli, tmp_path: Path) -> None:
    first = project(tmp_path / "one" / "repo", "alpha", "beta")
    hz(cli, first, "compile", "contracts", "--out", "build/jobs")
    inner = hz(cli, first / "contracts", "compile", ".", "--out", "../elsewhere")
    assert inner.returncode == 0, inner.stderr
    second = tmp_path / "two" / "deeper" / "clone"
    shutil.copytree(first / "contracts", second / "contracts")
    (second / ".git").mkdir()
    files = [str(second / "contracts" / "beta.yaml"), str(second / "contracts" / "alpha.yaml")]
    absolute = hz(cli, tmp_path, "compile", *files, "--out", str(tmp_path / "third"))
    assert absolute.returncode == 0, absolute.stderr
    expected = tree(first / "build" / "jobs")
    assert tree(first / "elsewhere") == expected
    assert tree(tmp_path / "third") == expected
    assert all(str(tmp_path).encode() not in text for text in expected.values())


def test_check_lists_stale_missing_and_extra_jobs(cli: Cli, tmp_path: Path) -> None:
    root = project(tmp_path, "alpha", "beta")
    hz(cli, root, "compile", "contracts", "--out", "jobs")
    write(root, "alpha", rule="Be briefer.")
    write(root, "gamma")
    (root / "contracts" / "beta.yaml").unlink()
    before = tree(root / "jobs")
    checked = hz(cli, root, "compile", "contracts", "--out", "jobs", "--check")
    assert checked.returncode == 1
    assert checked.stdout == (
        "contracts/alpha.yaml:11:1: error: job jobs/alpha.job.json is stale: this field differs "
        "from what the contract compiles to: contract [HZ602]\n"
        f"  hint: {REGENERATE}\n"
        "contracts/gamma.yaml:0:0: error: job jobs/gamma.job.json is missing [HZ603]\n"
        f"  hint: {REGENERATE}\n"
        "jobs/beta.job.json:0:0: error: no contract compiles to this job any more [HZ604]\n"
        f"  hint: delete it, or {REGENERATE} (compile removes it)\n"
    )
    # Two contracts and the two job files --check compared them with.
    assert checked.stderr == "Found 3 errors in 3 files (checked 2 contracts and 2 job files)\n"
    assert tree(root / "jobs") == before
    fixed = hz(cli, root, "compile", "contracts", "--out", "jobs")
    assert fixed.stderr.endswith("2 jobs in jobs: 2 written, 0 unchanged, 1 removed\n")
    assert hz(cli, root, "compile", "contracts", "--out", "jobs", "--check").returncode == 0


def test_check_as_github_annotations(cli: Cli, tmp_path: Path) -> None:
    root = project(tmp_path, "alpha")
    checked = hz(
        cli, root, "compile", "contracts", "--out", "jobs", "--check", "--format", "github"
    )
    assert checked.returncode == 1
    assert checked.stdout == (
        "::error file=contracts/alpha.yaml,title=HZ603::job jobs/alpha.job.json is missing"
        f"%0Ahint: {REGENERATE}\n"
    )


def test_check_as_json(cli: Cli, tmp_path: Path) -> None:
    root = project(tmp_path, "alpha")
    checked = hz(cli, root, "compile", "contracts", "--out", "jobs", "--check", "--format", "json")
    report = json.loads(checked.stdout)
    assert [(d["code"], d["file"]) for d in report["diagnostics"]] == [
        ("HZ603", "contracts/alpha.yaml")
    ]
    assert checked.returncode == 1


def test_invalid_contract_writes_nothing(cli: Cli, tmp_path: Path) -> None:
    root = project(tmp_path, "alpha")
    (root / "contracts" / "broken.yaml").write_text("hz: [\n", encoding="utf-8")
    done = hz(cli, root, "compile", "contracts", "--out", "jobs")
    assert done.returncode == 1
    assert done.stdout.startswith("contracts/broken.yaml:2:1: error: YAML syntax error")
    assert not (root / "jobs").exists()


def test_two_contracts_with_one_name(cli: Cli, tmp_path: Path) -> None:
    root = project(tmp_path, "alpha")
    shutil.copy(root / "contracts" / "alpha.yaml", root / "contracts" / "copy.yaml")
    done = hz(cli, root, "compile", "contracts", "--out", "jobs")
    assert (done.returncode, done.stderr) == (1, "Found 2 errors in 2 files (checked 2 files)\n")
    assert done.stdout == (
        "contracts/alpha.yaml:3:9: error: two contracts are named 'alpha': "
        "contracts/alpha.yaml and contracts/copy.yaml [HZ601]\n"
        "  hint: hz.name names the job file; give each contract its own name\n"
        "contracts/copy.yaml:3:9: error: two contracts are named 'alpha': "
        "contracts/alpha.yaml and contracts/copy.yaml [HZ601]\n"
        "  hint: hz.name names the job file; give each contract its own name\n"
    )
    assert not (root / "jobs").exists()


def test_root_option(cli: Cli, tmp_path: Path) -> None:
    root = project(tmp_path, "alpha")
    done = hz(cli, root, "compile", "contracts", "--out", "jobs", "--root", "contracts")
    assert done.returncode == 0, done.stderr
    job = json.loads((root / "jobs" / "alpha.job.json").read_text(encoding="utf-8"))
    assert job["source"]["path"] == "alpha.yaml"
    outside = hz(cli, root, "compile", "contracts", "--out", "jobs", "--root", "build")
    assert outside.returncode == 2
    (root / "build").mkdir()
    outside = hz(cli, root, "compile", "contracts", "--out", "jobs", "--root", "build")
    assert (outside.returncode, outside.stdout) == (2, "")
    assert outside.stderr == (
        "hz: error: contracts/alpha.yaml is outside the compile root "
        f"{root}/build\n"
        "  hint: pass --root with a directory that holds every contract\n"
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--out", "jobs"], "give at least one PATH: a contract file or a directory"),
        (
            ["-", "--out", "jobs"],
            "compile reads files: a contract on stdin has no path for its job",
        ),
        (["contracts"], "Missing option '--out'."),
        (["contracts", "--out", "j", "--format", "xml"], "Invalid value for '--format'"),
    ],
)
def test_usage_errors_exit_2(cli: Cli, tmp_path: Path, args: list[str], message: str) -> None:
    root = project(tmp_path, "alpha")
    done = hz(cli, root, "compile", *args)
    assert done.returncode == 2
    assert message in done.stderr
    assert "Traceback" not in done.stderr


def test_a_contract_named_twice_compiles_once(cli: Cli, tmp_path: Path) -> None:
    root = project(tmp_path, "digest")
    done = hz(cli, root, "compile", "contracts", "./contracts/digest.yaml", "--out", "dd")
    assert (done.returncode, done.stdout) == (0, "")
    assert done.stderr == (
        "Success: no issues found in 1 file\n1 job in dd: 1 written, 0 unchanged, 0 removed\n"
    )
    assert sorted(tree(root / "dd")) == ["digest.job.json"]


USAGE = {
    "compile": "Usage: hz compile [OPTIONS] PATH...\nTry 'hz compile --help' for help.\n\n",
    "render": "Usage: hz render [OPTIONS] JOB|CONTRACT\nTry 'hz render --help' for help.\n\n",
}


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ("compile", "contracts", "--out", ""),
            "Error: Invalid value for '--out': the path must not be empty\n",
        ),
        (("compile", "", "--out", "jobs"), "Error: a PATH must not be empty\n"),
        (
            ("compile", "contracts", "--out", "jobs", "--max-usd-ceiling", "nan"),
            "Error: Invalid value for '--max-usd-ceiling': nan is not a finite number "
            "greater than 0\n",
        ),
        (
            ("render", "contracts/a.yaml", "-o", ""),
            "Error: Invalid value for '--output': the path must not be empty\n",
        ),
        (
            ("render", "contracts/a.yaml", "--inputs", ""),
            "Error: Invalid value for '--inputs': the path must not be empty\n",
        ),
        (
            ("render", "contracts/a.yaml", "--input", "topic=@"),
            "Error: Invalid value for '--input': 'topic=@' names no file after @ "
            "(write NAME=@FILE, or NAME=@@ for a literal @)\n",
        ),
        (
            ("render", "contracts/a.yaml", "--max-usd-ceiling", "inf"),
            "Error: Invalid value for '--max-usd-ceiling': inf is not a finite number "
            "greater than 0\n",
        ),
    ],
)
def test_empty_paths_and_non_finite_ceilings_are_usage_errors(
    cli: Cli, tmp_path: Path, args: tuple[str, ...], message: str
) -> None:
    root = project(tmp_path, "a")
    (root / "old.job.json").write_text("{}")
    done = hz(cli, root, *args)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == USAGE[args[0]] + message
    # Nothing written to or removed from the current directory.
    assert sorted(p.name for p in root.iterdir()) == ["contracts", "hz.toml", "old.job.json"]


@pytest.mark.parametrize("ending", ["\r\n", "\r"])
def test_crlf_checkout_compiles_to_the_same_bytes(cli: Cli, tmp_path: Path, ending: str) -> None:
    text = (Path(__file__).resolve().parents[2] / "contracts" / "weekly-digest.yaml").read_text(
        encoding="utf-8"
    )
    assert "\r" not in text
    jobs = {}
    for name, endings in (("lf", "\n"), ("other", ending)):
        root = tmp_path / name
        (root / "contracts").mkdir(parents=True)
        (root / "hz.toml").touch()
        data = text.replace("\n", endings).encode("utf-8")
        (root / "contracts" / "weekly-digest.yaml").write_bytes(data)
        done = hz(cli, root, "compile", "contracts", "--out", "jobs")
        assert (done.returncode, done.stdout) == (0, "")
        jobs[name] = (root / "jobs" / "weekly-digest.job.json").read_bytes()
    assert jobs["lf"] == jobs["other"]
    # Jobs compiled on an LF checkout pass --check on the other one.
    other = tmp_path / "other"
    checked = hz(cli, other, "compile", "contracts", "--out", "../lf/jobs", "--check")
    assert (checked.returncode, checked.stdout) == (0, "")


def test_a_contract_failing_after_others_were_staged_changes_nothing(
    cli: Cli, tmp_path: Path
) -> None:
    # Jobs are staged as they compile; the last contract fails: the out directory keeps
    # exactly what it held (the old job, its bytes), with no staged file left behind.
    root = project(tmp_path, "alpha")
    for name in ("beta", "gamma"):
        text = (root / "contracts" / "alpha.yaml").read_text(encoding="utf-8")
        (root / "contracts" / f"{name}.yaml").write_text(text.replace("alpha", name))
    (root / "jobs").mkdir()
    (root / "jobs" / "alpha.job.json").write_text("old\n")
    (root / "contracts" / "zz-broken.yaml").write_text("hz: [\n", encoding="utf-8")
    done = hz(cli, root, "compile", "contracts", "--out", "jobs")
    assert done.returncode == 1
    assert done.stdout.startswith("contracts/zz-broken.yaml:2:1: error: YAML syntax error")
    assert sorted(p.name for p in (root / "jobs").iterdir()) == ["alpha.job.json"]
    assert (root / "jobs" / "alpha.job.json").read_text() == "old\n"


def test_compile_holds_one_contract_at_a_time(tmp_path: Path) -> None:
    import gc

    from hz.compiler.compile import CompiledJob, compile_each
    from hz.compiler.source import SourceDoc
    from hz.runtime.artifacts.models import Job

    root = project(tmp_path, "alpha")
    for name in ("beta", "gamma", "delta"):
        text = (root / "contracts" / "alpha.yaml").read_text(encoding="utf-8")
        (root / "contracts" / f"{name}.yaml").write_text(text.replace("alpha", name))
    held: list[tuple[int, int]] = []

    def alive() -> list[object]:
        gc.collect()
        return [o for o in gc.get_objects() if isinstance(o, SourceDoc | Job)]

    # What other tests of this process left alive (a cache, a snapshot) is not this compile's.
    before = {id(o) for o in alive()}

    def emit(compiled: CompiledJob) -> None:
        live = [o for o in alive() if id(o) not in before]
        held.append(
            (sum(isinstance(o, SourceDoc) for o in live), sum(isinstance(o, Job) for o in live))
        )

    run = compile_each([str(root / "contracts")], emit, root=root)
    assert (run.compiled, run.failed) == (4, False)
    # When a contract is compiled, it is the only document and the only job alive.
    assert held == [(1, 1)] * 4


@pytest.mark.parametrize("command", ["compile", "validate"])
@pytest.mark.parametrize("value", ["0", "9", "two", " 2", "3" * 40])
def test_hz_processes_is_a_number_from_1_to_8(
    cli: Cli, tmp_path: Path, command: str, value: str
) -> None:
    root = project(tmp_path, "alpha")
    shown = repr(value if len(value) <= 20 else value[:20] + "...")
    args = ("--out", "jobs") if command == "compile" else ()
    done = cli(command, "contracts", *args, cwd=root, env={"HZ_PROCESSES": value})
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == (
        f"hz: error: environment variable HZ_PROCESSES: {shown} is not a number of processes "
        "from 1 to 8\n"
        "  hint: unset HZ_PROCESSES to let hz judge by the CPUs and the load average\n"
    )
    assert not (root / "jobs").exists()


def test_a_compile_removes_staging_directories_nobody_holds(cli: Cli, tmp_path: Path) -> None:
    import fcntl
    import os

    root = project(tmp_path, "alpha")
    out = root / "jobs"
    out.mkdir()
    abandoned = out / ".hz-compile-crashed"  # a SIGKILLed compile's
    abandoned.mkdir()
    (abandoned / "alpha.job.json").write_text("half", encoding="utf-8")
    live = out / ".hz-compile-running"  # another compile's, at work
    live.mkdir()
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (out / ".hz-compile-link").symlink_to(outside, target_is_directory=True)
    held = os.open(live, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.flock(held, fcntl.LOCK_EX)
        failed = hz(cli, root, "compile", "contracts", "--out", "jobs", "--check")
        assert failed.returncode == 1  # --check writes nothing: it leaves them
        assert abandoned.exists()
        done = hz(cli, root, "compile", "contracts", "--out", "jobs")
        assert done.returncode == 0
    finally:
        os.close(held)
    assert sorted(p.name for p in out.iterdir()) == [
        ".hz-compile-link",
        ".hz-compile-running",
        "alpha.job.json",
    ]
    assert outside.is_dir()
