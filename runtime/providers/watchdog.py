"""Holding an HTTP exchange to a deadline, headers included.

httpx's timeouts bound each wait, not the whole: a server (or a proxy) that sends one header
line, or one byte, every few seconds holds a request for ever. A ``Watchdog`` is handed each
new connection's socket by httpcore's ``trace`` extension (``extensions={"trace":
watchdog.trace}``); ``armed(seconds)`` starts a timer that, at the deadline, shuts those
sockets down, which wakes a read blocked on one (closing the socket alone would not). The
exchange then fails with an httpx error, and ``stopped`` says it was the deadline.

Used by the github provider's reads and by the publishers' writes.
"""

from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import Iterator
from typing import Any


class Watchdog:
    def __init__(self) -> None:
        self._sockets: list[socket.socket] = []
        self.stopped = threading.Event()

    def trace(self, event: str, info: dict[str, Any]) -> None:
        """httpcore's ``trace`` extension: each new connection's socket, for ``stop``."""
        if not event.endswith(".complete"):
            return
        stream = info.get("return_value")
        get_extra_info = getattr(stream, "get_extra_info", None)
        sock = get_extra_info("socket") if callable(get_extra_info) else None
        if isinstance(sock, socket.socket):
            self._sockets.append(sock)
        if self.stopped.is_set():
            self.stop()

    def stop(self) -> None:
        """At the deadline: shut every connection down."""
        self.stopped.set()
        for sock in list(self._sockets):
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)

    @contextlib.contextmanager
    def armed(self, seconds: float) -> Iterator[None]:
        """``stop`` in ``seconds`` unless the block has ended."""
        timer = threading.Timer(max(seconds, 0.0), self.stop)
        timer.daemon = True
        timer.start()
        try:
            yield
        finally:
            timer.cancel()
