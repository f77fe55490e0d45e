"""A provider plugin that publishes: capability ``chat`` with its target ``chat.message`` (a
room by name), and hz's own ``tracker`` targets when ``tracker`` is bound to it. What it
writes lands in ``SENT`` (and can be found again by its marker)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar

import pytest

from hz.runtime.artifacts.operations import Operation
from hz.runtime.artifacts.publish_targets import Target
from hz.runtime.providers import registry
from hz.runtime.providers.protocol import ProviderSettings, Readiness

NAME = "fakechat"
#: (target, where, marker, text) of every write.
SENT: list[tuple[str, str, str, str]] = []
#: Set: ``write`` sends, then crashes as a buggy plugin would (the answer lost).
MODE: dict[str, bool] = {"crash_after_write": False}


class ChatSettings(ProviderSettings):
    table = f"providers.{NAME}"

    rooms: tuple[str, ...] = ("general",)


class ChatPublisher:
    def __init__(self, settings: ChatSettings) -> None:
        self.settings = settings

    def credential(self, step: Any) -> str | None:
        return "CHAT_TOKEN"

    def where(self, step: Any) -> str:
        return str(step.args.get("room") or step.args.get("repository"))

    def write(self, step: Any, payload: Any) -> str:
        from hz.runtime.publish.targets.base import Refused

        where = self.where(step)
        if step.target == "chat.message" and where not in self.settings.rooms:
            raise Refused(f"no room {where!r}")
        SENT.append((step.target, where, step.marker, payload.text))
        if MODE["crash_after_write"]:
            raise RuntimeError("socket closed")
        return f"chat://{where}/{len(SENT)}"

    def lookup(self, step: Any) -> str | None:
        found = [i for i, sent in enumerate(SENT, 1) if sent[2] == step.marker]
        return f"chat://{self.where(step)}/{found[0]}" if found else None


class ChatProvider:
    name: ClassVar[str] = NAME
    capabilities: ClassVar[tuple[str, ...]] = ("chat", "tracker")
    settings_model: ClassVar[type[ProviderSettings]] = ChatSettings
    publish_targets: ClassVar[Mapping[str, Target]] = {
        "chat.message": Target(
            "chat.message",
            "a message to a chat room",
            {
                "type": "object",
                "additionalProperties": False,
                "required": ["room"],
                "properties": {"room": {"type": "string", "pattern": "^[a-z]+$"}},
            },
            "text",
            4000,
            True,
        )
    }

    def __init__(self, settings: ChatSettings) -> None:
        self.settings = settings

    def operations(self) -> Mapping[str, Operation]:
        return {}

    def ready(self, *, online: bool = False) -> Readiness:
        return Readiness(True, "rooms " + ", ".join(self.settings.rooms))

    def fetch(self, request: Any) -> Any:
        raise NotImplementedError

    def publisher(self, workdir: Path) -> ChatPublisher:
        return ChatPublisher(self.settings)


def register(monkeypatch: pytest.MonkeyPatch) -> None:
    """Register the chat provider for this test (as an entry point would)."""
    monkeypatch.setitem(registry.CORE, NAME, f"{__name__}:ChatProvider")
    SENT.clear()
    monkeypatch.setitem(MODE, "crash_after_write", False)
