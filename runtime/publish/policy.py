"""The operator's ``[publish]`` against a packet's publishes, before the session starts: a
contract that would publish where the policy does not allow it is refused then, so no money is
spent on a draft that could not be delivered. The engine asks again for each step at the
moment it writes (``step_refusal``), with the configuration in force then."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from hz.runtime.artifacts.errors import HzError
from hz.runtime.artifacts.models import PublishSpec
from hz.runtime.artifacts.publish_targets import TARGETS, Target
from hz.runtime.config.publish import PublishSettings
from hz.runtime.publish.targets.base import Refused
from hz.runtime.publish.targets.files import check_path
from hz.runtime.publish.targets.webhook import url_problem

HINT = (
    "the operator's configuration decides where drafts may go: [publish] allow, repositories, "
    "folders, jobs, [publish.webhooks.NAME] and [publish.commands.NAME] (docs/publishing.md)"
)


class PublishRefused(HzError):
    """A publish the operator's policy does not allow; nothing was started."""


def refusals(
    job: str,
    publishes: list[PublishSpec],
    settings: PublishSettings,
    *,
    workdir: Path,
    targets: Mapping[str, Target] = TARGETS,
    environ: Mapping[str, str] | None = None,
) -> list[str]:
    """Why each publish cannot be delivered on this machine (empty: all can); ``targets``:
    hz's and the bound plugins'; ``environ``: hz's, whose webhook URLs are checked too (set,
    and a URL a request can be made of)."""
    if not publishes:
        return []
    if not settings.allows_job(job):
        return [_job_refusal(job, settings)]
    out: list[str] = []
    for index, spec in enumerate(publishes, start=1):
        out += spec_refusals(index, spec, settings, workdir=workdir, targets=targets)
        hook = settings.webhooks.get(str(spec.args.get("webhook")))
        if environ is not None and spec.to == "webhook.post" and hook is not None:
            problem = url_problem(environ.get(hook.url_env, ""))
            if problem is not None:
                out.append(
                    f"publish {index} ({spec.to}): {hook.url_env} {problem} (the value is not "
                    "shown)"
                )
    return out


def spec_refusals(
    index: int,
    spec: PublishSpec,
    settings: PublishSettings,
    *,
    workdir: Path,
    targets: Mapping[str, Target] = TARGETS,
) -> list[str]:
    """Why publish ``index`` (``spec``) cannot be delivered (the job aside; empty: it can)."""
    where = f"publish {index} ({spec.to})"
    target = targets.get(spec.to)
    if target is None:
        return [f"{where}: no such target"]
    if not settings.allows_target(spec.to):
        return [f"{where}: the target is not in [publish] allow"]
    out: list[str] = []
    if target.repository_arg is not None:
        repository = str(spec.args.get(target.repository_arg, ""))
        if not settings.allows_repository(repository):
            out.append(f"{where}: the repository {repository!r} is not in [publish] repositories")
    if spec.to == "files.write":
        try:
            check_path(str(spec.args.get("path", "")), settings.folders, workdir)
        except Refused as e:
            out.append(f"{where}: {e}")
        if spec.args.get("overwrite") and not settings.overwrite:
            out.append(f"{where}: overwrite is asked for but [publish] overwrite is off")
    if spec.to == "webhook.post" and spec.args.get("webhook") not in settings.webhooks:
        out.append(f"{where}: no webhook {spec.args.get('webhook')!r} in [publish.webhooks]")
    if spec.to == "command.run" and spec.args.get("command") not in settings.commands:
        out.append(f"{where}: no command {spec.args.get('command')!r} in [publish.commands]")
    return out


def step_refusal(
    job: str,
    index: int,
    spec: PublishSpec,
    settings: PublishSettings,
    *,
    workdir: Path,
    targets: Mapping[str, Target] = TARGETS,
) -> str | None:
    """At write time, with the configuration in force (the run was checked by whoever made
    it, maybe another process with another configuration, maybe long ago): why the policy
    refuses publish ``index`` of job ``job`` now, or None."""
    if not settings.allows_job(job):
        return _job_refusal(job, settings)
    found = spec_refusals(index, spec, settings, workdir=workdir, targets=targets)
    return "; ".join(found) if found else None


def _job_refusal(job: str, settings: PublishSettings) -> str:
    return f"job {job!r} may not publish ([publish] jobs: {', '.join(settings.jobs)})"


def check(
    job: str,
    publishes: list[PublishSpec],
    settings: PublishSettings,
    *,
    workdir: Path,
    targets: Mapping[str, Target] = TARGETS,
    environ: Mapping[str, str] | None = None,
) -> None:
    """``PublishRefused`` naming every publish the policy refuses."""
    found = refusals(job, publishes, settings, workdir=workdir, targets=targets, environ=environ)
    if found:
        raise PublishRefused(
            f"job {job!r} cannot publish as its contract asks, so it was not started: "
            + "; ".join(found),
            hint=HINT,
        )
