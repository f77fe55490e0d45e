"""Where hz reads or writes a path it was given, a FIFO, a device or a link out of the tree is
refused at once: no hang, no endless read, no write or delete outside the repository."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import Cli, CliResult
from tests.helpers.contracts import GREET_TIMES as INPUT_CONTRACT
from tests.helpers.contracts import project


def hz(cli: Cli, cwd: Path, *args: str) -> CliResult:
    return cli(*args, cwd=cwd)


def _compiled(cli: Cli, tmp_path: Path) -> Path:
    root = project(tmp_path, "alpha")
    assert hz(cli, root, "compile", "contracts", "--out", "jobs").returncode == 0
    return root


@pytest.mark.parametrize(
    ("make", "kind"),
    [
        (lambda p: p.symlink_to("/dev/zero"), "a device"),
        (os.mkfifo, "a named pipe"),
    ],
)
def test_a_job_that_is_no_regular_file_is_reported_by_check(
    cli: Cli, tmp_path: Path, make: object, kind: str
) -> None:
    root = _compiled(cli, tmp_path)
    job = root / "jobs" / "alpha.job.json"
    job.unlink()
    make(job)  # type: ignore[operator]
    done = hz(cli, root, "compile", "contracts", "--out", "jobs", "--check")
    assert (done.returncode, done.stdout) == (
        1,
        f"contracts/alpha.yaml:0:0: error: job jobs/alpha.job.json cannot be read: not a "
        f"regular file ({kind}) [HZ602]\n"
        f"  hint: make it a readable file, or run the same hz compile command without --check "
        f"and commit the result\n",
    )


def test_an_out_directory_linked_out_of_the_repository_is_refused(cli: Cli, tmp_path: Path) -> None:
    root = project(tmp_path / "repo", "alpha")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "precious.job.json").write_text("{}")
    (root / "jobs").symlink_to(outside)
    for extra in ((), ("--check",)):
        done = hz(cli, root, "compile", "contracts", "--out", "jobs", *extra)
        assert (done.returncode, done.stdout) == (2, "")
        assert done.stderr == (
            f"hz: error: --out jobs is a symbolic link that leads out of {root} (to {outside})\n"
            "  hint: give the real directory as --out, or compile with --root above it\n"
        )
    assert [p.name for p in outside.iterdir()] == ["precious.job.json"]


def test_an_out_directory_linked_inside_the_repository_is_used(cli: Cli, tmp_path: Path) -> None:
    root = project(tmp_path, "alpha")
    (root / "build").mkdir()
    (root / "jobs").symlink_to(root / "build")
    done = hz(cli, root, "compile", "contracts", "--out", "jobs")
    assert done.returncode == 0, done.stderr
    assert [p.name for p in (root / "build").iterdir()] == ["alpha.job.json"]


def test_a_device_as_the_configuration_file_is_refused(cli: Cli, tmp_path: Path) -> None:
    done = cli("config", "show", cwd=tmp_path, env={"HZ_CONFIG": "/dev/zero"})
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr.startswith(
        "hz: error: /dev/zero: cannot read: not a regular file (a device)\n"
    )


def _fifo(tmp_path: Path) -> str:
    os.mkfifo(tmp_path / "value")
    return "value"


def _link_out(tmp_path: Path) -> str:
    (tmp_path / "value").symlink_to("/etc/hostname")
    return "value"


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (_fifo, "cannot read file: not a regular file (a named pipe)"),
        (lambda _: "/dev/zero", "cannot read file: not a regular file (a device)"),
        (_link_out, "cannot read file: a symbolic link that leads out of {cwd} (to /etc/hostname)"),
    ],
)
def test_an_input_file_must_be_a_regular_file_in_the_tree(
    cli: Cli, tmp_path: Path, make: Callable[[Path], str], message: str
) -> None:
    (tmp_path / "greet.yaml").write_text(INPUT_CONTRACT)
    name = make(tmp_path)
    for option in (f"--input=who=@{name}", f"--inputs={name}"):
        done = hz(cli, tmp_path, "render", "greet.yaml", option)
        assert (done.returncode, done.stdout) == (1, "")
        assert done.stderr.splitlines()[0] == (
            f"{name}:0:0: error: {message.format(cwd=tmp_path)} [HZ701]"
        )


def test_a_contract_linked_out_of_the_walked_directory_is_named_never_read(
    cli: Cli, tmp_path: Path
) -> None:
    """A repository can plant ``contracts/x.yaml -> ~/.ssh/config``: ``hz validate contracts``
    (and compile) reports the link and reads nothing through it; its neighbours are checked.
    The link's target is outside text too: its escape codes are escaped."""
    root = project(tmp_path / "repo", "alpha")
    outside = tmp_path / "outside"
    outside.mkdir()
    secret = outside / "secret\x1b[31m.yaml"
    secret.write_text("hz: {name: sk-live-planted}\n")
    (root / "contracts" / "stolen.yaml").symlink_to(secret)
    shown = str(outside) + "/secret\\x1b[31m.yaml"
    expected = (
        f"contracts/stolen.yaml:0:0: error: cannot read file: a symbolic link that leads out of "
        f"contracts (to {shown}) [HZ001]\n"
    )
    done = hz(cli, root, "validate", "contracts")
    assert (done.returncode, done.stdout) == (1, expected)
    assert "sk-live" not in done.stdout + done.stderr
    compiled = hz(cli, root, "compile", "contracts", "--out", "jobs")
    assert (compiled.returncode, compiled.stdout) == (1, expected)
    assert not (root / "jobs").exists()


def test_a_contract_linked_inside_the_walked_directory_is_checked(cli: Cli, tmp_path: Path) -> None:
    root = project(tmp_path, "alpha")
    (root / "contracts" / "shared").mkdir()
    (root / "contracts" / "alpha.yaml").rename(root / "contracts" / "shared" / "alpha.yaml")
    (root / "contracts" / "alpha.yaml").symlink_to(Path("shared") / "alpha.yaml")
    done = hz(cli, root, "validate", "contracts")
    assert (done.returncode, done.stdout) == (0, "")
    assert done.stderr == "Success: no issues found in 1 file\n"
