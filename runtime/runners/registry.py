"""Where runner classes come from: a dict of core runners and the ``hz.runners`` entry points.

Core runners are named by ``"module:Class"`` and imported only when asked for, so a runner
module that fails to import breaks only the runs that bind it. A plugin is any installed
distribution that declares an entry point in the group ``hz.runners``::

    [project.entry-points."hz.runners"]
    my-agent = "my_package.runner:MyAgentRunner"

The entry point's name is the runner's name in ``[capabilities] agent_runner``. A plugin
cannot replace a core runner: the core name wins.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, cast

from hz.runtime.artifacts import plugins
from hz.runtime.artifacts.errors import ConfigError
from hz.runtime.artifacts.suggest import did_you_mean_suffix
from hz.runtime.runners.claude_code import tools as claude_code_tools
from hz.runtime.runners.command import tools as command_tools

if TYPE_CHECKING:
    from importlib.metadata import EntryPoint

    # Only for annotations: the protocol module pulls in pydantic, and the authoring commands
    # read configuration without loading any runner.
    from hz.runtime.runners.protocol import RunnerClass

GROUP = "hz.runners"

#: name -> "module:Class" of the runners that ship with hz.
CORE: dict[str, str] = {
    "claude-code": "hz.runtime.runners.claude_code.runner:ClaudeCodeRunner",
    "command": "hz.runtime.runners.command.runner:CommandRunner",
    "echo": "hz.runtime.runners.echo:EchoRunner",
}

#: The tool names each runner hz ships accepts (its ``accepted_tools``) with its default
#: settings, by the ``"module:Class"`` it is imported from (``CORE`` and hz's own ``hz.runners``
#: entry points); ``None`` for a runner that does not check tool names. Known without importing
#: the runner (which imports pydantic): ``hz validate`` asks for every contract naming a tool.
#: A test holds this to the classes.
DEFAULT_TOOLS: dict[str, tuple[str, ...] | None] = {
    CORE["claude-code"]: claude_code_tools.DEFAULT_READ_ONLY_TOOLS,
    CORE["command"]: command_tools.DEFAULT_READ_ONLY_TOOLS,
    CORE["echo"]: None,
    "hz.runtime.runners.codex.runner:CodexRunner": None,
    "hz.runtime.runners.codex_app_server.runner:CodexAppServerRunner": None,
}


#: The ``[system.runner]`` keys each runner hz ships declares (its settings model's ``keys()``),
#: by the ``"module:Class"`` it is imported from: a configuration file's runner keys are checked
#: against these first, without importing every runner (pydantic, the Claude and Codex runners:
#: ≈ 100 ms of each ``hz run``) or scanning the installed distributions for plugins (≈ 40 ms);
#: only a key none of them declares is looked up among every runner. A test holds this to the
#: classes.
DECLARED_KEYS: dict[str, frozenset[str]] = {
    CORE["claude-code"]: frozenset(
        {
            "allow_api_key_billing",
            "claude_env",
            "claude_executable",
            "claude_max_retries",
            "max_turns",
            "model",
            "network_tools",
            "read_only_tools",
        }
    ),
    CORE["command"]: frozenset(
        {
            "command",
            "command_enforces_read_only",
            "command_env",
            "command_inactivity_timeout",
            "command_json_draft_key",
            "command_output",
            "command_read_only_tools",
            "model",
        }
    ),
    CORE["echo"]: frozenset(
        {"echo_draft", "echo_failure_kind", "echo_retry_after", "echo_status", "model"}
    ),
    "hz.runtime.runners.codex.runner:CodexRunner": frozenset(
        {"codex_config", "codex_env", "codex_executable", "codex_home", "max_turns", "model"}
    ),
    "hz.runtime.runners.codex_app_server.runner:CodexAppServerRunner": frozenset(
        {"codex_config", "codex_env", "codex_executable", "codex_home", "max_turns", "model"}
    ),
}


def declared_key(key: str) -> bool:
    """Whether a runner hz ships declares the ``[system.runner]`` key ``key`` (nothing is
    imported, no plugin is looked for)."""
    return any(key in keys for keys in DECLARED_KEYS.values())


@functools.cache
def _plugins() -> dict[str, EntryPoint]:
    # Scanning every installed distribution's metadata is slow (and importing importlib.metadata
    # takes a while too); the set of installed plugins does not change during one hz process.
    return plugins.scan(GROUP, CORE)


def available() -> list[tuple[str, str]]:
    """Every registered runner as ``(name, source)``: source is ``core`` or the plugin's
    distribution name. Nothing is imported to list them."""
    return plugins.listing(CORE, _plugins())


def target(name: str) -> str | None:
    """The ``"module:Class"`` the runner registered as ``name`` is imported from (``None``
    when no runner has that name). Nothing is imported."""
    if name in CORE:
        return CORE[name]
    point = _plugins().get(name)
    return None if point is None else point.value


def resolve(name: str) -> RunnerClass:
    """The runner class registered as ``name``; ``ConfigError`` when unknown or broken."""
    if name in CORE:
        origin = "core runner"
        loaded = plugins.load_core(CORE[name], f"{origin} '{name}'")
    else:
        point = _plugins().get(name)
        if point is None:
            known = ", ".join(n for n, _ in available())
            raise ConfigError(
                f"unknown runner '{name}'{did_you_mean_suffix(name, [n for n, _ in available()])}",
                hint=f"known runners: {known}",
            )
        origin = f"runner plugin '{name}' from {plugins.distribution(point)}"
        loaded = plugins.load_plugin(point, origin)
    missing = [
        attr
        for attr in ("name", "settings_model", "capabilities", "doctor")
        if not hasattr(loaded, attr)
    ]
    if missing:
        raise ConfigError(f"{origin} is not a runner class: it has no {', '.join(missing)}")
    _check_declarations(origin, loaded)
    return cast("RunnerClass", loaded)


def _check_declarations(origin: str, loaded: object) -> None:
    """The declarations hz reads without running the plugin's code must have the right types,
    or a broken plugin would crash every run (its keys are read for every configuration)."""
    from hz.runtime.runners.settings import RunnerSettings

    model = getattr(loaded, "settings_model", None)
    if not (isinstance(model, type) and issubclass(model, RunnerSettings)):
        raise ConfigError(
            f"{origin} is not a runner class: settings_model is not a "
            "hz.runtime.runners.settings.RunnerSettings subclass"
        )
    if not all(callable(getattr(loaded, attr, None)) for attr in ("capabilities", "doctor")):
        raise ConfigError(
            f"{origin} is not a runner class: capabilities and doctor must be callable"
        )
    if not callable(loaded):
        raise ConfigError(f"{origin} is not a runner class: it cannot be called")


def all_settings_keys() -> tuple[frozenset[str], tuple[str, ...]]:
    """The ``[system.runner]`` keys any loadable runner declares, and the runners that failed
    to load (their keys cannot be known)."""
    keys: set[str] = set()
    broken: list[str] = []
    for name, _ in available():
        try:
            keys |= resolve(name).settings_model.keys()
        except ConfigError:
            broken.append(name)
    return frozenset(keys), tuple(broken)
