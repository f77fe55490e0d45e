"""Another user swapping the state directory between hz's check and SQLite's open (attack on
issue 21, H1): a group member renaming the victim's state directory (renameat2
RENAME_EXCHANGE) in a group-writable parent would hand the victim's ``hz worker`` their own
ledger. The race is made deterministic: the attacker — a real process of another user, in the
parent's group — swaps the directories at the moment SQLite is about to open the ledger (a hook
on ``sqlite3.connect``), after every check passed.

A parent its group can write (without the sticky bit) is refused before anything is opened;
with the sticky bit the swap fails (EPERM) and hz opens its own ledger. A parent reached
through another user's symbolic link is refused: the link is theirs to re-point. Root only
(files are given to another user); CI runs as root."""

from __future__ import annotations

import errno
import json
import os
import pwd
import shutil
import sqlite3
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import Cli, CliResult
from tests.helpers.contracts import contract
from tests.helpers.users import OTHER_UID, SHARED_GID, as_user, exchange

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="acts as another user: root only")

ELSEWHERE = "or choose another state directory (HZ_STATE_DIR, or [system] state_dir)"


@pytest.fixture
def shared(tmp_path: Path) -> Iterator[Path]:
    """A directory every user can reach (pytest's own is root's 0700), removed after."""
    base = Path(tempfile.mkdtemp(prefix="hz-swap-"))
    base.chmod(0o755)
    yield base
    shutil.rmtree(base, ignore_errors=True)


@pytest.fixture
def hz(cli: Cli, tmp_path: Path) -> Callable[..., CliResult]:
    for name in ("mine", "theirs"):
        (tmp_path / f"{name}.yaml").write_text(
            contract(name, tools=(), inputs=(), prompt="Say hi.")
        )
    (tmp_path / "operator.toml").write_text('[capabilities]\nagent_runner = "echo"\n')

    def run(*args: str, state: Path) -> CliResult:
        env = {"HZ_CONFIG": str(tmp_path / "operator.toml"), "HZ_STATE_DIR": str(state)}
        return cli(*args, cwd=tmp_path, env=env)

    return run


def planted(hz: Callable[..., CliResult], group_dir: Path, mode: int) -> tuple[Path, Path]:
    """In ``group_dir`` (root's, of the shared group, left with ``mode``): the victim's state
    directory (a run of ``mine``) and the attacker's, a ledger anyone may write holding a run
    of ``theirs``."""
    group_dir.mkdir()
    os.chown(group_dir, 0, SHARED_GID)
    state, evil = group_dir / "state", group_dir / "evil"
    assert hz("run", "mine.yaml", "-q", state=state).returncode == 0
    assert hz("run", "theirs.yaml", "-q", state=evil).returncode == 0
    for path in (evil, *evil.rglob("*")):
        os.chown(path, OTHER_UID, SHARED_GID)
        path.chmod(0o777 if path.is_dir() else 0o666)
    group_dir.chmod(mode)
    return state, evil


def swap_at_open(monkeypatch: pytest.MonkeyPatch, state: Path, evil: Path) -> list[int]:
    """The attacker swaps ``state`` and ``evil`` as SQLite is about to open the ledger; the
    errno of each try (0: swapped)."""
    tries: list[int] = []
    real = sqlite3.connect

    def connect(*args: Any, **kwargs: Any) -> sqlite3.Connection:
        if not tries:
            tries.append(as_user(lambda: exchange(state, evil)))
        return real(*args, **kwargs)

    monkeypatch.setattr(sqlite3, "connect", connect)
    return tries


def jobs(done: CliResult) -> list[str]:
    assert done.returncode == 0, done.stderr
    return [run["job_name"] for run in json.loads(done.stdout)["runs"]]


def test_a_parent_its_group_can_write_is_refused_before_anything_is_opened(
    hz: Callable[..., CliResult], shared: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    group_dir = shared / "g"
    state, evil = planted(hz, group_dir, 0o770)
    tries = swap_at_open(monkeypatch, state, evil)
    done = hz("runs", "list", "--format", "json", state=state)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == (
        f"hz: error: {group_dir}, a parent of the state directory {state}, is writable by its "
        f"group (gid {SHARED_GID}) without the sticky bit (mode 0770): any member of it could "
        "put a directory of their own in its place\n"
        f"  hint: chmod g-w {group_dir} (or +t, as /tmp has), {ELSEWHERE}\n"
    )
    assert tries == []  # refused before SQLite was asked to open anything


def test_with_the_sticky_bit_the_swap_fails_and_hz_opens_its_own_ledger(
    hz: Callable[..., CliResult], shared: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    group_dir = shared / "g"
    state, evil = planted(hz, group_dir, 0o1770)
    tries = swap_at_open(monkeypatch, state, evil)
    assert jobs(hz("runs", "list", "--format", "json", state=state)) == ["mine"]
    assert tries == [errno.EPERM]
    # Without the sticky bit the same swap succeeds: what the refusal above prevents.
    group_dir.chmod(0o770)
    assert as_user(lambda: exchange(state, evil)) == 0


def test_a_parent_writable_by_the_users_own_private_group_is_fine(
    hz: Callable[..., CliResult], shared: Path
) -> None:
    """Ubuntu's umask 002 makes ~/.local 0775 with the user's private group: nobody else is
    in it. (root's group root is root's own.)"""
    me = pwd.getpwuid(os.geteuid())
    own = shared / "own"
    own.mkdir()
    os.chown(own, me.pw_uid, me.pw_gid)
    own.chmod(0o775)
    assert hz("run", "mine.yaml", "-q", state=own / "state").returncode == 0


def test_a_parent_reached_through_another_users_link_is_refused(
    hz: Callable[..., CliResult], shared: Path
) -> None:
    """A link in a sticky directory is its owner's to remove and point elsewhere."""
    sticky = shared / "tmp"
    sticky.mkdir()
    sticky.chmod(0o1777)
    real = shared / "real"
    real.mkdir(mode=0o700)
    link = sticky / "link"
    link.symlink_to(real)
    os.lchown(link, OTHER_UID, SHARED_GID)
    state = link / "state"
    done = hz("runs", "list", state=state)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == (
        f"hz: error: {link}, a symbolic link on the way to the state directory {state}, "
        f"belongs to nobody (uid {OTHER_UID}), who could point it elsewhere\n"
        f"  hint: name the directory it leads to ({real}) instead, {ELSEWHERE}\n"
    )
    assert os.listdir(real) == []
    os.lchown(link, 0, 0)  # a link of root's (or this user's) is followed
    assert hz("runs", "list", state=state).returncode == 0
    assert sorted(os.listdir(real)) == ["state"]
