"""procrastinate's LISTEN connection, heard, and listened on anew when deaf.

procrastinate's listener waits on one connection for the notification a new job sends. When
that connection dies cleanly (the server restarted, ``pg_terminate_backend``) procrastinate
connects it again, or its side task fails and ``hz worker`` restarts the worker. A connection
that hangs instead — its server process stopped, a network path that drops packets without a
reset — raises nothing: the listener hears nothing more and jobs start only at the next poll
(1 s), silently. TCP keepalives do not find it (a stopped server process's kernel still answers
them; they are no help on a unix socket). So the connector probes it, inside procrastinate's
public ``listen_notify``: every ``PROBE_EVERY`` seconds it sends a notification of its own on
the channel the listener listens to and expects to hear it. When it does not, it cancels the
listening (its connection closed) and listens on a new connection, without stopping the worker
or the runs it owns.

Any role that may connect may also NOTIFY on procrastinate's channels: what reaches
procrastinate's listener is only what it can take (``admit``); a payload it cannot would fail
the listener, and with it the worker, which then stops taking jobs until its runs have ended.
"""

from __future__ import annotations

import asyncio
import json
import secrets
from collections.abc import Callable, Iterable
from typing import Any

from procrastinate import App, PsycopgConnector
from procrastinate.connector import Notify

from hz.runtime.artifacts.strict_json import JsonError, loads
from hz.runtime.ledger.pg.compat import ABORT_REQUESTED

#: How often a worker checks that its listener hears notifications (seconds), and how long it
#: waits for its own. Keep twice this below procrastinate's LISTEN_TIMEOUT (30 s, after which
#: its listener sends a query of its own): a deaf listener is then cancelled while it waits
#: for notifications, at once, rather than in that query (psycopg waits 5 s for the server).
PROBE_EVERY = 10.0
#: The type of the probe's notification (procrastinate ignores types it does not know).
PROBE_TYPE = "hz_listener_probe"


def admit(payload: str) -> dict[str, Any] | None:
    """The notification ``payload`` holds, or None when procrastinate's listener cannot take
    it: not strict JSON (hz's one reader: a payload nested thousands deep is a RecursionError,
    no ValueError, to Python's json), not an object with a string ``type``, or an abort whose
    ``job_id`` is not an integer (a list fails procrastinate's set of ids, a missing one its
    lookup, and ``true`` equals job 1)."""
    try:
        notification = loads(payload)
    except JsonError:
        return None
    if not isinstance(notification, dict) or not isinstance(notification.get("type"), str):
        return None
    job = notification.get("job_id")
    if notification["type"] == ABORT_REQUESTED and (
        not isinstance(job, int) or isinstance(job, bool)
    ):
        return None
    return notification


class ListeningConnector(PsycopgConnector):
    """procrastinate's connector, whose listener is probed and filtered."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.probe_every = PROBE_EVERY
        self.note: Callable[[str], None] = lambda message: None

    def probing(self, *, every: float, note: Callable[[str], None]) -> None:
        """Probe every ``every`` seconds; ``note`` hears of each listener made anew."""
        self.probe_every = every
        self.note = note

    async def listen_notify(self, on_notification: Notify, channels: Iterable[str]) -> None:
        channels = list(channels)  # procrastinate's channels for the worker's queues
        token = secrets.token_hex(8)
        heard = asyncio.Event()

        async def admitted(*, channel: str, payload: str) -> None:
            notification = admit(payload)
            if notification is None:
                return
            if notification["type"] == PROBE_TYPE:
                if notification.get("token") == token:
                    heard.set()
                return  # another worker's probe
            await on_notification(channel=channel, payload=payload)

        if not channels:
            await super().listen_notify(admitted, channels)
            return
        while True:
            listening = asyncio.create_task(super().listen_notify(admitted, channels))
            probing = asyncio.create_task(self._probe(channels[0], token, heard))
            try:
                done, _ = await asyncio.wait(
                    (listening, probing), return_when=asyncio.FIRST_COMPLETED
                )
            finally:
                listening.cancel()
                probing.cancel()
                await asyncio.gather(listening, probing, return_exceptions=True)
            if listening in done:
                listening.result()  # procrastinate's listener failed: as without a probe
                return
            probing.result()  # the probe failed: the listener fails with it
            self.note(
                "hz: worker: procrastinate's listener heard nothing for "
                f"{self.probe_every:g} s; its connection was cut and is made anew"
            )

    async def _probe(self, channel: str, token: str, heard: asyncio.Event) -> None:
        """Returns once a probe goes unheard."""
        payload = json.dumps({"type": PROBE_TYPE, "token": token})
        while True:
            await asyncio.sleep(self.probe_every)
            heard.clear()
            try:
                await self.execute_query_async(
                    "SELECT pg_notify(%(channel)s, %(payload)s)", channel=channel, payload=payload
                )
            except Exception:  # noqa: S112 -- the database is away: other side tasks say so
                continue
            try:
                await asyncio.wait_for(heard.wait(), timeout=self.probe_every)
            except TimeoutError:
                return


def worker_app(conninfo: str) -> App:
    """The app a worker opens (asyncio only), whose listener is probed."""
    return App(connector=ListeningConnector(conninfo=conninfo))
