"""How one render ended: typed values, and the JSON they cross the child's stdout as."""

from __future__ import annotations

import json
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Rendered:
    prompt: str


@dataclass(frozen=True, slots=True)
class Failed:
    """The template failed: a rule code, the message, and the template line when known."""

    code: str
    message: str
    template_line: int | None = None


@dataclass(frozen=True, slots=True)
class TimedOut:
    """Past the wall clock or the CPU limit: C-level work the line tracer could not stop."""


@dataclass(frozen=True, slots=True)
class OutOfMemory:
    """The render ran out of memory outside its own handling (or the kernel killed it)."""


@dataclass(frozen=True, slots=True)
class Crashed:
    """The render's process ended otherwise: its exit status (negative: the signal), or it
    did not start (``status`` None, and why)."""

    status: int | None
    launch_error: str | None = None


#: The child's exit status when it ran out of memory outside the render's own handling.
EXIT_OUT_OF_MEMORY = 3
#: What the child writes on stdout, before its outcome, once it has read its job and limited
#: itself: from then on how it ends is the render's. A child that ends without it never had
#: the job (the child started early, killed while it waited: decision 0022), so hz starts
#: another rather than blame the template.
TAKEN = b"+"
#: What the render itself decides; it crosses the pipe from the child.
Finished = Rendered | Failed
#: Everything a bounded render can end in.
Outcome = Rendered | Failed | TimedOut | OutOfMemory | Crashed


def finished_json(outcome: Finished) -> str:
    """ASCII JSON (lone surrogates escaped, so any prompt text survives the pipe)."""
    if isinstance(outcome, Rendered):
        return json.dumps({"prompt": outcome.prompt})
    return json.dumps(
        {"code": outcome.code, "message": outcome.message, "line": outcome.template_line}
    )


def finished_from_json(text: bytes) -> Finished:
    """The outcome ``finished_json`` wrote; ``ValueError`` for anything else."""
    data = json.loads(text)
    match data:
        case {"prompt": str(prompt)}:
            return Rendered(prompt)
        case {"code": str(code), "message": str(message), "line": int() | None as line}:
            return Failed(code, message, line)
    raise ValueError("not a render outcome")
