"""Live progress of a run on a terminal: one line on stderr, rewritten in place
(``RewrittenLine``; a batch's line, ``hz.cli.ledger_run.BatchDisplay``, is one too).

Shown only when stderr is a terminal (and not ``--quiet``): a log file or a pipe gets no
control characters. A ticker thread keeps the elapsed time moving between runner events.
"""

from __future__ import annotations

import threading
import time
from typing import Self, TextIO

from hz.cli.counts import plural
from hz.runtime.artifacts.printable import printable
from hz.runtime.process.threads import start
from hz.runtime.runners.protocol import Progress


class RewrittenLine:
    """One line on ``stream``, rewritten in place every ``interval`` seconds by a ticker
    thread (``text()``, drawn again by ``draw()``) while the block runs, and wiped at its end.
    ``what`` names the thread if the machine cannot start it."""

    def __init__(self, stream: TextIO, *, interval: float, name: str, what: str) -> None:
        self._stream = stream
        self._interval = interval
        self._what = what
        self._lock = threading.Lock()
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._tick, name=name, daemon=True)

    def text(self) -> str:
        raise NotImplementedError

    def __enter__(self) -> Self:
        start(self._thread, self._what)
        return self

    def __exit__(self, *exc: object) -> None:
        self._done.set()
        self._thread.join()
        with self._lock:
            self._stream.write("\r\x1b[K")
            self._stream.flush()

    def _tick(self) -> None:
        while not self._done.wait(self._interval):
            self.draw()

    def draw(self) -> None:
        with self._lock:
            if self._done.is_set():
                return
            self._stream.write("\r\x1b[K" + self.text())
            self._stream.flush()


class TerminalProgress(RewrittenLine):
    """A run's elapsed time, turns, tool calls and last tool."""

    def __init__(self, stream: TextIO, *, interval: float = 0.5) -> None:
        super().__init__(stream, interval=interval, name="hz-progress", what="the progress line")
        self._started = time.monotonic()
        self._last = Progress(elapsed_seconds=0.0, turns=0, tool_calls=0)

    def note(self, line: str) -> None:
        """A line of its own above the progress line (which the next tick draws again)."""
        with self._lock:
            self._stream.write("\r\x1b[K" + line + "\n")
            self._stream.flush()

    def __call__(self, progress: Progress) -> None:
        with self._lock:
            self._last = progress
        self.draw()

    def text(self) -> str:
        return line(time.monotonic() - self._started, self._last)


#: The longest tool name the line shows.
_NAME_CHARS = 40


def line(elapsed: float, progress: Progress) -> str:
    # The tool's name is the agent's (an MCP server names its own): escaped, and cut so the
    # line stays one line of a terminal.
    name = progress.last_tool or ""
    shown = printable(name[:_NAME_CHARS]) + ("…" if len(name) > _NAME_CHARS else "")
    last = f" (last: {shown})" if name else ""
    counts = f"{plural(progress.turns, 'turn')} · {plural(progress.tool_calls, 'tool call')}{last}"
    return f"hz: running {elapsed:.0f}s · {counts}"
