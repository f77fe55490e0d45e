"""The state directory and the ledger are this user's alone (issue 21, item 2): a state
directory or ledger file that another user owns or can write, a symbolic link, a pipe in the
ledger's place, a parent anyone can write without the sticky bit, are refused with the path,
what was found and how to fix it; what hz creates is 0700 (directories) and 0600 (the ledger,
its WAL and shared-memory files). As root (as CI runs) the tests give files to ``nobody``."""

from __future__ import annotations

import os
import pwd
import stat
from pathlib import Path

import pytest

from hz.runtime.ledger.store import Ledger
from tests.conftest import Cli, CliResult
from tests.helpers.contracts import contract

CONTRACT = contract(tools=(), inputs=(), prompt="Say hi.")

ELSEWHERE = "or choose another state directory (HZ_STATE_DIR, or [system] state_dir)"
ROOT_ONLY = pytest.mark.skipif(os.geteuid() != 0, reason="gives files to another user: root only")


def nobody() -> int:
    return pwd.getpwnam("nobody").pw_uid


def me() -> str:
    return f"{pwd.getpwuid(os.geteuid()).pw_name} (uid {os.geteuid()})"


@pytest.fixture
def hz(cli: Cli, tmp_path: Path) -> Cli:
    (tmp_path / "greet.yaml").write_text(CONTRACT)
    (tmp_path / "operator.toml").write_text('[capabilities]\nagent_runner = "echo"\n')

    def run(*args: str, **extra: str) -> CliResult:
        return cli(*args, cwd=tmp_path, env={"HZ_CONFIG": str(tmp_path / "operator.toml"), **extra})

    return run


def refused(done: CliResult, message: str, hint: str) -> None:
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == f"hz: error: {message}\n  hint: {hint}\n"


def test_what_hz_creates_is_this_users_alone(hz: Cli, tmp_path: Path) -> None:
    state = tmp_path / "new" / "state"
    assert hz("run", "greet.yaml", "-q", HZ_STATE_DIR=str(state)).returncode == 0
    ledger = Ledger(state / "ledger.sqlite3")
    ledger.connection.execute("SELECT 1")  # a connection open: the WAL and -shm files exist
    modes = {
        path.relative_to(tmp_path).as_posix(): stat.S_IMODE(path.stat().st_mode)
        for path in (tmp_path / "new", state, state / "receipts", *state.glob("ledger.sqlite3*"))
    }
    ledger.close()
    assert modes == {
        "new": 0o700,
        "new/state": 0o700,
        "new/state/receipts": 0o700,
        "new/state/ledger.sqlite3": 0o600,
        "new/state/ledger.sqlite3-wal": 0o600,
        "new/state/ledger.sqlite3-shm": 0o600,
    }


@pytest.mark.parametrize("mode", [0o777, 0o770, 0o702], ids=["0777", "0770", "0702"])
def test_a_state_directory_others_can_write_is_refused(hz: Cli, tmp_path: Path, mode: int) -> None:
    state = tmp_path / "state"
    state.mkdir()
    state.chmod(mode)
    who = {0o777: "its group and others", 0o770: "its group", 0o702: "others"}[mode]
    for command in (("run", "greet.yaml"), ("submit", "greet.yaml"), ("runs", "list")):
        refused(
            hz(*command, HZ_STATE_DIR=str(state)),
            f"{state}, the state directory, is writable by {who} (mode {mode:04o}): they could "
            "choose what hz runs",
            f"chmod 700 {state}, {ELSEWHERE}",
        )
    assert os.listdir(state) == []  # nothing read, nothing written


def test_the_configured_state_dir_is_held_to_the_same_rule(hz: Cli, tmp_path: Path) -> None:
    state = tmp_path / "configured"
    state.mkdir(mode=0o755)
    state.chmod(0o757)
    (tmp_path / "operator.toml").write_text(
        f'[capabilities]\nagent_runner = "echo"\n[system]\nstate_dir = "{state}"\n'
    )
    refused(
        hz("runs", "list"),
        f"{state}, the state directory, is writable by others (mode 0757): they could choose "
        "what hz runs",
        f"chmod 700 {state}, {ELSEWHERE}",
    )


def test_a_ledger_file_others_can_write_is_refused_and_so_are_its_wal_files(
    hz: Cli, tmp_path: Path
) -> None:
    state = tmp_path / "state"
    assert hz("run", "greet.yaml", "-q", HZ_STATE_DIR=str(state)).returncode == 0
    for name in ("ledger.sqlite3", "ledger.sqlite3-wal"):
        path = state / name
        path.touch()
        path.chmod(0o666)
        refused(
            hz("runs", "list", HZ_STATE_DIR=str(state)),
            f"{path}, the run ledger, is writable by its group and others (mode 0666): they "
            "could choose what hz runs",
            f"chmod 600 {path}, {ELSEWHERE}",
        )
        path.chmod(0o600)
    assert hz("runs", "list", HZ_STATE_DIR=str(state)).returncode == 0


def test_a_receipt_directory_others_can_write_under_the_state_dir_is_refused(
    hz: Cli, tmp_path: Path
) -> None:
    state = tmp_path / "state"
    (state / "receipts").mkdir(parents=True, mode=0o700)
    state.chmod(0o700)
    (state / "receipts").chmod(0o777)
    refused(
        hz("run", "greet.yaml", "--no-ledger", HZ_STATE_DIR=str(state)),
        f"{state / 'receipts'}, the receipt directory, is writable by its group and others "
        "(mode 0777): they could choose what hz runs",
        f"chmod 700 {state / 'receipts'}, {ELSEWHERE}",
    )


def test_a_symbolic_link_as_state_dir_or_ledger_is_refused(hz: Cli, tmp_path: Path) -> None:
    """Another user's ledger reached through a link: the link is refused before it is read,
    whoever owns what it points to."""
    real = tmp_path / "real"
    assert hz("run", "greet.yaml", "-q", HZ_STATE_DIR=str(real)).returncode == 0
    link = tmp_path / "link"
    link.symlink_to(real)
    refused(
        hz("runs", "list", HZ_STATE_DIR=str(link)),
        f"{link}, the state directory, is a symbolic link (to {real}); hz keeps its run ledger "
        "only in a directory of its own",
        f"use the directory itself if it is yours, {ELSEWHERE}",
    )
    mine = tmp_path / "mine"
    mine.mkdir(mode=0o700)
    (mine / "ledger.sqlite3").symlink_to(real / "ledger.sqlite3")
    refused(
        hz("runs", "list", HZ_STATE_DIR=str(mine)),
        f"{mine / 'ledger.sqlite3'}, the run ledger, is a symbolic link (to "
        f"{real / 'ledger.sqlite3'}); hz keeps its run ledger only in a directory of its own",
        f"use the directory itself if it is yours, {ELSEWHERE}",
    )


def test_a_pipe_or_a_directory_in_the_ledgers_place_is_refused(hz: Cli, tmp_path: Path) -> None:
    """A FIFO would block SQLite's open for ever."""
    state = tmp_path / "state"
    state.mkdir(mode=0o700)
    os.mkfifo(state / "ledger.sqlite3", 0o600)
    refused(
        hz("runs", "list", HZ_STATE_DIR=str(state)),
        f"{state / 'ledger.sqlite3'}, the run ledger, is not a regular file (a named pipe)",
        f"move it away, {ELSEWHERE}",
    )
    (state / "ledger.sqlite3").unlink()
    (state / "ledger.sqlite3").mkdir()
    refused(
        hz("runs", "list", HZ_STATE_DIR=str(state)),
        f"{state / 'ledger.sqlite3'}, the run ledger, is not a regular file (a directory)",
        f"move it away, {ELSEWHERE}",
    )


def test_a_parent_anyone_can_write_needs_the_sticky_bit(hz: Cli, tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    state = shared / "hz"
    refused(
        hz("runs", "list", HZ_STATE_DIR=str(state)),
        f"{shared}, a parent of the state directory {state}, is writable by others without "
        "the sticky bit (mode 0777): anyone could put a directory of their own in its place",
        f"chmod o-w {shared} (or +t, as /tmp has), {ELSEWHERE}",
    )
    assert not state.exists()
    shared.chmod(0o1777)  # as /tmp: nobody may rename or remove what is ours in it
    assert hz("runs", "list", HZ_STATE_DIR=str(state)).returncode == 0
    assert stat.S_IMODE(state.stat().st_mode) == 0o700


@ROOT_ONLY
def test_a_state_dir_or_ledger_of_another_user_is_refused(hz: Cli, tmp_path: Path) -> None:
    state = tmp_path / "state"
    assert hz("run", "greet.yaml", "-q", HZ_STATE_DIR=str(state)).returncode == 0
    os.chown(state, nobody(), -1)
    refused(
        hz("runs", "list", HZ_STATE_DIR=str(state)),
        f"{state}, the state directory, belongs to nobody (uid {nobody()}), not to {me()} who "
        "runs hz: its runs and their results would be that user's to choose and to read",
        f"chown {pwd.getpwuid(os.geteuid()).pw_name} {state} if it is yours, {ELSEWHERE}",
    )
    os.chown(state, os.geteuid(), -1)
    os.chown(state / "ledger.sqlite3", nobody(), -1)
    refused(
        hz("runs", "list", HZ_STATE_DIR=str(state)),
        f"{state / 'ledger.sqlite3'}, the run ledger, belongs to nobody (uid {nobody()}), not "
        f"to {me()} who runs hz: its runs and their results would be that user's to choose "
        "and to read",
        f"chown {pwd.getpwuid(os.geteuid()).pw_name} {state / 'ledger.sqlite3'} if it is yours, "
        f"{ELSEWHERE}",
    )


@ROOT_ONLY
def test_a_parent_of_another_user_is_refused_also_through_a_link(hz: Cli, tmp_path: Path) -> None:
    theirs = tmp_path / "theirs"
    theirs.mkdir(mode=0o755)
    os.chown(theirs, nobody(), -1)
    for state in (theirs / "hz", tmp_path / "link" / "hz"):
        (tmp_path / "link").unlink(missing_ok=True)
        (tmp_path / "link").symlink_to(theirs)  # a parent that leads into their directory
        refused(
            hz("runs", "list", HZ_STATE_DIR=str(state)),
            f"{theirs}, a parent of the state directory {state}, belongs to nobody (uid "
            f"{nobody()}), who could put a directory of their own in its place",
            f"keep the state directory under a directory of yours or root's, {ELSEWHERE}",
        )
    assert os.listdir(theirs) == []
