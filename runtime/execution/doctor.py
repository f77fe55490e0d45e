"""``hz doctor``: is this machine ready to run jobs with the configured runner?

Checks each configuration source on its own (so one broken file does not hide the others),
the project's ``hz.toml`` (no execution keys), then the bound runner only: it loads, its
capabilities, a required budget enforcement it cannot give, and the runner's own checks
(settings, executable, version, login); then each bound capability's provider (it loads, its
settings, its credential: ``hz.runtime.providers.status``). Each check is one line; any
``failed`` makes the exit status 1.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from hz.runtime.artifacts.errors import ConfigError, HzError
from hz.runtime.artifacts.printable import printable
from hz.runtime.config.layers import UNSET, LayerState, load_config, read_source, sources
from hz.runtime.config.project import find_project_file, read_project_file
from hz.runtime.execution.execute import check_capabilities
from hz.runtime.runners import registry
from hz.runtime.runners.protocol import Capabilities, Check
from hz.runtime.runners.settings import SharedSettings


def _layer_check(state: LayerState) -> Check:
    name = f"config {state.layer}"
    if state.state == "missing":
        return Check(name, "ok", f"{state.where} (not present)")
    if state.state == "unset":
        return Check(name, "ok", UNSET.get(state.layer, "not set"))
    return Check(name, "ok", state.where or "built in")


def config_checks(environ: Mapping[str, str], cwd: Path) -> list[Check]:
    project = find_project_file(cwd)
    checks: list[Check] = []
    for source in sources(environ, project):
        if source.layer == "default":
            continue
        if source.layer == "project" and project is not None:
            problems = read_project_file(project).problems
            checks += [Check("config project", "failed", str(p)) for p in problems]
            if problems:
                continue
        try:
            _, state = read_source(source, environ)
        except ConfigError as e:
            checks.append(Check(f"config {source.layer}", "failed", e.message))
            continue
        checks.append(_layer_check(state))
    return checks


def runner_checks(environ: Mapping[str, str], cwd: Path) -> list[Check]:
    try:
        config = load_config(environ=environ, cwd=cwd)
    except HzError:
        return []  # already reported per source
    name = config.agent_runner
    try:
        runner_class = registry.resolve(name)
    except ConfigError as e:
        return [Check("runner", "failed", f"{e.message}; {e.hint}" if e.hint else e.message)]
    source = dict(registry.available()).get(name, "core")
    shared = SharedSettings.from_config(config)
    try:
        settings = runner_class.settings_model.from_config(config)
    except ConfigError as e:
        head = _binding_checks(name, source, runner_class.capabilities(None), shared)
        return [*head, Check(f"{name} runner settings", "failed", e.message)]
    checks = _binding_checks(name, source, runner_class.capabilities(settings), shared)
    try:
        return checks + list(runner_class.doctor(settings))
    except HzError as e:
        return [*checks, Check(name, "failed", e.message)]
    except Exception as e:  # a plugin's doctor that crashes is reported, not fatal
        return [*checks, Check(name, "failed", f"its doctor crashed: {type(e).__name__}: {e}")]


def _binding_checks(
    name: str, source: str, capabilities: Capabilities, shared: SharedSettings
) -> list[Check]:
    checks = [
        Check("runner", "ok", f"{name} ({source})"),
        Check("capabilities", "ok", capabilities.describe()),
    ]
    if shared.require_enforced_budget:
        try:
            check_capabilities(name, capabilities, shared)
            checks.append(Check("enforced budget", "ok", "required, and this runner enforces it"))
        except HzError as e:
            checks.append(Check("enforced budget", "failed", e.message))
    return checks


def provider_checks(environ: Mapping[str, str], cwd: Path) -> list[Check]:
    """One line per bound capability: its provider ready, or ``degraded`` saying why not (jobs
    run; only an input read through that capability cannot be fetched). ``hz providers``
    shows the unbound ones and the operations too."""
    from hz.runtime.providers.binding import Bindings
    from hz.runtime.providers.status import statuses

    try:
        config = load_config(environ=environ, cwd=cwd)
    except HzError:
        return []  # already reported per source
    checks = []
    for row in statuses(Bindings.from_config(config)):
        if row.ok is not None:
            detail = f"{row.provider}: {row.detail}"
            name = f"provider {row.capability}"
            checks.append(Check(name, "ok", detail) if row.ok else Check(name, "degraded", detail))
    return checks


def run_doctor(environ: Mapping[str, str] | None = None, cwd: Path | None = None) -> list[Check]:
    env = os.environ if environ is None else environ
    where = Path.cwd() if cwd is None else cwd
    return config_checks(env, where) + runner_checks(env, where) + provider_checks(env, where)


def format_check(check: Check) -> str:
    status = "FAILED" if check.status == "failed" else check.status
    # A detail can quote a program's own output (its --version, its error).
    return f"{status:<9}{printable(check.name)}: {printable(check.detail)}"
