"""Issue 21, item 2, as it was found: a ledger planted in a shared directory by another user
(owned by them, mode 666, a queued run with a working directory and prompt of their choosing)
was run by root's ``hz worker --drain``. Now it is refused before it is read: nothing runs."""

from __future__ import annotations

import os
import pwd
from pathlib import Path

import pytest

from tests.helpers.ledger_env import space


@pytest.mark.skipif(os.geteuid() != 0, reason="plants files of another user: root only")
def test_a_ledger_planted_by_another_user_is_not_run(tmp_path: Path) -> None:
    s = space(tmp_path, "echo", "--prompt-file={prompt_file}")
    shared = tmp_path / "tmp"
    shared.mkdir()
    shared.chmod(0o1777)  # as /tmp on a CI host
    s.state = shared / "hz"
    planted = s.submit("the planter's choice", "--workdir", "/")
    nobody = pwd.getpwnam("nobody").pw_uid
    for path in (s.state, *s.state.rglob("*")):
        os.chown(path, nobody, nobody)
        path.chmod(0o777 if path.is_dir() else 0o666)
    worked = s.cli("worker", "--drain")
    assert (worked.returncode, worked.stdout) == (2, "")
    me = pwd.getpwuid(os.geteuid()).pw_name
    assert worked.stderr == (
        f"hz: error: {s.state}, the state directory, belongs to nobody (uid {nobody}), not to "
        f"{me} (uid {os.geteuid()}) who runs hz: its runs and their results would be that "
        "user's to choose and to read\n"
        f"  hint: chown {me} {s.state} if it is yours, or choose another state directory "
        "(HZ_STATE_DIR, or [system] state_dir)\n"
    )
    assert s.starts() == []
    [row] = s.rows()
    assert (row["id"], row["state"]) == (planted, "queued")
