"""``hz config show``: the effective configuration, each value with the layer it came from, and
every key the settings models declare that no layer set, with its default."""

from __future__ import annotations

import json
from typing import Any

from hz.runtime.artifacts.errors import ConfigError
from hz.runtime.artifacts.printable import printable
from hz.runtime.config.layers import UNSET, Config, Setting
from hz.runtime.config.tables import model_of
from hz.runtime.settings.keys import CAPABILITIES, PROVIDERS, RUNNER, TABLES

#: Assignments up to this long align their comments; longer ones do not set the column.
_ALIGN_UP_TO = 48


def toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, list | tuple):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        pairs = ", ".join(f"{k} = {toml_value(v)}" for k, v in value.items())
        return "{ " + pairs + " }" if pairs else "{}"
    return str(value)


def tables(config: Config) -> tuple[str, ...]:
    """The tables shown: hz's own, then ``[providers.NAME]`` of every provider a capability is
    bound to or a layer configures, by name."""
    bound = {
        str(s.value) for s in config.settings if s.table == CAPABILITIES and s.key != "agent_runner"
    }
    providers = sorted(bound | config.provider_tables().keys())
    return (*TABLES, *(f"{PROVIDERS}.{name}" for name in providers))


def defaults(config: Config) -> list[tuple[str, str, Any]]:
    """``(table, key, default)`` of every key the settings models declare that no layer set:
    each table's model, for ``[system.runner]`` the shared keys and the bound runner's (its
    own default of a shared key wins; ``None``: unset), and each shown provider's keys (a
    provider that cannot be loaded shows none)."""
    found: dict[tuple[str, str], Any] = {}
    shown = tables(config)
    for table in shown:
        try:
            model = model_of(table)
        except ConfigError:
            continue  # an unknown or broken provider: hz providers says why
        found |= {(table, key): value for key, value in model.defaults().items()}
    try:
        from hz.runtime.runners import registry

        runner = registry.resolve(config.agent_runner).settings_model
    except ConfigError:
        pass  # an unknown or broken runner: its keys are not known, the shared ones are
    else:
        found |= {(RUNNER, key): value for key, value in runner.defaults().items()}
    set_ = {(s.table, s.key) for s in config.settings}
    left = [
        (table, key, value) for (table, key), value in found.items() if (table, key) not in set_
    ]
    return sorted(left, key=lambda entry: shown.index(entry[0]))


def applied_line(job: str, config: Config) -> str:
    """Which jobs table the effective configuration of ``job`` comes from."""
    table = config.applied
    if table is None:
        return f"# job {job}: no jobs table matches; the base tables apply"
    return f"# job {job}: {table.header} applies ({table.settings[0].origin})"


def show_text(config: Config, job: str | None = None) -> str:
    """TOML an operator could copy, with the origin of every value as a comment; with
    ``job``, ``config`` is that job's effective configuration (``Config.for_job``)."""
    lines = ["# sources, lowest precedence first:"]
    for state in config.layers:
        detail = {"loaded": state.where or "built in", "missing": f"{state.where} (not present)"}
        unset = UNSET.get(state.layer, "not set")
        lines.append(f"#   {state.layer:<12} {detail.get(state.state, unset)}")
    if job is not None:
        lines.append(applied_line(job, config))
    not_set = defaults(config)
    for table in tables(config):
        settings = [s for s in config.settings if s.table == table]
        lines += ["", f"[{table}]"]
        lines += _assignments(settings)
        # The keys no layer set, from the settings models, commented out with their defaults.
        left = [(key, value) for t, key, value in not_set if t == table]
        if left:
            lines += [""] if settings else []
            lines += ["# not set:"]
            lines += [
                f"# {key} is unset" if value is None else f"# {key} = {toml_value(value)}"
                for key, value in left
            ]
    for jobs in config.jobs:
        lines += ["", jobs.header, *_assignments(list(jobs.settings))]
    # Paths (HZ_CONFIG, the project's hz.toml), keys and characters JSON leaves as they are
    # (U+2028, bidirectional overrides) come from outside: one line each, escaped.
    return "\n".join(printable(line) for line in lines) + "\n"


def _assignments(settings: list[Setting]) -> list[str]:
    lengths = [len(f"{s.key} = {toml_value(s.value)}") for s in settings]
    # Comments line up after the short assignments; a long one (a command line) keeps its
    # comment two spaces after it instead of pushing every other comment out.
    width = max([n for n in lengths if n <= _ALIGN_UP_TO] or [0])
    return [f"{f'{s.key} = {toml_value(s.value)}':<{width}}  # {s.origin}" for s in settings]


def _setting_json(s: Setting) -> dict[str, Any]:
    return {
        "table": s.table,
        "key": s.key,
        "value": s.value,
        "layer": s.origin.layer,
        "where": s.origin.where or None,
    }


def show_json(config: Config, job: str | None = None) -> dict[str, Any]:
    applied = config.applied
    extra: dict[str, Any] = {}
    if job is not None:
        extra["job"] = {"name": job, "jobs_table": None if applied is None else applied.pattern}
    return {
        **extra,
        "settings": [_setting_json(s) for s in config.settings],
        "defaults": [
            {"table": table, "key": key, "value": value} for table, key, value in defaults(config)
        ],
        "sources": [
            {"layer": st.layer, "where": st.where or None, "state": st.state}
            for st in config.layers
        ],
        "jobs": [
            {"name": t.pattern, "settings": [_setting_json(s) for s in t.settings]}
            for t in config.jobs
        ],
    }
