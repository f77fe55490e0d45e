"""Capped capture of one output stream, with optional line splitting for a callback."""

from __future__ import annotations

from collections.abc import Callable

LineCallback = Callable[[bytes], "bool | None"]


class StreamCapture:
    """Keeps the first ``cap`` bytes of a stream and counts the rest without storing it.

    With a callback, complete lines (``\\n`` included) are handed over as they arrive; a line
    longer than ``max_line`` is handed over cut at ``max_line`` bytes once its end arrives,
    and the bytes in between are dropped, so memory stays bounded whatever the child writes.
    """

    def __init__(self, cap: int, max_line: int, on_line: LineCallback | None) -> None:
        self._cap = cap
        self._max_line = max_line
        self._on_line = on_line
        self._kept = bytearray()
        self._pending = bytearray()
        self._cutting = False
        self.truncated = False
        self.long_lines = 0
        self.done = False

    @property
    def data(self) -> bytes:
        return bytes(self._kept)

    def feed(self, chunk: bytes) -> None:
        room = self._cap - len(self._kept)
        if room > 0:
            self._kept += chunk[:room]
        if len(chunk) > room:
            self.truncated = True
        if self._on_line is not None:
            self._split(chunk)

    def finish(self) -> None:
        """End of stream: a last line without ``\\n`` is still a line."""
        if self._on_line is not None and (self._pending or self._cutting):
            self._emit()

    def _split(self, chunk: bytes) -> None:
        start = 0
        while True:
            end = chunk.find(b"\n", start)
            piece = chunk[start:] if end < 0 else chunk[start : end + 1]
            room = self._max_line - len(self._pending)
            if len(piece) > room:
                self._pending += piece[: max(room, 0)]
                self._cutting = True
            else:
                self._pending += piece
            if end < 0:
                return
            self._emit()
            start = end + 1

    def _emit(self) -> None:
        line = bytes(self._pending)
        if self._cutting:
            self.long_lines += 1
        self._pending.clear()
        self._cutting = False
        # Called only with a callback (``feed``, ``finish``).
        if self._on_line is not None and self._on_line(line) is True:
            self.done = True
