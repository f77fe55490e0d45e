"""``command.run``: the draft on the standard input of an operator's command
(``[publish.commands.NAME] argv``), bounded as any child (timeout, output caps, the process
group stopped), with ``HZ_PUBLISH_MARKER`` and ``HZ_RUN_ID`` in its environment and nothing
else of hz's but ``PATH``, ``HOME`` and ``LANG``. Exit 0: written; another status: not
written (the command's promise); stopped or killed: ``uncertain``.
"""

from __future__ import annotations

import os
from pathlib import Path

from hz.runtime.config.publish import Command
from hz.runtime.ledger.store import Step
from hz.runtime.process.bounded import run_bounded
from hz.runtime.process.limits import Limits
from hz.runtime.publish.draft import Payload
from hz.runtime.publish.targets.base import CannotTell, Refused, Unobserved

_PASSED = ("PATH", "HOME", "LANG")


class CommandPublisher:
    def __init__(self, commands: dict[str, Command], workdir: Path) -> None:
        self.commands = commands
        self.workdir = workdir

    def _command(self, step: Step) -> tuple[str, Command]:
        name = str(step.args.get("command", ""))
        command = self.commands.get(name)
        if command is None:
            raise Refused(f"command.run: no command {name!r} in [publish.commands]")
        return name, command

    def credential(self, step: Step) -> str | None:
        return None

    def longest_seconds(self, step: Step) -> float:
        """Its timeout and the grace before its group is killed (``Limits``)."""
        timeout = self._command(step)[1].timeout_seconds
        limits = Limits(timeout=timeout)
        return timeout + limits.kill_grace + limits.done_grace

    def where(self, step: Step) -> str:
        name, command = self._command(step)
        return f"command {name}: {' '.join(command.argv)}"

    def write(self, step: Step, payload: Payload) -> str:
        name, command = self._command(step)
        env = {key: os.environ[key] for key in _PASSED if key in os.environ}
        env |= {"HZ_PUBLISH_MARKER": step.marker, "HZ_RUN_ID": step.run_id}
        outcome = run_bounded(
            command.argv,
            stdin=payload.text.encode("utf-8"),
            cwd=str(self.workdir),
            env=env,
            limits=Limits(
                timeout=command.timeout_seconds, max_stdout=64 * 1024, max_stderr=64 * 1024
            ),
        )
        if outcome.launch_error is not None:
            raise Refused(f"command {name} could not start: {outcome.launch_error}")
        if outcome.exit_code is None or outcome.timed_out:
            raise Unobserved(f"command {name} was stopped before it finished")
        if outcome.exit_code != 0:
            raise Refused(f"command {name} exited with status {outcome.exit_code}")
        return f"command {name}"

    def lookup(self, step: Step) -> str | None:
        raise CannotTell("a command cannot be asked whether it wrote")
