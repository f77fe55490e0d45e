"""What reaches procrastinate's listener (``hz.runtime.ledger.pg.listener.admit``): only what it
can take. Any role that may connect may NOTIFY on its channels; a payload it cannot take would
fail the listener and stop the worker (tests/integration/test_pg_worker_upkeep.py sends them to
a real worker)."""

from __future__ import annotations

from typing import Any

import pytest
from procrastinate.connector import LISTEN_TIMEOUT

from hz.runtime.ledger.pg.listener import PROBE_EVERY, admit


@pytest.mark.parametrize(
    ("payload", "admitted"),
    [
        ("not json", None),
        ("[" * 7000, None),  # Python's json: a RecursionError, no ValueError
        ('{"type": "job_inserted", "job_id": NaN}', None),
        ("[]", None),
        ('"x"', None),
        ("{}", None),
        ('{"type": 5}', None),
        ('{"type": "abort_job_requested"}', None),
        ('{"type": "abort_job_requested", "job_id": "1"}', None),
        ('{"type": "abort_job_requested", "job_id": [1]}', None),
        ('{"type": "abort_job_requested", "job_id": true}', None),
        ('{"type": "abort_job_requested", "job_id": 1.0}', None),
        (
            '{"type": "abort_job_requested", "job_id": 7}',
            {"type": "abort_job_requested", "job_id": 7},
        ),
        ('{"type": "job_inserted", "job_id": 7}', {"type": "job_inserted", "job_id": 7}),
        ('{"type": "job_inserted"}', {"type": "job_inserted"}),  # procrastinate reads no id
        (
            '{"type": "hz_listener_probe", "token": "guess"}',
            {"type": "hz_listener_probe", "token": "guess"},
        ),
    ],
)
def test_only_what_procrastinate_can_take_reaches_its_listener(
    payload: str, admitted: dict[str, Any] | None
) -> None:
    assert admit(payload) == admitted


def test_a_deaf_listener_is_found_before_procrastinate_queries_it() -> None:
    # Two probe periods without hearing its own: cancelled while it waits for notifications,
    # not in the SELECT 1 procrastinate sends after LISTEN_TIMEOUT of silence.
    assert 2 * PROBE_EVERY < LISTEN_TIMEOUT
