"""A runner that answers with the results it was given, in order: for the ledger's tests that
need an attempt to end a certain way (rate limited, then completed) without an agent."""

from __future__ import annotations

from hz.runtime.artifacts.result import AgentResult
from hz.runtime.runners.protocol import RunRequest


class Answers:
    name = "scripted"

    def __init__(self, *results: AgentResult) -> None:
        self.results = list(results)

    def run(self, request: RunRequest) -> AgentResult:
        return self.results.pop(0)
