"""Capability descriptors: every runner marks every capability, every cited test exists, and
the pre-run gate refuses what ``[system.policy]`` does not allow before anything starts."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from hz.runtime.artifacts.errors import RunnerError
from hz.runtime.artifacts.models import OutputSpec
from hz.runtime.execution.policy import Policy, gate
from hz.runtime.runners import registry
from hz.runtime.runners.capabilities import (
    NAMES,
    Descriptor,
    Mark,
    derived,
    descriptor_of,
    supported,
    unsupported,
)
from hz.runtime.runners.claude_code.runner import ClaudeCodeRunner
from hz.runtime.runners.claude_code.settings import ClaudeSettings
from hz.runtime.runners.command.settings import CommandSettings
from hz.runtime.runners.protocol import Capabilities
from tests.helpers.run_request import run_request

REPO = Path(__file__).resolve().parents[2]
RUNNERS = [name for name, _ in registry.available()]


def descriptors() -> list[Descriptor]:
    found = []
    for name in RUNNERS:
        runner_class = registry.resolve(name)
        found.append(descriptor_of(runner_class, None))
        try:
            settings = runner_class.settings_model.from_table({})
        except Exception:
            continue
        found.append(descriptor_of(runner_class, settings))
    found.append(ClaudeCodeRunner.descriptor(ClaudeSettings.from_table({"max_turns": 3})))
    found.append(
        ClaudeCodeRunner.descriptor(ClaudeSettings.from_table({"network_tools": ["WebFetch"]}))
    )
    command = CommandSettings.from_table(
        {
            "command": ["agent", "{contract_file}", "{tools}", "{max_usd}"],
            "command_enforces_read_only": True,
        }
    )
    found.append(registry.resolve("command").descriptor(command))  # type: ignore[attr-defined]
    return found


def test_every_built_in_runner_publishes_a_descriptor() -> None:
    for name in ("claude-code", "codex", "codex-app-server", "command", "echo"):
        assert hasattr(registry.resolve(name), "descriptor"), name


@pytest.mark.parametrize("descriptor", descriptors(), ids=lambda d: d.runner)
def test_a_descriptor_marks_every_capability(descriptor: Descriptor) -> None:
    assert [name for name, _ in descriptor.marks] == list(NAMES)
    for name, mark in descriptor.marks:
        assert mark.support in ("supported", "unsupported", "unverified"), name
        assert mark.evidence or mark.reason, name


_NODE = re.compile(r"(?P<path>tests/[\w/]+\.py)::(?P<name>\w+)(\[[^\]]*\])?")


@pytest.mark.parametrize("descriptor", descriptors(), ids=lambda d: d.runner)
def test_every_cited_test_exists(descriptor: Descriptor) -> None:
    for name, mark in descriptor.marks:
        for node in mark.evidence:
            match = _NODE.fullmatch(node)
            assert match is not None, f"{name}: {node} is not a test node id"
            source = (REPO / match["path"]).read_text()
            assert re.search(rf"^def {match['name']}\(", source, re.M), f"{name}: {node}"


def test_settings_change_the_marks() -> None:
    plain = ClaudeCodeRunner.descriptor(ClaudeSettings())
    assert (plain.mark("turns").support, plain.mark("network").support) == (
        "unsupported",
        "supported",
    )
    widened = ClaudeCodeRunner.descriptor(
        ClaudeSettings.from_table({"network_tools": ["WebFetch"]})
    )
    assert widened.mark("network") == unsupported(
        "[system.runner] network_tools gives the model WebFetch",
        "tests/integration/test_claude_code_cli.py::"
        "test_network_tools_only_through_network_tools_and_named_widened",
    )
    limited = ClaudeCodeRunner.descriptor(ClaudeSettings.from_table({"max_turns": 2}))
    assert limited.mark("turns").support == "supported"


def test_a_runner_without_a_descriptor_proves_nothing() -> None:
    caps = Capabilities(
        timeout="hard",
        budget="unsupported",
        tools="advisory",
        turns="hard",
        structured_output="hard",
    )
    found = derived("plugin", caps)
    assert found.mark("budget") == Mark(
        "unsupported", (), "the runner says it does not enforce budget"
    )
    assert found.mark("timeout") == Mark(
        "unverified", (), "the runner publishes no capability descriptor; it claims timeout is hard"
    )
    assert found.mark("network") == Mark(
        "unverified", (), "the runner publishes no capability descriptor"
    )


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: Mark("supported"), "a supported capability needs evidence or a reason"),
        (lambda: Mark("unverified"), "an unverified capability needs a reason"),
        (
            lambda: Descriptor.of("x", None, {"timeout": supported(reason="r")}),
            "descriptor of x: missing ['budget', 'tools', 'turns', 'structured_output', "
            "'cancellation', 'network', 'sub_agents', 'file_writes', 'credential_isolation'], "
            "unknown []",
        ),
    ],
)
def test_marks_are_checked(make: Any, message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        make()


def test_the_default_policy_admits_the_default_claude_session(tmp_path: Path) -> None:
    descriptor = ClaudeCodeRunner.descriptor(ClaudeSettings())
    assert gate(descriptor, Policy(), run_request(tmp_path, tools=("Read",))) == ()


def test_the_default_policy_refuses_a_widened_session(tmp_path: Path) -> None:
    descriptor = ClaudeCodeRunner.descriptor(
        ClaudeSettings.from_table({"network_tools": ["WebFetch"]})
    )
    with pytest.raises(RunnerError) as caught:
        gate(descriptor, Policy(), run_request(tmp_path))
    assert caught.value.message == (
        "runner 'claude-code' does not enforce what [system.policy] requires; nothing was "
        "started: network unsupported: [system.runner] network_tools gives the model WebFetch"
    )
    assert caught.value.hint == (
        "bind a runner that enforces it, or change [system.policy] require / allow_unenforced "
        "(docs/security.md)"
    )
    relaxed = Policy(require=("timeout", "file_writes", "sub_agents"))
    assert gate(descriptor, relaxed, run_request(tmp_path)) == ()


def test_an_unenforced_need_is_allowed_by_default_and_named(tmp_path: Path) -> None:
    codex = registry.resolve("codex")
    descriptor = descriptor_of(codex, None)
    schema = OutputSpec(format="json", schema={"type": "object"})
    request = run_request(tmp_path, tools=("Read",), output=schema)
    assert gate(descriptor, Policy(), request) == ("budget", "tools")
    strict = Policy(allow_unenforced=("tools",))
    with pytest.raises(RunnerError) as caught:
        gate(descriptor, strict, request)
    assert caught.value.message == (
        "runner 'codex' does not enforce what [system.policy] requires; nothing was started: "
        "budget unsupported: codex has no spending cap; a reported cost is only recorded"
    )


def test_an_operator_requirement_the_runner_cannot_prove_refuses(tmp_path: Path) -> None:
    descriptor = ClaudeCodeRunner.descriptor(ClaudeSettings())
    policy = Policy(require=("timeout", "credential_isolation"))
    with pytest.raises(RunnerError) as caught:
        gate(descriptor, policy, run_request(tmp_path))
    assert caught.value.message.startswith(
        "runner 'claude-code' does not enforce what [system.policy] requires; nothing was "
        "started: credential_isolation unsupported: Read, Grep and Glob read any file"
    )


def test_bind_puts_every_run_behind_the_gate(tmp_path: Path) -> None:
    """Whatever path runs a bound runner (hz run, the ledger's worker) meets the gate."""
    from hz.runtime.config.layers import Config, Origin, Setting
    from hz.runtime.execution.execute import bind

    values = [
        ("capabilities", "agent_runner", "command"),
        ("system.runner", "command", ["/bin/echo", "{contract_file}"]),
        ("system.runner", "command_enforces_read_only", True),
        ("system.policy", "require", ["timeout", "credential_isolation"]),
    ]
    config = Config(tuple(Setting(t, k, v, Origin("default")) for t, k, v in values), ())
    runner = bind(config)
    for call in (runner.plan, runner.run):
        with pytest.raises(RunnerError) as caught:
            call(run_request(tmp_path))
        assert caught.value.message.startswith(
            "runner 'command' does not enforce what [system.policy] requires; nothing was "
            "started: credential_isolation unverified"
        )
    allowed = Config(tuple(Setting(t, k, v, Origin("default")) for t, k, v in values[:3]), ())
    result = bind(allowed).run(run_request(tmp_path))
    assert (result.status, result.limits_unenforced) == ("completed", ("budget", "tools", "turns"))
