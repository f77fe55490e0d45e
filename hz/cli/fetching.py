"""Fetching a job's ``read`` inputs for a render: the runtime's fetch composed for the compiler.

The compiler renders and never imports a provider; the runtime fetches and never imports the
compiler. ``job_fetch`` joins them for ``hz render --fetch``, ``hz run`` and ``hz submit``:
the operator's bindings, the working directory, the time windows resolve at, and the run
ledger's last successes (opened only when an input's window is ``since-last-success``).
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

if TYPE_CHECKING:
    from collections.abc import Iterator, Mapping

    from hz.compiler.inputs.values import Fetched
    from hz.compiler.render.packet import JobFetch
    from hz.runtime.artifacts.operations import Operation
    from hz.runtime.artifacts.publish_targets import Target


class UtcTime(click.ParamType[datetime]):
    """``--at``: an ISO 8601 time with its offset (``2026-05-01T09:00:00Z``), as UTC."""

    name = "timestamp"

    def convert(
        self, value: object, param: click.Parameter | None, ctx: click.Context | None
    ) -> datetime:
        if isinstance(value, datetime):
            return value
        from hz.runtime.artifacts.printable import printable

        text = str(value)
        try:
            moment = datetime.fromisoformat(text)
        except ValueError:
            self.fail(
                f"{printable(repr(text[:64]))} is not a time: write one such as "
                "2026-05-01T09:00:00Z",
                param,
                ctx,
            )
        if moment.tzinfo is None:
            self.fail(
                f"{printable(repr(text[:64]))} has no offset: add Z (UTC) or +HH:MM",
                param,
                ctx,
            )
        from hz.runtime.providers.fetch import EARLIEST, LATEST

        try:
            utc = moment.astimezone(UTC)
        except OverflowError:  # 0001-01-01T00:00:00+01:00 is before year 1 in UTC
            utc = None
        if utc is None or not EARLIEST <= utc <= LATEST:
            self.fail(
                f"{printable(repr(text[:64]))} is not between 1970-01-01T00:00:00Z and "
                "9999-12-31T23:59:59Z",
                param,
                ctx,
            )
        return utc


AT = UtcTime()


def read_operations(config: Any) -> Mapping[str, Operation]:
    """What a contract's ``read`` may name on this machine: hz's catalog, and the operations
    the operator's bound providers declare outside it (its ``command`` operations, a plugin's),
    each with its argument schema, for validate, compile and render.

    A provider is made only when it could declare such an operation: ``files``, ``git`` and
    ``github`` serve catalog operations only (``registry.CATALOG_ONLY``), and ``command`` those
    of its ``operations`` table. So a configuration that declares none imports no provider
    (nor pydantic): validating stays as fast as without providers. A provider that cannot be
    made declares nothing here; fetching through it says why (and ``hz providers``)."""
    from hz.runtime.artifacts.operations import CATALOG
    from hz.runtime.providers.registry import CATALOG_ONLY
    from hz.runtime.settings.keys import CAPABILITIES

    if config is None:
        return CATALOG
    bound = {
        str(value)
        for key, value in config.table(CAPABILITIES).items()
        if key != "agent_runner" and value is not None
    }
    command = config.provider_tables().get("command", {})
    declaring = bound - CATALOG_ONLY - ({"command"} if not command.get("operations") else set())
    if not declaring:
        return CATALOG
    from hz.runtime.providers.binding import Bindings

    return Bindings.from_config(config).operations()


def publish_targets(config: Any) -> Mapping[str, Target]:
    """What a contract's ``publishes`` may name on this machine: hz's targets, and those the
    operator's bound plugin providers declare. Only a capability bound to a provider that is
    not hz's own loads anything: validating stays as light as without publishing."""
    from hz.runtime.artifacts.publish_targets import TARGETS
    from hz.runtime.settings.keys import CAPABILITIES

    if config is None:
        return TARGETS
    bound = {
        str(key): str(value)
        for key, value in config.table(CAPABILITIES).items()
        if key != "agent_runner" and value is not None
    }
    if all(name in _BUILT_IN_PROVIDERS for name in bound.values()):
        return TARGETS
    from hz.runtime.publish.plugins import declared_targets

    return declared_targets(bound)


#: hz's own providers: they declare no publish target of their own (``publish.plugins``).
_BUILT_IN_PROVIDERS = frozenset({"files", "git", "github", "command"})


def job_fetch(
    config: Any,
    workdir: Path,
    *,
    where: str,
    at: datetime | None = None,
    ledger: Any | None = None,
    pinned: Mapping[str, str] | None = None,
) -> JobFetch:
    """The fetch of a job's read inputs on this machine, for the compiler's render; problems
    are reported at ``where`` (the contract or job rendered). ``since-last-success`` reads
    ``ledger`` when given (the worker's own, which it closes); otherwise a ledger opened on
    first need, closed with the command. An input reading a job of ``pinned`` (job -> run: a
    follower's upstream run) reads that run's draft, not the newest."""
    from hz.runtime.artifacts.models import Job
    from hz.runtime.providers.binding import Bindings
    from hz.runtime.providers.fetch import FetchContext, fetch_inputs

    bindings = Bindings.from_config(config)
    ledgers: list[Any] = [] if ledger is None else [ledger]

    def last_success(job: str, name: str) -> Iterator[tuple[str, str]]:
        open_ledger_once()
        yield from ledgers[0].window_ends(job, name)

    def open_ledger_once() -> None:
        if not ledgers:
            from hz.runtime.ledger.session import open_ledger

            ledger, _ = open_ledger(config, reconciled=False)
            ledgers.append(ledger)
            context = click.get_current_context(silent=True)
            if context is not None:
                context.call_on_close(ledger.close)

    def fetch(job: Job, given: frozenset[str]) -> Fetched:
        # Imported only when a job is rendered: running a packet never loads the compiler.
        from hz.compiler.inputs.values import Fetched

        context = FetchContext(
            bindings, workdir.absolute(), at=at, last_success=last_success, where=where
        )
        found = fetch_inputs(job, context, given=given)
        values, sources = dict(found.values), dict(found.sources)
        problems = list(found.problems)
        warnings = list(found.warnings)
        for name, spec in job.inputs.items():
            if spec.upstream is not None and name not in given:
                problem = _upstream(name, spec, values, sources, warnings)
                if problem is not None:
                    problems.append(problem)
        return Fetched(values, sources, tuple(problems), tuple(warnings))

    def _upstream(
        name: str,
        spec: Any,
        values: dict[str, Any],
        sources: dict[str, Any],
        warnings: list[Any],
    ) -> Any:
        """The draft an input reads from another job's newest completed run, into ``values``
        and ``sources``; the problem (HZ730) when there is none to read or it does not fit."""
        from hz.compiler.diagnostics import Diagnostic
        from hz.compiler.rules.registry import HZ730, HZ731
        from hz.runtime.artifacts.canonical import digest_of
        from hz.runtime.artifacts.models import InputSource
        from hz.runtime.jsonschema import errors
        from hz.runtime.ledger.schedules import NoDraft, upstream_draft

        upstream = spec.upstream
        open_ledger_once()
        moment = at if at is not None else datetime.now(UTC)
        prefix = f"input {name!r}: contract:{upstream.job}"
        run_id = (pinned or {}).get(upstream.job)
        try:
            draft = upstream_draft(
                ledgers[0], upstream.job, upstream.max_age_seconds, moment, run_id
            )
        except NoDraft as e:
            return Diagnostic(HZ730, f"{prefix}: {e.message}", where, hint=e.hint)
        for passed in draft.passed_over:
            warnings.append(
                Diagnostic(
                    HZ731,
                    f"{prefix}: {passed}; read run {draft.run_id}'s draft instead",
                    where,
                    hint="hz runs show RUN shows the run passed over",
                )
            )
        wrong = errors(spec.schema_, draft.value)
        if wrong:
            message = f"{prefix}: the draft of run {draft.run_id} fails the input's schema: "
            return Diagnostic(HZ730, message + wrong[0].message[:200], where)
        values[name] = draft.value
        sources[name] = InputSource(
            provider="ledger",
            job=upstream.job,
            run=draft.run_id,
            fetched_at=moment.strftime("%Y-%m-%dT%H:%M:%SZ"),
            sha256=digest_of(draft.value),
        )
        return None

    return fetch
