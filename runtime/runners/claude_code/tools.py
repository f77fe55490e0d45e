"""The tool vocabulary of the pinned claude CLI, without pydantic: ``hz validate`` reads the
default allow-list through ``hz.runtime.runners.registry`` for every contract that names a tool, and
the settings model (``settings``) checks the configured lists against it.
"""

from __future__ import annotations

#: The pinned CLI version the tool vocabulary below was read from (its ``init`` event lists
#: every tool it offers; a real-CLI test records the tools in the request).
TOOLS_VERSION = "2.1.332"
#: Tools of the pinned CLI known to only read local files: the allow-list of ``read_only_tools``.
READ_ONLY_TOOLS: tuple[str, ...] = ("Read", "Grep", "Glob")
DEFAULT_READ_ONLY_TOOLS: tuple[str, ...] = READ_ONLY_TOOLS
#: Tools that reach the network: only through ``network_tools``, and the session is then
#: named widened in the result, the receipt and ``hz run``'s output.
NETWORK_TOOLS: tuple[str, ...] = ("WebFetch", "WebSearch")
#: Tools that start sub-agents. Refused: the CLI lets a sub-agent definition name its own
#: tools, so hz cannot prove a sub-agent is held to the session's allow-list.
DELEGATION_TOOLS = frozenset({"Agent", "Task", "SendMessage", "ListAgents", "TaskStop", "Workflow"})
#: Tools that write, execute or act later or elsewhere: never allowed.
WRITING_TOOLS = frozenset(
    {
        "Bash",
        "CronCreate",
        "CronDelete",
        "CronList",
        "Edit",
        "EnterWorktree",
        "ExitWorktree",
        "KillShell",
        "Monitor",
        "MultiEdit",
        "NotebookEdit",
        "PowerShell",
        "RemoteTrigger",
        "ReportFindings",
        "ScheduleWakeup",
        "Skill",
        "ToolSearch",
        "Write",
    }
)
