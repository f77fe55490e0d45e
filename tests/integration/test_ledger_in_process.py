"""The ledger commands run in this process (``Space.cli``) end as a process would: the
ledger closed, no thread, descriptor or signal handler left behind — on both ledgers."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from tests.helpers.in_process import leaves_nothing
from tests.helpers.ledger_env import space


def test_each_ledger_command_closes_what_it_opened(dsn: str | None, tmp_path: Path) -> None:
    s = space(tmp_path, "echo", "--prompt-file={prompt_file}", dsn=dsn)
    run_id = s.submit("Ann")  # each call below fails if it leaves anything open
    listed = s.cli("runs", "list").stdout.splitlines()
    assert [line.split()[2] for line in listed if line.startswith(f"{run_id}  ")] == ["queued"]
    drained = s.cli("worker", "--drain")
    assert (drained.returncode, drained.stdout) == (0, f"{run_id}  completed  greet  greet.yaml\n")
    assert s.cli("runs", "show", run_id, "--format", "json").returncode == 0
    assert s.cli("runs", "reconcile").stdout == "nothing to reconcile\n"
    again = s.cli("run", "greet.yaml", "--input", "who=Bo", "-q")
    assert (again.returncode, again.stdout) == (0, "Say hi to Bo.\n")


def test_what_a_call_leaves_behind_is_named() -> None:
    stop = threading.Event()
    read, write = os.pipe()
    checked = leaves_nothing("hz planted", grace=0.05)
    checked.__enter__()
    threading.Thread(target=stop.wait, name="planted", daemon=True).start()
    kept = os.dup(read)
    with pytest.raises(AssertionError) as left:
        checked.__exit__(None, None, None)
    stop.set()
    for fd in (read, write, kept):
        os.close(fd)
    assert str(left.value).startswith(
        f"hz planted left behind threads ['planted'], descriptors {{'{kept}': 'pipe:["
    )
    assert str(left.value).endswith("]'}, signal handlers []")
