"""The one exception tree for expected user errors. Anything else escaping is a bug.

- ``HzError``: base; the CLI prints ``hz: error: <message>`` (and the hint) and exits with
  ``exit_code`` (2 unless a subclass says otherwise). Never a traceback.
- ``FormatError``: a job, packet, result or inputs file that cannot be read, is of an unknown
  format version, or fails its schema.
- ``ConfigError``: the configuration is invalid (bad TOML, unknown key, a project file trying
  to configure execution, an unknown runner name).
- ``RunnerError``: a runner is misconfigured and refuses to start (the only thing a runner may
  raise; everything that happens once a process runs is an ``AgentResult``).
"""

from __future__ import annotations


class HzError(Exception):
    exit_code = 2

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint


class FormatError(HzError):
    pass


class ConfigError(HzError):
    pass


class RunnerError(HzError):
    pass
