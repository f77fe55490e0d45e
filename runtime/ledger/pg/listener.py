"""procrastinate's LISTEN connection, heard and, when deaf, cut.

procrastinate's listener waits on one connection for the notification a new job sends. When
that connection dies cleanly (the server restarted, ``pg_terminate_backend``) procrastinate
connects it again, or its side task fails and ``hz worker`` restarts the worker. A connection
that hangs instead — its server process stopped, a network path that drops packets without a
reset — raises nothing: the listener hears nothing more and jobs start only at the next poll
(1 s), silently. So ``hz worker`` probes it: every ``PROBE_EVERY`` seconds it sends a
notification of its own on the channel its listener listens to and expects to hear it
(``_Worker`` in ``hz.runtime.ledger.pg.worker``). When it does not, it cuts the listener's
connection (the socket shut down under it): the listener's wait wakes with an error and
procrastinate connects it again, without stopping the worker or the runs it owns.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
from collections.abc import AsyncIterator, Iterable
from typing import Any

import psycopg
from procrastinate import App, PsycopgConnector

#: How often a worker checks that its listener hears notifications (seconds), and how long it
#: waits for its own.
PROBE_EVERY = 10.0
#: The type of the probe's notification (procrastinate ignores types it does not know).
PROBE_TYPE = "hz_listener_probe"


class ListeningConnector(PsycopgConnector):
    """procrastinate's connector, keeping the listener's connection within reach."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.listening: set[psycopg.AsyncConnection[Any]] = set()

    @contextlib.asynccontextmanager
    async def _get_standalone_connection(
        self,
    ) -> AsyncIterator[psycopg.AsyncConnection[Any]]:
        # procrastinate 3.10 opens a standalone connection for its listener only.
        async with super()._get_standalone_connection() as connection:
            self.listening.add(connection)
            try:
                yield connection
            finally:
                self.listening.discard(connection)

    async def listen_notify(self, on_notification: Any, channels: Iterable[str]) -> None:
        # Any role that may connect may NOTIFY on procrastinate's channels. A payload that is
        # not a JSON object with a string type would fail procrastinate's listener (and with
        # it the worker, which stops taking jobs until its runs have ended): it is ignored.
        async def heard(*, channel: str, payload: str) -> None:
            try:
                notification = json.loads(payload)
            except ValueError:
                return
            if isinstance(notification, dict) and isinstance(notification.get("type"), str):
                await on_notification(channel=channel, payload=payload)

        await super().listen_notify(heard, channels)

    def cut(self) -> int:
        """Shut down the listener's socket: its wait wakes with an error and procrastinate
        connects anew. (Closing the connection would not wake it: a closed descriptor leaves
        the event loop's selector silently.) How many connections were cut."""
        cut = 0
        for connection in list(self.listening):
            with contextlib.suppress(OSError, psycopg.Error):
                twin = socket.socket(fileno=os.dup(connection.pgconn.socket))
                try:
                    twin.shutdown(socket.SHUT_RDWR)
                    cut += 1
                finally:
                    twin.close()
        return cut


def worker_app(conninfo: str) -> App:
    """The app a worker opens (asyncio only), whose listener can be probed and cut."""
    return App(connector=ListeningConnector(conninfo=conninfo))
