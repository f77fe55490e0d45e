"""The model's commands reach no network in the codex runners' read-only sandbox: the real,
pinned ``codex`` runs a command that connects to a listener on 127.0.0.1, and nothing
connects. The evidence behind the ``network`` capability of ``codex`` and
``codex-app-server``."""

from __future__ import annotations

import socket
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from hz.runtime.artifacts.result import AgentResult
from hz.runtime.execution.execute import execute
from hz.runtime.runners.codex.runner import CodexRunner
from hz.runtime.runners.codex.settings import CodexSettings
from hz.runtime.runners.codex_app_server.runner import CodexAppServerRunner
from hz.runtime.runners.codex_app_server.settings import CodexAppServerSettings
from tests.fakes.responses_server import (
    FakeResponses,
    codex_binary,
    function_outputs,
    message,
    shell,
)
from tests.helpers.run_request import run_request

pytestmark = pytest.mark.real_cli


@pytest.fixture
def listener() -> Iterator[socket.socket]:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen(1)
        sock.settimeout(0.2)
        yield sock


def connected(sock: socket.socket) -> bool:
    try:
        sock.accept()[0].close()
    except TimeoutError:
        return False
    return True


def probe(sock: socket.socket) -> str:
    port = sock.getsockname()[1]
    return (
        "python3 -c \"import socket; socket.create_connection(('127.0.0.1', "
        f"{port}), timeout=3); print('CONNECTED')\""
    )


def run(runner_name: str, api: FakeResponses, work: Path) -> AgentResult:
    table = {
        "codex_executable": str(codex_binary()),
        "codex_config": api.provider_config("FAKE_KEY"),
        "codex_env": ["FAKE_KEY"],
        "model": "fake-model",
    }
    request = run_request(work, prompt="Try the network.", contract="Never write files.")
    if runner_name == "codex":
        return execute(CodexRunner(CodexSettings.from_table(table)), request)
    return execute(CodexAppServerRunner(CodexAppServerSettings.from_table(table)), request)


@pytest.mark.parametrize("runner_name", ["codex", "codex-app-server"])
def test_the_models_commands_reach_no_network(
    runner_name: str, listener: socket.socket, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_KEY", f"fake-key-{uuid.uuid4()}")
    with FakeResponses([shell(probe(listener)), message("done")]) as api:
        result = run(runner_name, api, tmp_path)
        outputs = function_outputs(api.requests)
    assert (result.status, result.draft) == ("completed", "done")
    assert not connected(listener)
    assert len(outputs) == 1
    assert "CONNECTED" not in outputs[0]["output"]
    assert "Traceback" in outputs[0]["output"], outputs[0]["output"]
