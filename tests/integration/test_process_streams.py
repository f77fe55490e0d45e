"""Capped capture and line splitting, chunk by chunk (the part of run_bounded without a process)."""

from __future__ import annotations

from hz.runtime.process.streams import StreamCapture


def test_keeps_the_first_bytes_and_flags_the_rest() -> None:
    capture = StreamCapture(cap=5, max_line=100, on_line=None)
    for chunk in (b"abc", b"defg", b"hij"):
        capture.feed(chunk)
    assert (capture.data, capture.truncated) == (b"abcde", True)


def test_exactly_the_cap_is_not_truncated() -> None:
    capture = StreamCapture(cap=3, max_line=100, on_line=None)
    capture.feed(b"abc")
    assert (capture.data, capture.truncated) == (b"abc", False)


def test_lines_split_across_chunks_and_a_last_line_without_newline() -> None:
    lines: list[bytes] = []
    capture = StreamCapture(cap=100, max_line=100, on_line=lines.append)
    for chunk in (b"one\ntw", b"o\n\nthr", b"ee"):
        capture.feed(chunk)
    assert lines == [b"one\n", b"two\n", b"\n"]
    capture.finish()
    assert lines == [b"one\n", b"two\n", b"\n", b"three"]


def test_long_lines_are_cut_and_counted_even_past_the_capture_cap() -> None:
    lines: list[bytes] = []
    capture = StreamCapture(cap=4, max_line=5, on_line=lines.append)
    for chunk in (b"abcdefgh", b"ijk\nshort\nxy", b"z" * 50 + b"\n"):
        capture.feed(chunk)
    assert lines == [b"abcde", b"short", b"xyzzz"]
    assert (capture.long_lines, capture.data) == (3, b"abcd")


def test_a_callback_returning_true_marks_done() -> None:
    capture = StreamCapture(cap=100, max_line=100, on_line=lambda line: line == b"result\n")
    capture.feed(b"event\n")
    assert not capture.done
    capture.feed(b"result\nlater\n")
    assert capture.done
