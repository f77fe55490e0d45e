"""Another user of the host, as a real process: what they may do to this user's files.

``as_user`` forks, drops to ``uid`` with ``gid`` as its only group, runs ``act`` and reports
the errno it ended with (0: it succeeded). Root only (CI runs as root): a test that needs it
is marked so by its module.
"""

from __future__ import annotations

import ctypes
import os
from collections.abc import Callable
from pathlib import Path

#: A user and a group no file of the test machine belongs to: the other user of the tests.
OTHER_UID = 65534
SHARED_GID = 4242
#: renameat2's flag: swap two names in one step (what an attacker racing a check uses).
RENAME_EXCHANGE = 2


def as_user(act: Callable[[], int], *, uid: int = OTHER_UID, gid: int = SHARED_GID) -> int:
    """``act()`` in a child process of ``uid`` in group ``gid``; the errno it returned."""
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child reports through its exit status
        code = 255
        try:
            os.setgroups([gid])
            os.setgid(gid)
            os.setuid(uid)
            code = act()
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status)


def exchange(a: Path, b: Path) -> int:
    """Swap the names ``a`` and ``b`` at once (renameat2 RENAME_EXCHANGE); the errno, or 0."""
    libc = ctypes.CDLL(None, use_errno=True)
    done = libc.renameat2(-100, os.fsencode(a), -100, os.fsencode(b), RENAME_EXCHANGE)
    return 0 if done == 0 else ctypes.get_errno()
