"""What every runner class sets up the same way, for hz's runners and a plugin's alike.

A runner class is built from its validated settings (``RunnerClass``); ``SettingsRunner``
keeps them as ``self.settings``, and names the limits of a run that the runner's capabilities
with those settings do not enforce (``unenforced``: what a result and a dry run report).
"""

from __future__ import annotations

from typing import Generic, TypeVar

from hz.runtime.runners.protocol import Capabilities, RunRequest, applied_limits
from hz.runtime.runners.settings import RunnerSettings

S = TypeVar("S", bound=RunnerSettings)


class SettingsRunner(Generic[S]):
    def __init__(self, settings: S) -> None:
        self.settings = settings

    @classmethod
    def capabilities(cls, settings: S | None) -> Capabilities:
        raise NotImplementedError

    def unenforced(self, request: RunRequest) -> tuple[str, ...]:
        """Of the limits that applied to this request, those the runner does not enforce."""
        max_turns = getattr(self.settings, "max_turns", None)
        return self.capabilities(self.settings).unenforced(*applied_limits(request, max_turns))
