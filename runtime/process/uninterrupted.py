"""Cleanup that a second signal cannot stop.

hz turns SIGINT, SIGTERM, SIGHUP and SIGQUIT into exceptions so that a run's processes are
killed and its private files removed on the way out. A further signal raised into that
cleanup (Ctrl-C pressed twice, SIGTERM after SIGINT) would abandon it half done: the agent
left running, the prompt left in /tmp. ``to_the_end`` runs a cleanup step again until it
completes; the step must be idempotent (kill a group, reap a child, remove a tree).
"""

from __future__ import annotations

from collections.abc import Callable

#: More interrupts than any person or supervisor sends; a bound, so a bug cannot spin forever.
_ATTEMPTS = 100


def to_the_end(step: Callable[[], object]) -> None:
    """Run ``step`` to completion, repeating it when an interrupt (a ``BaseException`` that is
    no ``Exception``: KeyboardInterrupt, a signal turned into an exception) cuts it short.
    The interrupt is dropped: the caller is already on its way out because of an earlier one.
    """
    for _ in range(_ATTEMPTS - 1):
        try:
            step()
        except Exception:
            raise
        except BaseException:  # noqa: S112 - a further signal during cleanup
            continue
        return
    step()
