"""``hz`` in process in a working directory, as an operator with a state directory there and,
when given, a configuration (the ``hz run`` tests' helper)."""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
from collections.abc import Iterator, Mapping
from pathlib import Path

from click.testing import CliRunner

from tests.conftest import Cli, CliResult


def hz(cli: Cli, cwd: Path, *args: str, config: str = "", **env: str) -> CliResult:
    # The operator's state directory, where the ledger and the default receipt chain live.
    env.setdefault("HZ_STATE_DIR", "state")
    if config:
        (cwd / "operator.toml").write_text(config)
        env["HZ_CONFIG"] = str(cwd / "operator.toml")
    return cli(*args, cwd=cwd, env=env)


#: The operator configuration binding the built-in echo runner.
ECHO = '[capabilities]\nagent_runner = "echo"\n'


def run_main(
    args: tuple[str, ...] | list[str], *, stdin: str | None, env: Mapping[str, str] | None
) -> CliResult:
    """``hz ARGS`` in this process through the real entry point (``hz.cli.main``: the one error
    handler and its exit codes), under click's ``CliRunner`` isolation of the streams and of
    ``env`` (set for the call, restored after it)."""
    from hz.cli import main

    with CliRunner().isolation(input=stdin, env=env) as streams:
        try:
            main(list(args))
        except SystemExit as e:
            code = e.code if isinstance(e.code, int) else 0 if e.code is None else 1
        else:  # main() always exits
            raise AssertionError("hz.cli.main returned instead of exiting")
        sys.stdout.flush()  # text written with sys.stdout.write is still in its buffer
        sys.stderr.flush()
        out, err = streams[0], streams[1]
        return CliResult(code, out.getvalue().decode(), err.getvalue().decode())


#: The signals whose handlers hz's commands replace while they run, and must give back.
HANDLED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT)


def _fds() -> dict[str, str]:
    found = {}
    for fd in os.listdir("/proc/self/fd"):
        with contextlib.suppress(OSError):
            found[fd] = os.readlink(f"/proc/self/fd/{fd}")
    return found


@contextlib.contextmanager
def leaves_nothing(what: str, *, grace: float = 2.0) -> Iterator[None]:
    """Fails when the block leaves a thread running, a file descriptor open or a signal
    handler replaced: an in-process call must end as a process would (a psycopg pool thread
    left running would otherwise pass unseen and outlive its test)."""
    threads = set(threading.enumerate())
    fds = _fds()
    handlers = {signum: signal.getsignal(signum) for signum in HANDLED}
    yield
    new = [t for t in threading.enumerate() if t not in threads]
    for thread in new:  # one that is ending as the call returns gets a moment
        thread.join(timeout=grace)
    alive = [t.name for t in new if t.is_alive()]
    opened = {fd: target for fd, target in _fds().items() if fds.get(fd) != target}
    changed = [
        signal.Signals(signum).name
        for signum, handler in handlers.items()
        if signal.getsignal(signum) != handler
    ]
    assert (alive, opened, changed) == ([], {}, []), (
        f"{what} left behind threads {alive}, descriptors {opened}, signal handlers {changed}"
    )
