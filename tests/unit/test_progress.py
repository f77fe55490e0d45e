"""Live progress: one line rewritten in place, cleared at the end."""

from __future__ import annotations

import io

from hz.cli.progress import TerminalProgress, line
from hz.runtime.runners.protocol import Progress, ProgressReporter


def test_line() -> None:
    assert line(12.4, Progress(elapsed_seconds=12.4, turns=1, tool_calls=3, last_tool="Read")) == (
        "hz: running 12s · 1 turn · 3 tool calls (last: Read)"
    )
    assert line(0.0, Progress(elapsed_seconds=0, turns=2, tool_calls=1)) == (
        "hz: running 0s · 2 turns · 1 tool call"
    )


def test_events_redraw_and_exit_clears_the_line() -> None:
    stream = io.StringIO()
    with TerminalProgress(stream, interval=3600) as progress:
        progress(Progress(elapsed_seconds=0.0, turns=1, tool_calls=0))
    assert stream.getvalue() == "\r\x1b[Khz: running 0s · 1 turn · 0 tool calls\r\x1b[K"


def test_the_agents_tool_name_cannot_drive_the_terminal() -> None:
    # An OSC 52 sequence would write the user's clipboard; a long name would wrap the line.
    hostile = Progress(elapsed_seconds=0, turns=1, tool_calls=1, last_tool="\x1b]52;c;aGk=\x07Read")
    assert line(3, hostile) == (
        "hz: running 3s · 1 turn · 1 tool call (last: \\x1b]52;c;aGk=\\x07Read)"
    )
    long = Progress(elapsed_seconds=0, turns=1, tool_calls=1, last_tool="m" * 1000)
    assert line(3, long) == f"hz: running 3s · 1 turn · 1 tool call (last: {'m' * 40}…)"


def test_a_reporter_passes_on_only_changed_counts() -> None:
    seen: list[Progress] = []
    report = ProgressReporter(seen.append)
    for turns, calls, last in [(0, 0, None), (1, 0, None), (1, 0, None), (1, 1, "Read")]:
        report(turns, calls, last)
    assert [(p.turns, p.tool_calls, p.last_tool) for p in seen] == [(1, 0, None), (1, 1, "Read")]
    assert all(p.elapsed_seconds >= 0 for p in seen)
    ProgressReporter(None)(1, 1, "Read")  # no sink: nothing to call


def test_a_note_takes_a_line_of_its_own_and_the_progress_line_comes_back() -> None:
    stream = io.StringIO()
    with TerminalProgress(stream, interval=3600) as progress:
        progress(Progress(elapsed_seconds=0.0, turns=1, tool_calls=0))
        progress.note("hz: attempt 2 of 3 after rate_limited: waiting 4.0 s")
        progress(Progress(elapsed_seconds=0.0, turns=1, tool_calls=0))
    assert stream.getvalue() == (
        "\r\x1b[Khz: running 0s · 1 turn · 0 tool calls"
        "\r\x1b[Khz: attempt 2 of 3 after rate_limited: waiting 4.0 s\n"
        "\r\x1b[Khz: running 0s · 1 turn · 0 tool calls\r\x1b[K"
    )
