"""A provider plugin's publish target: known to validate once its capability is bound to it,
checked against its argument schema, allowed by [publish] like any target, written once."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.helpers import publish_plugin

CONTRACT = """\
hz:
  contract: 1
  name: standup
  timeout: 10m
  agent: {max_usd: 0.5}
  publishes:
    - to: chat.message
      args: {room: ROOM}
    - to: tracker.create_issue
      args: {repository: acme/app, title: Standup}
contract: |
  Summarise.
prompt: |
  Standup notes.
"""


def _space(tmp_path: Path, room: str = "general") -> dict[str, str]:
    (tmp_path / "standup.yaml").write_text(CONTRACT.replace("ROOM", room))
    config = tmp_path / "config.toml"
    config.write_text(
        '[capabilities]\nagent_runner = "echo"\nchat = "fakechat"\ntracker = "fakechat"\n\n'
        '[publish]\nallow = ["chat.*", "tracker.create_issue"]\nrepositories = ["acme/app"]\n'
    )
    return {"HZ_CONFIG": str(config), "HZ_STATE_DIR": str(tmp_path / "state")}


def test_a_plugins_target_publishes_once(
    cli: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    publish_plugin.register(monkeypatch)
    env = _space(tmp_path)
    checked = cli("validate", "standup.yaml", cwd=tmp_path, env=env)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    done = cli("run", "standup.yaml", cwd=tmp_path, env=env)
    assert done.returncode == 0, done.stderr
    [chat, issue] = publish_plugin.SENT
    assert (chat[0], chat[1], chat[3]) == ("chat.message", "general", "Standup notes.\n")
    assert chat[2].startswith("hz-publish:run_")
    assert chat[2].endswith(":1")
    # hz's own tracker target, through the plugin bound to tracker: no GitHub involved
    assert (issue[0], issue[1]) == ("tracker.create_issue", "acme/app")
    assert done.stderr.endswith(
        ": publish step 1: chat.message: published: chat://general/1\n"
        f"hz: {chat[2].split(':')[1]}: publish step 2: tracker.create_issue: published: "
        "chat://acme/app/2\n"
    )


def test_a_plugins_target_is_checked_and_unknown_without_its_binding(
    cli: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    publish_plugin.register(monkeypatch)
    env = _space(tmp_path, room="Not A Room")
    checked = cli("validate", "standup.yaml", cwd=tmp_path, env=env)
    assert checked.stdout == (
        "standup.yaml:8:20: error: chat.message: args.room: 'Not A Room' does not match "
        "'^[a-z]+$' [HZ421]\n"
    )
    (tmp_path / "config.toml").write_text('[capabilities]\nagent_runner = "echo"\n')
    unbound = cli("validate", "standup.yaml", cwd=tmp_path, env=env)
    assert unbound.stdout.startswith(
        "standup.yaml:7:11: error: unknown publish target 'chat.message' [HZ420]\n"
    )


def test_a_plugin_that_crashes_after_sending_is_found_by_its_marker(
    cli: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    publish_plugin.register(monkeypatch)
    monkeypatch.setitem(publish_plugin.MODE, "crash_after_write", True)
    env = _space(tmp_path)
    done = cli("run", "standup.yaml", cwd=tmp_path, env=env)
    assert done.returncode == 0, done.stderr
    assert len(publish_plugin.SENT) == 2  # each written once, none again
    shown = cli("runs", "show", done.stderr.split("hz: ")[-1].split(":")[0], cwd=tmp_path, env=env)
    assert (
        "  1 chat.message: published: chat://general/1 (provider 'fakechat' failed: "
        "RuntimeError: socket closed; found by its marker)\n"
    ) in shown.stdout
