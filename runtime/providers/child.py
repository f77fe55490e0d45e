"""A provider's child process: the chokepoint with the fetch's deadline, its outcome as errors.

``git`` and ``command`` fetch by running a program. Both start it through
``hz.runtime.process.bounded.run_bounded`` (own process group, capped output, the environment
given), within the earlier of their own timeout and the request's deadline, and turn what
went wrong into a ``ProviderError``: a program that does not start (``HZ721``), the timeout
(``HZ726``: the whole group was stopped), a non-zero exit (``HZ722``, with the exit status and
the last lines of stderr, escaped and capped). What the output means is the caller's.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Annotated

from pydantic import Field

from hz.runtime.artifacts.printable import printable
from hz.runtime.process.bounded import Limits, ProcessOutcome, run_bounded
from hz.runtime.providers.protocol import HZ721, HZ722, HZ726, FetchRequest, ProviderError
from hz.runtime.settings.model import Expect

#: The longest timeout a provider's setting takes: an hour.
MAX_TIMEOUT_SECONDS = 3600
#: The largest answer a provider's setting lets in: 1 GiB.
MAX_BYTES_CEILING = 1024 * 1024 * 1024
#: What is kept of a child's stderr, and how much of its end a message shows.
STDERR_BYTES = 64 * 1024
STDERR_LINES = 5
STDERR_CHARS = 600

TimeoutSeconds = Annotated[
    Annotated[int, Field(strict=True, ge=1, le=MAX_TIMEOUT_SECONDS)]
    | Annotated[float, Field(strict=True, gt=0, le=MAX_TIMEOUT_SECONDS, allow_inf_nan=False)],
    Expect(
        f"must be a number of seconds greater than 0 and at most {MAX_TIMEOUT_SECONDS}, "
        "got {value!r}",
        hint="e.g. 60",
    ),
]
MaxBytes = Annotated[
    int,
    Field(strict=True, ge=1, le=MAX_BYTES_CEILING),
    Expect(
        f"must be a number of bytes from 1 to {MAX_BYTES_CEILING}, got {{value!r}}",
        hint="e.g. 4194304 (4 MiB)",
    ),
]


def run(
    argv: Sequence[str],
    *,
    request: FetchRequest,
    stdin: bytes | None,
    env: Mapping[str, str],
    timeout: float,
    max_bytes: int,
    program: str,
) -> ProcessOutcome:
    """Run ``argv`` in the request's working directory; ``ProviderError`` when it did not
    start or timed out. ``program`` names it in messages (``git``, ``the command``). The
    caller reads the exit status and the output (``check_exit``)."""
    left = request.deadline - request.clock()
    budget = min(timeout, left)
    if budget <= 0:
        raise ProviderError(
            HZ726,
            f"no time left to start {program}: the fetch's deadline has passed",
            hint="raise the fetch's timeout",
        )
    limits = Limits(
        timeout=budget, max_stdout=max_bytes, max_stderr=STDERR_BYTES, stop_over_cap=True
    )
    outcome = run_bounded(argv, stdin=stdin, cwd=str(request.workdir), env=env, limits=limits)
    if outcome.launch_error is not None:
        raise ProviderError(
            HZ721,
            f"{program} did not start: {printable(outcome.launch_error)}",
            hint="check the program's name or path in the provider's settings",
        )
    if outcome.cancelled:
        raise ProviderError(HZ726, f"{program} was stopped: hz is stopping")
    if outcome.timed_out and not outcome.stdout_truncated:
        raise ProviderError(
            HZ726,
            f"{program} did not end within {budget:g} seconds; its process group was stopped",
            hint="raise timeout_seconds in the provider's settings, or ask for less",
        )
    return outcome


def check_exit(outcome: ProcessOutcome, program: str) -> None:
    """``HZ722`` unless the program exited with status 0."""
    if outcome.exit_code == 0:
        return
    tail = stderr_tail(outcome.stderr)
    said = f": {tail}" if tail else " (nothing on stderr)"
    ended = outcome.describe_exit()
    if outcome.signal is not None:
        ended = f"was {ended}"
    raise ProviderError(HZ722, f"{program} {ended}{said}")


def stderr_tail(stderr: bytes) -> str:
    """The last ``STDERR_LINES`` non-blank lines of ``stderr``, escaped (a line break shows as
    ``\\n``), at most ``STDERR_CHARS`` characters (the start cut off with ``…``)."""
    text = stderr.decode("utf-8", errors="replace")
    lines = [line.rstrip() for line in text.splitlines() if line.strip()]
    shown = printable("\n".join(lines[-STDERR_LINES:]))
    return shown if len(shown) <= STDERR_CHARS else "…" + shown[-STDERR_CHARS:]
