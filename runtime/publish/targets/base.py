"""What a publisher does: ``write`` one step's payload (with its marker) and, when the answer
of a write was not observed, ``lookup`` the marker at the target.

``write`` returns where the draft now is (a URL, a path), or raises ``Refused`` when the target
answered that nothing was written (a 4xx, a missing credential, a file that exists) or
``Unobserved`` when the write may or may not have happened (a timeout, a 5xx, a connection
lost after the request was sent). ``lookup`` returns the location of the step's marker, None
when the target was searched and holds none, or raises ``CannotTell``.
"""

from __future__ import annotations

from typing import Protocol

from hz.runtime.ledger.store import Step
from hz.runtime.publish.draft import Payload


class Refused(Exception):
    """The target said no: nothing was written."""


class Unobserved(Exception):
    """The write's outcome was not seen: it may have happened."""


class CannotTell(Exception):
    """The target cannot be searched for the marker (or the search failed)."""


class Publisher(Protocol):
    #: The name of the credential a write uses (an environment variable), for ``--staged``.
    def credential(self, step: Step) -> str | None: ...

    def where(self, step: Step) -> str:
        """Where the step writes, for people (``--staged``, messages)."""

    def write(self, step: Step, payload: Payload) -> str: ...

    def lookup(self, step: Step) -> str | None: ...
