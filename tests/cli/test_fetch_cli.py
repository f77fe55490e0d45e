"""``hz render --fetch``, ``hz run`` and ``hz providers`` with inputs read through providers:
the packet's sources, an --input in place of a fetch, since-last-success from a real ledger,
the planted-secret rule, and exact output."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hz.runtime.artifacts.canonical import canonical_json, digest_of
from tests.conftest import Cli, default_receipt_dir
from tests.helpers import providers
from tests.helpers.providers import NAME, job_reading, merged

REPO = Path(__file__).resolve().parents[2]
AGENT = str(REPO / "tests" / "fakes" / "agent.py")
SECRET = "planted-secret-7f3a"
TEMPLATE = (
    "{% for n in inputs.notes %}{{ n.path }}: {{ n.text }}{% endfor %}{{ inputs.merged | tojson }}"
)
NOTES = {"read": {"operation": "files.glob", "args": {"pattern": "docs/notes/*.md"}}}


@pytest.fixture(autouse=True)
def fake_host(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    providers.register(monkeypatch)
    monkeypatch.setenv("FAKEHOST_TOKEN", SECRET)
    yield
    providers.RELEASE.set()


def workspace(tmp_path: Path, window: str = "7d", runner: str = "echo") -> dict[str, str]:
    """A working directory with notes, a job reading them and the fake host's merged pull
    requests, and an operator file binding code-host to the fake host."""
    (tmp_path / "docs" / "notes").mkdir(parents=True)
    (tmp_path / "docs" / "notes" / "b.md").write_text("second\n")
    (tmp_path / "docs" / "notes" / "a.md").write_text("first\n")
    job = job_reading({"notes": NOTES, "merged": merged(window)}, TEMPLATE)
    (tmp_path / "digest.job.json").write_text(canonical_json(job.to_json_data()))
    (tmp_path / "operator.toml").write_text(
        f'[capabilities]\nagent_runner = "{runner}"\ncode-host = "{NAME}"\n'
        f'[providers.{NAME}]\ntoken_env = "FAKEHOST_TOKEN"\n'
    )
    return {"HZ_CONFIG": str(tmp_path / "operator.toml")}


def test_render_fetch_records_every_source(cli: Cli, tmp_path: Path) -> None:
    env = workspace(tmp_path)
    done = cli(
        "render",
        "digest.job.json",
        "--fetch",
        "--at",
        "2026-05-01T11:30:00+02:00",
        cwd=tmp_path,
        env=env,
    )
    assert (done.returncode, done.stderr) == (0, "")
    packet = json.loads(done.stdout)
    notes = [
        {"path": "docs/notes/a.md", "text": "first\n"},
        {"path": "docs/notes/b.md", "text": "second\n"},
    ]
    assert packet["inputs"]["notes"] == notes
    fetched_at = packet["sources"]["notes"]["fetched_at"]
    assert packet["sources"] == {
        "merged": {
            "provider": NAME,
            "operation": "code-host.merged_pull_requests",
            "args": {"repository": "acme/app"},
            "window": {
                "spec": "7d",
                "since": "2026-04-24T09:30:00Z",
                "until": "2026-05-01T09:30:00Z",
            },
            "fetched_at": packet["sources"]["merged"]["fetched_at"],
            "sha256": digest_of(packet["inputs"]["merged"]),
        },
        "notes": {
            "provider": "files",
            "operation": "files.glob",
            "args": {"pattern": "docs/notes/*.md"},
            "fetched_at": fetched_at,
            "sha256": digest_of(notes),
        },
    }
    assert packet["prompt"].startswith("docs/notes/a.md: first\ndocs/notes/b.md: second\n[")
    assert SECRET not in done.stdout


def test_an_input_given_by_hand_is_recorded_as_given(cli: Cli, tmp_path: Path) -> None:
    env = workspace(tmp_path)
    done = cli(
        "render", "digest.job.json", "--fetch", "--input", "merged=[]", cwd=tmp_path, env=env
    )
    assert (done.returncode, done.stderr) == (0, "")
    packet = json.loads(done.stdout)
    assert packet["sources"]["merged"] == {"given": True, "sha256": digest_of([])}
    assert packet["sources"]["notes"]["provider"] == "files"


def test_render_without_fetch_says_how_to_give_a_read_input(cli: Cli, tmp_path: Path) -> None:
    env = workspace(tmp_path)
    done = cli("render", "digest.job.json", "--input", "merged=[]", cwd=tmp_path, env=env)
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == (
        "digest.job.json:0:0: error: input 'notes' is read through files.glob, and nothing "
        "fetched it [HZ711]\n"
        "  hint: pass --fetch to fetch it, or give it by hand with --input notes=…\n"
        "Found 1 error in 1 file (checked 1 file)\n"
    )


def test_a_failed_fetch_writes_no_packet(cli: Cli, tmp_path: Path) -> None:
    env = workspace(tmp_path)
    (tmp_path / "docs" / "notes" / "c.md").symlink_to("/etc/passwd")
    done = cli("render", "digest.job.json", "--fetch", "-o", "p.json", cwd=tmp_path, env=env)
    assert done.returncode == 1
    assert done.stderr == (
        "digest.job.json:0:0: error: input 'notes': files.glob (files): 'docs/notes/c.md' "
        "cannot be read: a symbolic link that leads out of the working directory (to "
        "'/etc/passwd') [HZ727]\n"
        "  hint: the files provider reads regular files under the working directory only, "
        "never in .git nor a name [providers.files] deny matches\n"
        "Found 1 error in 1 file (checked 1 file)\n"
    )
    assert not (tmp_path / "p.json").exists()


def test_at_needs_fetch_and_an_offset(cli: Cli, tmp_path: Path) -> None:
    env = workspace(tmp_path)
    done = cli("render", "digest.job.json", "--at", "2026-05-01T09:00:00Z", cwd=tmp_path, env=env)
    assert (done.returncode, done.stderr.splitlines()[-1]) == (
        2,
        "Error: --at resolves the windows of fetched inputs: give --fetch too",
    )
    done = cli(
        "render", "digest.job.json", "--fetch", "--at", "2026-05-01T09:00", cwd=tmp_path, env=env
    )
    assert (done.returncode, done.stderr.splitlines()[-1]) == (
        2,
        "Error: Invalid value for '--at': '2026-05-01T09:00' has no offset: add Z (UTC) or +HH:MM",
    )


def test_since_last_success_starts_at_the_last_completed_runs_window(
    cli: Cli, tmp_path: Path
) -> None:
    env = workspace(tmp_path, "since-last-success")
    first = cli("run", "digest.job.json", "--format", "json", cwd=tmp_path, env=env)
    assert first.returncode == 0, first.stderr
    receipt = json.loads(sorted(default_receipt_dir().glob("*-digest.json"))[-1].read_text())
    done = cli(
        "render",
        "digest.job.json",
        "--fetch",
        "--at",
        "2099-01-01T00:00:00Z",
        cwd=tmp_path,
        env=env,
    )
    assert done.returncode == 0, done.stderr
    window = json.loads(done.stdout)["sources"]["merged"]["window"]
    # The first run had no run before it: the fallback, recorded as such.
    from hz.runtime.config.layers import load_config
    from hz.runtime.ledger.session import open_ledger

    ledger, _ = open_ledger(load_config(environ=env), reconciled=False)
    try:
        [row] = ledger.select()
        first_sources = json.loads(row.packet_json)["sources"]
    finally:
        ledger.close()
    assert first_sources["merged"]["window"]["fallback"] is True
    assert window == {
        "spec": "since-last-success",
        "since": first_sources["merged"]["window"]["until"],
        "until": "2099-01-01T00:00:00Z",
    }
    assert receipt["input_digests"] == {
        name: source["sha256"] for name, source in first_sources.items()
    }


def test_a_providers_credential_reaches_no_artifact(cli: Cli, tmp_path: Path) -> None:
    env = workspace(tmp_path, runner="command")
    with (tmp_path / "operator.toml").open("a") as f:
        command = [sys.executable, AGENT, "env", "--env-out", str(tmp_path / "env.json")]
        command.append("--contract-file={contract_file}")
        f.write(f"[system.runner]\ncommand = {json.dumps(command)}\n")
        f.write('command_enforces_read_only = true\ncommand_read_only_tools = ["Read"]\n')
    done = cli("run", "digest.job.json", "--format", "json", cwd=tmp_path, env=env)
    assert done.returncode == 0, done.stderr
    agent_env = json.loads((tmp_path / "env.json").read_text())
    assert "FAKEHOST_TOKEN" not in agent_env
    receipts = default_receipt_dir()
    seen = [done.stdout, done.stderr, json.dumps(agent_env)]
    seen += [p.read_text() for p in receipts.iterdir() if p.is_file()]
    from hz.runtime.config.layers import load_config
    from hz.runtime.ledger.session import open_ledger

    ledger, _ = open_ledger(load_config(environ=env), reconciled=False)
    try:
        seen += [row.packet_json + json.dumps(row.result) for row in ledger.select()]
    finally:
        ledger.close()
    assert [SECRET in text for text in seen] == [False] * len(seen)
    # And a failing fetch's diagnostics do not show it either.
    (tmp_path / "operator.toml").write_text(
        (tmp_path / "operator.toml")
        .read_text()
        .replace('token_env = "FAKEHOST_TOKEN"', 'token_env = "FAKEHOST_TOKEN"\nmode = "error"')
    )
    failed = cli("run", "digest.job.json", cwd=tmp_path, env=env)
    assert failed.returncode == 1
    assert SECRET not in failed.stdout + failed.stderr


def test_hz_providers_lists_capabilities_and_readiness(
    cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    env = workspace(tmp_path)
    env["HZ_CAPABILITIES__GIT"] = "files"  # git is bound to a provider that does not serve it
    monkeypatch.delenv("FAKEHOST_TOKEN")
    done = cli("providers", cwd=tmp_path, env=env)
    assert (done.returncode, done.stderr) == (1, "")
    assert done.stdout == (
        "files      files (core)     ready: reads the working directory's files: up to 200 "
        "files, 1,048,576 bytes each, 4,194,304 in all\n"
        "git        files (core)     NOT READY: provider 'files' serves no git operation\n"
        f"code-host  {NAME} (core)  NOT READY: the environment variable FAKEHOST_TOKEN is not "
        "set\n"
        "tracker    -                unbound: no provider: [capabilities] tracker = "
        '"NAME" binds one\n'
    )
    verbose = cli("providers", "-v", cwd=tmp_path, env={**env, "FAKEHOST_TOKEN": "t"})
    assert verbose.returncode == 1
    lines = verbose.stdout.splitlines()
    assert lines[1:4] == [
        "  files.glob: the files under the working directory a glob pattern matches, as text, "
        "by path",
        '    args:   {"additionalProperties":false,"properties":{"max_files":{"maximum":1000,'
        '"minimum":1,"type":"integer"},"pattern":{"maxLength":4096,"minLength":1,"type":"string"}},'
        '"required":["pattern"],"type":"object"}',
        '    result: {"items":{"properties":{"path":{"type":"string"},"text":{"type":"string"}},'
        '"required":["path","text"],"type":"object"},"type":"array"}',
    ]
    as_json = json.loads(cli("providers", "--format", "json", cwd=tmp_path, env=env).stdout)
    host: dict[str, Any] = as_json["capabilities"][2]
    assert (host["capability"], host["provider"], host["ready"]) == ("code-host", NAME, False)
    assert [op["name"] for op in host["operations"]] == ["code-host.merged_pull_requests"]
    assert host["operations"][0]["window"] is True


def edit_packets(env: dict[str, str], edit: Any) -> list[str]:
    """``edit(packet data)`` on every run's stored packet, as a hostile ledger row; the ids."""
    from hz.runtime.config.layers import load_config
    from hz.runtime.ledger.session import open_ledger

    ledger, _ = open_ledger(load_config(environ=env), reconciled=False)
    try:
        ids = []
        for row in ledger.select():
            data = json.loads(row.packet_json)
            edit(data)
            with ledger.tx() as c:
                c.execute(
                    "UPDATE runs SET packet_json = ? WHERE id = ?", (json.dumps(data), row.id)
                )
            ids.append(row.id)
        return ids
    finally:
        ledger.close()


def test_a_garbled_window_end_in_the_ledger_is_passed_over_and_said(
    cli: Cli, tmp_path: Path
) -> None:
    env = workspace(tmp_path, "since-last-success")
    assert cli("run", "digest.job.json", cwd=tmp_path, env=env).returncode == 0

    def garble(data: dict[str, Any]) -> None:
        data["sources"]["merged"]["window"]["until"] = "2026-99-99T99:99:99Z"

    [run] = edit_packets(env, garble)
    at = ("--at", "2026-05-01T09:30:00Z")
    done = cli("render", "digest.job.json", "--fetch", *at, cwd=tmp_path, env=env)
    assert (done.returncode, done.stderr) == (
        0,
        "digest.job.json:0:0: warning: input 'merged': since-last-success passed over 1 "
        "completed "
        f"run of the ledger: run '{run}': its window's end '2026-99-99T99:99:99Z' is no time hz "
        "uses [HZ728]\n"
        "  hint: such a row was edited by hand, or run from a packet rendered --at a future "
        "time; the window starts at the run before it instead (or falls back to 7 days)\n",
    )
    window = json.loads(done.stdout)["sources"]["merged"]["window"]
    assert (window["since"], window["fallback"]) == ("2026-04-24T09:30:00Z", True)


def test_a_run_rendered_at_a_future_time_does_not_empty_later_windows(
    cli: Cli, tmp_path: Path
) -> None:
    env = workspace(tmp_path, "since-last-success")
    assert cli("run", "digest.job.json", cwd=tmp_path, env=env).returncode == 0

    def earlier(data: dict[str, Any]) -> None:  # a window end well before now, to tell apart
        data["sources"]["merged"]["window"]["until"] = "2020-01-01T00:00:00Z"

    [first] = edit_packets(env, earlier)
    future = ("--at", "2035-01-01T00:00:00Z", "-o", "future.json")
    rendered = cli("render", "digest.job.json", "--fetch", *future, cwd=tmp_path, env=env)
    assert rendered.returncode == 0
    assert cli("run", "future.json", cwd=tmp_path, env=env).returncode == 0
    done = cli("render", "digest.job.json", "--fetch", cwd=tmp_path, env=env)
    assert done.returncode == 0, done.stderr
    window = json.loads(done.stdout)["sources"]["merged"]["window"]
    # Not the empty window [now, now) until 2035: from where the run before it ended.
    assert window["since"] == "2020-01-01T00:00:00Z"
    from hz.runtime.config.layers import load_config
    from hz.runtime.ledger.session import open_ledger

    ledger, _ = open_ledger(load_config(environ=env), reconciled=False)
    try:
        rows = [row.id for row in ledger.select()]
    finally:
        ledger.close()
    [second] = sorted(set(rows) - {first})
    assert f"run '{second}': its window ends at 2035-01-01T00:00:00Z, later than now" in done.stderr


def test_a_packet_with_a_forged_source_digest_is_not_run(cli: Cli, tmp_path: Path) -> None:
    env = workspace(tmp_path)
    rendered = cli("render", "digest.job.json", "--fetch", "-o", "p.json", cwd=tmp_path, env=env)
    assert rendered.returncode == 0
    data = json.loads((tmp_path / "p.json").read_text())
    data["sources"]["notes"]["sha256"] = "0" * 64
    (tmp_path / "p.json").write_text(json.dumps(data))
    done = cli("run", "p.json", cwd=tmp_path, env=env)
    assert (done.returncode, done.stderr) == (
        2,
        "hz: error: p.json: invalid packet: (top level): sources.notes: sha256 is not the "
        "digest of the input's value\n",
    )


@pytest.mark.parametrize(
    "moment", ["0001-01-01T00:00:00+23:59", "9999-12-31T23:59:59-23:59", "0999-06-01T00:00:00Z"]
)
def test_at_outside_1970_to_9999_is_a_usage_error(cli: Cli, tmp_path: Path, moment: str) -> None:
    env = workspace(tmp_path, "since-last-success")
    done = cli("render", "digest.job.json", "--fetch", "--at", moment, cwd=tmp_path, env=env)
    assert (done.returncode, done.stderr.splitlines()[-1]) == (
        2,
        f"Error: Invalid value for '--at': '{moment}' is not between 1970-01-01T00:00:00Z and "
        "9999-12-31T23:59:59Z",
    )


def test_hz_providers_says_a_broken_ready_and_goes_on(cli: Cli, tmp_path: Path) -> None:
    env = workspace(tmp_path)
    for mode, said in [
        ("ready-none", "its checks returned NoneType, not a Readiness with a bool and a text"),
        ("ready-int", "its checks returned Readiness, not a Readiness with a bool and a text"),
        ("ready-raise", "its checks crashed: RuntimeError: boom"),
    ]:
        env["HZ_PROVIDERS_FAKEHOST__MODE"] = mode
        done = cli("providers", cwd=tmp_path, env=env)
        assert (done.returncode, done.stderr) == (1, "")
        assert done.stdout.splitlines()[2] == f"code-host  {NAME} (core)  NOT READY: {said}"


@pytest.mark.serial
def test_hz_providers_bounds_a_ready_that_hangs(cli: Cli, tmp_path: Path) -> None:
    import time

    providers.RELEASE.clear()  # set again when the test ends (the fixture)
    env = workspace(tmp_path)
    env |= {
        "HZ_PROVIDERS_FAKEHOST__MODE": "ready-hang",
        "HZ_PROVIDERS_FAKEHOST__TIMEOUT_SECONDS": "0.2",
    }
    started = time.monotonic()
    done = cli("providers", cwd=tmp_path, env=env)
    assert time.monotonic() - started < 10  # 1.2 s, not the 30 s it would hang
    assert done.returncode == 1
    assert done.stdout.splitlines()[2] == (
        f"code-host  {NAME} (core)  NOT READY: its checks did not end within 1.2 s"
    )


def test_hz_providers_verbose_escapes_an_operators_summary(cli: Cli, tmp_path: Path) -> None:
    env = workspace(tmp_path)
    (tmp_path / "operator.toml").write_text(
        '[capabilities]\nmeet = "command"\n'
        '[providers.command.operations."meet.list"]\nargv = ["/bin/true"]\n'
        'summary = "hi\\u001b[2J\\u001b]0;t\\u0007"\n'
        'result = { type = "array", description = "\\u202e" }\n'
    )
    done = cli("providers", "-v", cwd=tmp_path, env=env)
    assert [
        line for line in done.stdout.splitlines() if "meet.list" in line or "\\u202e" in line
    ] == [
        "  meet.list: hi\\x1b[2J\\x1b]0;t\\x07",
        '    result: {"description":"\\u202e","type":"array"}',
    ]


def test_a_fired_slot_says_the_fetchs_warnings_in_the_workers_log(
    cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from datetime import UTC, datetime

    from hz.cli.schedules import firing_maker
    from hz.runtime.artifacts.models import Job
    from hz.runtime.config.layers import load_config
    from hz.runtime.ledger.schedules import Occasion

    env = workspace(tmp_path, "since-last-success")
    assert cli("run", "digest.job.json", cwd=tmp_path, env=env).returncode == 0

    def garble(data: dict[str, Any]) -> None:
        data["sources"]["merged"]["window"]["until"] = "2026-99-99T99:99:99Z"

    [run] = edit_packets(env, garble)
    job = Job.model_validate_json((tmp_path / "digest.job.json").read_text())
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    logged: list[str] = []
    make = firing_maker(load_config(environ=env), tmp_path, tmp_path, logged.append)
    key = f"schedule:{job.name}:2026-05-01T09:30:00Z"
    packet = make(Occasion(job, key, slot=datetime(2026, 5, 1, 9, 30, tzinfo=UTC)))

    assert packet.sources["merged"].window.since == "2026-04-24T09:30:00Z"
    assert logged == [
        f"hz: worker: {key}: warning: input 'merged': since-last-success passed over 1 "
        f"completed run of the ledger: run '{run}': its window's end '2026-99-99T99:99:99Z' is "
        "no time hz uses [HZ728]\n"
        "  hint: such a row was edited by hand, or run from a packet rendered --at a future "
        "time; the window starts at the run before it instead (or falls back to 7 days)"
    ]


def test_a_fired_slot_reads_the_workers_own_ledger(
    cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The worker fires slots with no command around them: a ledger the fetch opened per slot
    would never be closed (a connection leaked per slot on PostgreSQL)."""
    from datetime import UTC, datetime

    from hz.cli.schedules import firing_maker
    from hz.runtime.artifacts.models import Job
    from hz.runtime.config.layers import load_config
    from hz.runtime.ledger import session
    from hz.runtime.ledger.schedules import Occasion

    env = workspace(tmp_path, "since-last-success")
    assert cli("run", "digest.job.json", cwd=tmp_path, env=env).returncode == 0
    job = Job.model_validate_json((tmp_path / "digest.job.json").read_text())
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    config = load_config(environ=env)
    ledger, _ = session.open_ledger(config, reconciled=False)

    def no_other(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the fetch opened a ledger of its own")

    monkeypatch.setattr(session, "open_ledger", no_other)
    make = firing_maker(config, tmp_path, tmp_path, print, ledger)
    slot = datetime(2026, 5, 1, 9, 30, tzinfo=UTC)
    packet = make(Occasion(job, f"schedule:{job.name}:slot", slot=slot))
    assert packet.sources["merged"].window.spec == "since-last-success"
    ledger.close()
