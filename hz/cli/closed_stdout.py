"""When the reader of hz's standard output goes away (``hz worker | head -1``, a log shipper
that died): what hz is doing does not depend on that reader. A run happened and is recorded
whether or not its line was read, so ``hz run`` and ``hz worker`` carry on: what is left of
stdout goes to /dev/null and stderr says so once. (A listing — ``hz runs list | head`` —
stops quietly with exit 1, as other tools do: there is nothing left to do.)"""

from __future__ import annotations

import os
import sys
import threading

import click

_lock = threading.Lock()
_closed = False


def drop_stdout() -> None:
    """Send what is left of stdout to /dev/null, so flushing it at exit fails no more."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)


def line(text: str, *, what: str) -> None:
    """``text`` as one line of stdout; when its reader is gone, stdout is dropped and stderr
    says once that ``what`` (``finished runs``) are no longer printed."""
    global _closed
    try:
        click.echo(text)
    except BrokenPipeError:
        with _lock:
            said, _closed = _closed, True
            if not said:
                drop_stdout()
                click.echo(
                    f"hz: standard output was closed (its reader went away); {what} are no "
                    "longer printed there",
                    err=True,
                )
