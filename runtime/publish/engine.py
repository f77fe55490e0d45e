"""Each publish of a run is a ledger step, written once.

``publish_run`` makes the steps of a completed run (``pending``), then for each it takes the
step (a new generation and a lease, ``Ledger.take_step``) and:

- a step taken from ``pending`` or ``failed``: records the attempt and the digest of what is
  sent, writes it with its marker, and records ``published`` with the URL or path; a target
  that refuses leaves ``failed`` (nothing written, may be sent again); an answer not observed
  (a timeout, a 5xx) goes on as below;
- an outcome not observed (found ``publishing`` with its writer's lease passed, or just now):
  the marker is looked up at the target. Found: ``published`` with its location. Not found
  and the target was searched: written again once (at most two attempts in all). The target
  cannot be searched or the lookup failed: ``uncertain``, never sent again unless a person
  says so (``hz publish RUN --step N --resend``).

A step held by another live writer is left alone; ``published``, ``skipped`` and
``uncertain`` steps are no-ops, so running the publish again writes nothing twice.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar, cast

from hz.runtime.artifacts.canonical import canonical_json
from hz.runtime.artifacts.errors import HzError
from hz.runtime.artifacts.files import write_atomically
from hz.runtime.artifacts.models import Packet, PublishSpec
from hz.runtime.artifacts.publish_targets import TARGETS, Target
from hz.runtime.config.publish import PublishSettings
from hz.runtime.ledger.sight import HostView, owner_verdict
from hz.runtime.ledger.states import RunState
from hz.runtime.ledger.store import Ledger, Owner, Step, read_packet
from hz.runtime.ledger.store.errors import StaleOwner
from hz.runtime.ledger.store.publishes import (
    FAILED,
    PUBLISHED,
    STEP_LEASE_SECONDS,
    UNCERTAIN,
)
from hz.runtime.providers.github.settings import GitHubSettings
from hz.runtime.publish.draft import DraftRefused, Payload, prepare
from hz.runtime.publish.policy import step_refusal
from hz.runtime.publish.targets.base import CannotTell, Publisher, Refused, Unobserved
from hz.runtime.publish.targets.command import CommandPublisher
from hz.runtime.publish.targets.files import FilesPublisher
from hz.runtime.publish.targets.github import GitHubPublisher
from hz.runtime.publish.targets.webhook import WebhookPublisher

#: Writes of one step at most: the first, and one more after a lookup that found nothing.
MAX_ATTEMPTS = 2
T = TypeVar("T")


@dataclass(frozen=True)
class Publishing:
    """What publishing needs from the operator: the policy, the code host's settings (the
    provider bound to ``code-host``/``tracker``; None when unbound) and hz's environment."""

    settings: PublishSettings
    github: GitHubSettings | None = None
    environ: Mapping[str, str] = field(default_factory=lambda: dict(os.environ))
    lease_seconds: float = STEP_LEASE_SECONDS
    #: The time leases are judged by; None: the ledger's clock.
    now: Callable[[], float] | None = None
    #: Every target a step may name: hz's and those of the operator's bound plugins.
    targets: Mapping[str, Target] = field(default_factory=lambda: TARGETS)
    #: The operator's providers (``Bindings``), for a plugin's target; None: no plugin.
    bindings: Any = None


class NothingToPublish(HzError):
    pass


def publisher_for(target: str, ctx: Publishing, workdir: Path) -> Publisher:
    """The publisher of ``target``, its messages redacted of every secret publishing holds."""
    return _Redacting(_publisher_for(target, ctx, workdir), secrets_of(ctx))


def _publisher_for(target: str, ctx: Publishing, workdir: Path) -> Publisher:
    capability = target.partition(".")[0]
    if target not in TARGETS:
        return _plugin_publisher(target, capability, ctx, workdir)
    if capability in ("code-host", "tracker"):
        name = ctx.bindings.provider_of(capability) if ctx.bindings is not None else None
        if ctx.github is not None and name in (None, "github"):
            return GitHubPublisher(ctx.github, dict(ctx.environ))
        if name is not None and name != "github":  # a plugin serving the capability
            return _plugin_publisher(target, capability, ctx, workdir)
        raise Refused(
            f"{target}: the capability {capability} is bound to no provider "
            f'([capabilities] {capability} = "github")'
        )
    if target == "files.write":
        return FilesPublisher(ctx.settings.folders, workdir, overwrite=ctx.settings.overwrite)
    if target == "webhook.post":
        return WebhookPublisher(dict(ctx.settings.webhooks), dict(ctx.environ))
    return CommandPublisher(dict(ctx.settings.commands), workdir)


def _plugin_publisher(target: str, capability: str, ctx: Publishing, workdir: Path) -> Publisher:
    name = None if ctx.bindings is None else ctx.bindings.provider_of(capability)
    if name is None or target not in ctx.targets:
        raise Refused(f"{target}: no bound provider publishes to it ([capabilities] {capability})")
    try:
        provider = ctx.bindings.bound(name).provider
        made = provider.publisher(workdir)
    except HzError as e:
        raise Refused(f"{target}: provider {name!r}: {e.message}") from e
    except Exception as e:  # a plugin's bug is its own, said; never a crash of hz
        raise Refused(f"{target}: provider {name!r} failed: {type(e).__name__}: {e}") from e
    return _Guarded(cast(Publisher, made), name)


def secrets_of(ctx: Publishing) -> list[str]:
    """The values publishing holds that no message may show: the GitHub token and every
    webhook URL, whatever their variables are named, as written and as a repr or JSON string
    would escape them; longest first."""
    names = [hook.url_env for hook in ctx.settings.webhooks.values()]
    if ctx.github is not None:
        names.append(ctx.github.token_env)
    forms: set[str] = set()
    for name in names:
        value = ctx.environ.get(name, "")
        if len(value.strip()) >= 4:
            forms |= {value, value.strip(), repr(value)[1:-1], json.dumps(value)[1:-1]}
            forms.add(repr(value.encode("utf-8", "replace"))[2:-1])
    return sorted((f for f in forms if len(f) >= 4), key=len, reverse=True)


def redacted(text: str, secrets: list[str]) -> str:
    for secret in secrets:
        text = text.replace(secret, "[redacted]")
    return text


class _Redacting:
    """A publisher whose outcomes' messages never show a secret (``secrets_of``): what a
    target or httpx says can quote what was sent."""

    def __init__(self, inner: Publisher, secrets: list[str]) -> None:
        self._inner = inner
        self._secrets = secrets

    def _call(self, method: str, *args: Any) -> Any:
        try:
            return getattr(self._inner, method)(*args)
        except (Refused, Unobserved, CannotTell) as e:
            raise type(e)(redacted(str(e), self._secrets)) from None

    def check(self, step: Step) -> None:
        if getattr(self._inner, "check", None) is not None:
            self._call("check", step)

    def credential(self, step: Step) -> str | None:
        return cast("str | None", self._call("credential", step))

    def longest_seconds(self, step: Step) -> float:
        longest = getattr(self._inner, "longest_seconds", None)
        return 0.0 if longest is None else float(longest(step))

    def where(self, step: Step) -> str:
        return cast(str, self._call("where", step))

    def write(self, step: Step, payload: Payload) -> str:
        return cast(str, self._call("write", step, payload))

    def lookup(self, step: Step) -> str | None:
        return cast("str | None", self._call("lookup", step))


class _Guarded:
    """A plugin's publisher whose unexpected exceptions are outcomes, never hz's crash: one
    in ``write`` leaves the write unobserved (it may have happened), one in ``lookup`` cannot
    tell, one in ``where`` or ``credential`` refuses."""

    def __init__(self, inner: Publisher, name: str) -> None:
        self._inner = inner
        self._name = name

    def _said(self, e: Exception) -> str:
        return f"provider {self._name!r} failed: {type(e).__name__}: {e}"

    def _guard(self, fail: type[Exception], call: Callable[[], T]) -> T:
        """``call()``; an exception other than the outcomes is ``fail`` saying what it was."""
        try:
            return call()
        except (Refused, Unobserved, CannotTell):
            raise
        except Exception as e:
            raise fail(self._said(e)) from e

    def credential(self, step: Step) -> str | None:
        return self._guard(Refused, lambda: self._inner.credential(step))

    def longest_seconds(self, step: Step) -> float:
        longest = getattr(self._inner, "longest_seconds", None)
        return 0.0 if longest is None else float(longest(step))

    def check(self, step: Step) -> None:
        ready = getattr(self._inner, "check", None)
        if ready is None:
            return
        self._guard(Refused, lambda: ready(step))

    def where(self, step: Step) -> str:
        return self._guard(Refused, lambda: self._inner.where(step))

    def write(self, step: Step, payload: Payload) -> str:
        return self._guard(Unobserved, lambda: self._inner.write(step, payload))

    def lookup(self, step: Step) -> str | None:
        return self._guard(CannotTell, lambda: self._inner.lookup(step))


def _draft(ledger: Ledger, run_id: str) -> tuple[str, Packet, Path]:
    row = ledger.get(run_id)
    packet = read_packet(row)
    draft = (row.result or {}).get("draft")
    if row.state != RunState.COMPLETED or packet is None or not isinstance(draft, str):
        raise NothingToPublish(
            f"run {run_id} has no draft to publish (it is {row.state}): only a completed run "
            "whose draft passed its checks publishes"
        )
    return draft, packet, Path(row.workdir)


def make_steps(ledger: Ledger, run_id: str) -> list[Step]:
    """The run's publish steps (made ``pending`` once, from its packet)."""
    _, packet, _ = _draft(ledger, run_id)
    return ledger.add_steps(run_id, [(p.to, dict(p.args)) for p in packet.publishes])


@dataclass(frozen=True, slots=True)
class Staged:
    step: Step
    where: str
    credential: str | None
    payload: Payload | None
    problem: str | None


def stage(ledger: Ledger, run_id: str, ctx: Publishing, *, only: int | None = None) -> list[Staged]:
    """What ``publish_run`` would write, where, with which credential's name: nothing sent."""
    draft, packet, workdir = _draft(ledger, run_id)
    out: list[Staged] = []
    for step in make_steps(ledger, run_id):
        if only is not None and step.step != only:
            continue
        refused = _policy(ctx, packet.job.name, step, workdir)
        if refused is not None:
            out.append(Staged(step, step.target, None, None, refused))
            continue
        try:
            publisher = publisher_for(step.target, ctx, workdir)
            where = publisher.where(step)
            credential = publisher.credential(step)
            payload = prepare(
                ctx.targets[step.target], step.args, draft, mentions=ctx.settings.mentions
            )
            out.append(Staged(step, where, credential, payload, None))
        except (Refused, DraftRefused) as e:
            out.append(Staged(step, step.target, None, None, str(e)))
    return out


def publish_run(
    ledger: Ledger,
    run_id: str,
    ctx: Publishing,
    *,
    only: int | None = None,
    resend: bool = False,
) -> list[Step]:
    """Publish the run's steps (or step ``only``); the steps as they are afterwards."""
    draft, packet, workdir = _draft(ledger, run_id)
    for step in make_steps(ledger, run_id):
        if only is not None and step.step != only:
            continue
        _publish_step(ledger, step, draft, packet.job.name, workdir, ctx, resend=resend)
    return ledger.steps(run_id)


def _policy(ctx: Publishing, job: str, step: Step, workdir: Path) -> str | None:
    """Why the policy in force refuses ``step`` now (the run was checked by whoever made it:
    maybe another process, another configuration, long ago), or None."""
    spec = PublishSpec(to=step.target, args=step.args)
    why = step_refusal(job, step.step, spec, ctx.settings, workdir=workdir, targets=ctx.targets)
    return None if why is None else f"the [publish] policy in force refuses it: {why}"


def _publish_step(
    ledger: Ledger,
    step: Step,
    draft: str,
    job: str,
    workdir: Path,
    ctx: Publishing,
    *,
    resend: bool,
) -> None:
    now = None if ctx.now is None else ctx.now()
    taken = ledger.take_step(
        step.run_id,
        step.step,
        lease_seconds=ctx.lease_seconds,
        now=now,
        resend=resend,
        owner=Owner.this_process(),
        gone=_writer_gone,
    )
    if taken is None:
        return
    held = taken.step
    try:
        publisher = publisher_for(held.target, ctx, workdir)
        payload = prepare(
            ctx.targets[held.target], held.args, draft, mentions=ctx.settings.mentions
        )
    except (Refused, DraftRefused) as e:
        _settle(ledger, held, FAILED, detail=str(e))
        return
    # A writer that is gone before it recorded an attempt sent nothing: write. One that had
    # recorded one may have sent it: look its marker up first.
    # Every write passes the policy in force first (``_write``); a step refused there ends
    # failed (nothing of it was written) or, sent before with its outcome unknown, uncertain.
    refused = _policy(ctx, job, held, workdir)
    check = _Check(refused, step.state == UNCERTAIN, ctx)
    if taken.unobserved and held.attempts > 0 and not resend:
        _reconcile(ledger, held, publisher, payload, "an earlier write was not observed", check)
        return
    _write(ledger, held, publisher, payload, check)


@dataclass(frozen=True, slots=True)
class _Check:
    """The policy's word on a step, asked once when it was taken: ``refused`` (why) or None;
    ``uncertain``: an earlier write of it may have happened (a ``--resend``); ``ctx``: the
    operator's publishing (its lease and clock)."""

    refused: str | None
    uncertain: bool
    ctx: Publishing


#: What a write's lease holds beyond the longest exchange the target allows.
LEASE_MARGIN_SECONDS = 60.0


def _write_lease(ctx: Publishing, publisher: Publisher, held: Step) -> float:
    """The lease renewed as a write starts: past the longest the write may take (the target's
    timeout), so no other writer takes the step over while it is in flight — a webhook may
    wait 600 s, a command 3600 s, more than the step's usual lease."""
    longest = getattr(publisher, "longest_seconds", None)
    try:
        seconds = float(longest(held)) if longest is not None else 0.0
    except Exception:  # a plugin's: its own bug, the usual lease
        seconds = 0.0
    return max(ctx.lease_seconds, seconds + LEASE_MARGIN_SECONDS)


def _now(ctx: Publishing) -> float | None:
    return None if ctx.now is None else ctx.now()


def _writer_gone(step: Step) -> bool:
    """Whether the process that holds ``step`` is seen gone (on this host, boot and pid
    namespace); elsewhere only its lease can say."""
    found = step.owner or {}
    pid, start = found.get("pid"), found.get("start")
    verdict = owner_verdict(
        found.get("host"),
        found.get("boot"),
        found.get("pidns"),
        pid if isinstance(pid, int) else None,
        start if isinstance(start, int) else None,
        HostView.here(),
    )
    return verdict is True


def _write(
    ledger: Ledger, held: Step, publisher: Publisher, payload: Payload, check: _Check
) -> None:
    if check.refused is not None:
        state = UNCERTAIN if check.uncertain else FAILED
        _settle(ledger, held, state, detail=f"{check.refused}; nothing was sent")
        return
    try:  # a credential or URL that cannot be sent: refused before the attempt is recorded
        ready = getattr(publisher, "check", None)
        if ready is not None:
            ready(held)
    except Refused as e:
        _settle(ledger, held, UNCERTAIN if check.uncertain else FAILED, detail=str(e))
        return
    digest = hashlib.sha256(payload.text.encode("utf-8")).hexdigest()
    try:
        held = ledger.writing(
            held,
            digest,
            lease_seconds=_write_lease(check.ctx, publisher, held),
            now=_now(check.ctx),
        )
    except StaleOwner:
        return
    try:
        location = publisher.write(held, payload)
    except Refused as e:
        _settle(ledger, held, FAILED, detail=str(e))
        return
    except Unobserved as e:
        _reconcile(ledger, held, publisher, payload, str(e), check)
        return
    except Exception as e:  # hz's own bug, said; the write may have happened: looked up
        why = f"the write failed unexpectedly: {type(e).__name__}"
        _reconcile(ledger, held, publisher, payload, why, check)
        return
    _settle(ledger, held, PUBLISHED, location=location, sha256=digest)


def _reconcile(
    ledger: Ledger, held: Step, publisher: Publisher, payload: Payload, why: str, check: _Check
) -> None:
    try:
        location = publisher.lookup(held)
    except CannotTell as e:
        _settle(ledger, held, UNCERTAIN, detail=f"{why}; {e}: not sent again")
        return
    if location is not None:
        _settle(ledger, held, PUBLISHED, location=location, detail=f"{why}; found by its marker")
        return
    if held.attempts >= MAX_ATTEMPTS:
        _settle(
            ledger,
            held,
            UNCERTAIN,
            detail=f"{why}; the marker is not found after {held.attempts} writes: not sent again",
        )
        return
    _write(ledger, held, publisher, payload, _Check(check.refused, False, check.ctx))


def _settle(ledger: Ledger, held: Step, state: str, **values: Any) -> None:
    try:
        done = ledger.settle_step(held, state, **values)
    except StaleOwner:
        return  # another took the step over: its record stands
    if done.state == PUBLISHED:
        record_beside_receipt(ledger, done)


#: ``<receipt stem>.publish-<step>.json``: what a step published, beside the run's receipt.
PUBLISH_RECORD = "{stem}.publish-{step}.json"


def record_beside_receipt(ledger: Ledger, step: Step) -> Path | None:
    """Beside the run's receipt: the step's target, where it went, the marker and the sha256
    of what was sent, bound to the receipt by that file's sha256. None without a receipt (or
    when it cannot be written: the ledger holds the same)."""
    receipt = ledger.get(step.run_id).receipt_path
    if not receipt:
        return None
    path = Path(receipt)
    try:
        receipt_sha256 = hashlib.sha256(path.read_bytes()).hexdigest()
        record = {
            "kind": "publish",
            "format_version": 1,
            "run_id": step.run_id,
            "step": step.step,
            "to": step.target,
            "args": step.args,
            "marker": step.marker,
            "location": step.location,
            "sha256": step.sha256,
            "receipt": path.name,
            "receipt_sha256": receipt_sha256,
        }
        target = path.with_name(PUBLISH_RECORD.format(stem=path.stem, step=step.step))
        write_atomically(target, canonical_json(record) + "\n", durable=True)
    except OSError:
        return None
    return target


def bound_github(config: Any) -> GitHubSettings | None:
    """The GitHub settings when ``code-host`` or ``tracker`` is bound to ``github``
    (``[capabilities]``, ``[providers.github]``, as the providers bind them)."""
    from hz.runtime.providers.binding import Bindings

    bindings = Bindings.from_config(config)
    if "github" not in (bindings.provider_of("code-host"), bindings.provider_of("tracker")):
        return None
    settings = bindings.bound("github").settings
    return settings if isinstance(settings, GitHubSettings) else None


def from_config(config: Any) -> Publishing:
    from hz.runtime.providers.binding import Bindings
    from hz.runtime.publish.plugins import bound_capabilities, declared_targets

    return Publishing(
        PublishSettings.from_config(config),
        bound_github(config),
        targets=declared_targets(bound_capabilities(config)),
        bindings=Bindings.from_config(config),
    )
