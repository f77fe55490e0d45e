"""``hz doctor`` for the app-server runner: the ``codex`` checks (found, at least the pinned
version), and whether the binary's protocol is the pinned one (``generate-json-schema``)."""

from __future__ import annotations

import tempfile
from pathlib import Path

from hz.runtime.process.environment import child_environment
from hz.runtime.runners.codex.argv import private_codex_home
from hz.runtime.runners.codex.doctor import checks as codex_checks
from hz.runtime.runners.codex.settings import CodexSettings
from hz.runtime.runners.codex_app_server.protocol import MANIFEST, VERSION, manifest_of, pinned_text
from hz.runtime.runners.executables import PROBE_SECONDS, probe
from hz.runtime.runners.protocol import Check

NAME = "codex app-server protocol"


def protocol_check(executable: str, settings: CodexSettings) -> Check:
    with private_codex_home() as home, tempfile.TemporaryDirectory(prefix="hz-proto-") as out:
        env = child_environment(passthrough=settings.env, extra={"CODEX_HOME": str(home)})
        args = ["app-server", "generate-json-schema", "--out", out]
        outcome = probe(executable, args, env, cwd=str(home))
        if not outcome.ok:
            timed_out = f"did not answer within {PROBE_SECONDS:g} s"
            why = timed_out if outcome.timed_out else outcome.describe_exit()
            return Check(NAME, "failed", f"generate-json-schema {why}")
        drifted = manifest_of(Path(out)) != pinned_text(MANIFEST)
    if drifted:
        return Check(
            NAME,
            "failed",
            f"differs from the protocol of {VERSION} hz was written for; install codex {VERSION}",
        )
    return Check(NAME, "ok", f"as pinned ({VERSION})")


def checks(settings: CodexSettings) -> list[Check]:
    found = codex_checks(settings)
    if found[0].status != "ok":
        return found
    return [*found, protocol_check(found[0].detail, settings)]
