"""The command provider with real child processes: what it sends, what it reads, its bounds."""

from __future__ import annotations

import datetime as dt
import json
import os
import resource
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest

from hz.runtime.artifacts.errors import ConfigError
from hz.runtime.artifacts.operations import CATALOG, Window
from hz.runtime.process.environment import BASE_NAMES
from hz.runtime.providers.command import CommandProvider, CommandProviderSettings
from hz.runtime.providers.protocol import FetchRequest, ProviderError

RESULT = {"type": "object"}


def _python(tmp_path: Path, source: str) -> list[str]:
    script = tmp_path / "child.py"
    script.write_text(textwrap.dedent(source))
    return [sys.executable, str(script)]


def _provider(**operations: dict[str, Any]) -> CommandProvider:
    table = {name.replace("__", "."): op for name, op in operations.items()}
    return CommandProvider(CommandProviderSettings.from_table({"operations": table}))


def _fetch(
    provider: CommandProvider,
    name: str,
    workdir: Path,
    args: dict[str, Any] | None = None,
    window: Window | None = None,
    max_bytes: int = 4 * 1024 * 1024,
) -> Any:
    operation = provider.operations()[name]
    request = FetchRequest(operation, args or {}, window, workdir, time.monotonic() + 60, max_bytes)
    return provider.fetch(request)


def _error(provider: CommandProvider, name: str, workdir: Path, **kw: Any) -> Any:
    with pytest.raises(ProviderError) as caught:
        _fetch(provider, name, workdir, **kw)
    return caught.value.code, str(caught.value), caught.value.hint


ECHO = """
    import json, os, sys
    print(json.dumps({"stdin": json.load(sys.stdin), "cwd": os.getcwd()}))
"""


def test_the_program_gets_the_request_on_stdin_and_its_json_is_the_value(tmp_path: Path) -> None:
    provider = _provider(
        acme__issues={
            "argv": _python(tmp_path, ECHO),
            "args": {"type": "object", "properties": {"team": {"type": "string"}}},
            "result": RESULT,
            "window": True,
        }
    )
    window = Window(dt.datetime(2024, 1, 1, tzinfo=dt.UTC), dt.datetime(2024, 1, 8, tzinfo=dt.UTC))
    value = _fetch(provider, "acme.issues", tmp_path, {"team": "ünï"}, window)
    assert value == {
        "stdin": {
            "operation": "acme.issues",
            "args": {"team": "ünï"},
            "window": {"since": "2024-01-01T00:00:00Z", "until": "2024-01-08T00:00:00Z"},
        },
        "cwd": str(tmp_path),
    }


def test_without_a_window_the_window_is_null(tmp_path: Path) -> None:
    provider = _provider(acme__x={"argv": _python(tmp_path, ECHO), "result": RESULT})
    assert _fetch(provider, "acme.x", tmp_path)["stdin"] == {
        "operation": "acme.x",
        "args": {},
        "window": None,
    }


def test_operations_are_declared_or_the_catalog_s(tmp_path: Path) -> None:
    provider = _provider(
        acme__x={"argv": ["acme-x"], "result": {"type": "array"}, "summary": "the x of acme"},
        tracker__issues_updated={"argv": ["acme-issues"]},
    )
    operations = provider.operations()
    assert operations["tracker.issues_updated"] == CATALOG["tracker.issues_updated"]
    x = operations["acme.x"]
    assert (x.name, x.summary, dict(x.args), dict(x.result), x.window, x.capability) == (
        "acme.x",
        "the x of acme",
        {"type": "object", "additionalProperties": False},
        {"type": "array"},
        False,
        "acme",
    )


def test_output_that_is_not_json(tmp_path: Path) -> None:
    provider = _provider(
        acme__a={"argv": _python(tmp_path, 'print(\'{"a": 1, "a": 2}\')'), "result": RESULT},
        acme__b={"argv": ["/bin/echo", "done \x1b[2J"], "result": RESULT},
        acme__c={"argv": ["/bin/true"], "result": RESULT},
    )
    hint = "it must print one JSON document on stdout (and anything else on stderr)"
    assert _error(provider, "acme.a", tmp_path) == (
        "HZ724",
        "the command printed no JSON: duplicate key 'a' in a JSON object",
        hint,
    )
    assert _error(provider, "acme.b", tmp_path) == (
        "HZ724",
        "the command printed no JSON: Expecting value (line 1, column 1)",
        hint,
    )
    assert _error(provider, "acme.c", tmp_path) == (
        "HZ724",
        "the command printed nothing: Expecting value (line 1, column 1)",
        hint,
    )


def test_a_failing_program_is_named_with_its_status_and_stderr(tmp_path: Path) -> None:
    failing = """
        import sys
        for n in range(8):
            print(f"line {n}", file=sys.stderr)
        print("\\x1b]0;title\\x07 ::error::planted", file=sys.stderr)
        print("{}")
        sys.exit(3)
    """
    provider = _provider(
        acme__x={"argv": _python(tmp_path, failing), "result": RESULT},
        acme__quiet={"argv": ["/bin/false"], "result": RESULT},
        acme__killed={"argv": ["/bin/sh", "-c", "kill -9 $$"], "result": RESULT},
    )
    assert _error(provider, "acme.x", tmp_path) == (
        "HZ722",
        "the command exited with code 3: line 4\\nline 5\\nline 6\\nline 7\\n"
        "\\x1b]0;title\\x07 ::error::planted",
        None,
    )
    assert _error(provider, "acme.quiet", tmp_path)[1] == (
        "the command exited with code 1 (nothing on stderr)"
    )
    assert _error(provider, "acme.killed", tmp_path)[1] == (
        "the command was killed by signal SIGKILL (nothing on stderr)"
    )


def test_a_long_stderr_is_cut_to_its_end(tmp_path: Path) -> None:
    noisy = "import sys; sys.stderr.write('a' * 5000 + 'END'); sys.exit(2)"
    provider = _provider(acme__x={"argv": [sys.executable, "-c", noisy], "result": RESULT})
    message = _error(provider, "acme.x", tmp_path)[1]
    assert message == "the command exited with code 2: …" + "a" * 597 + "END"


def test_a_program_that_does_not_start(tmp_path: Path) -> None:
    provider = _provider(acme__x={"argv": [str(tmp_path / "nothing")], "result": RESULT})
    assert _error(provider, "acme.x", tmp_path) == (
        "HZ721",
        f"the command did not start: {tmp_path}/nothing: program not found",
        "check the program's name or path in the provider's settings",
    )


@pytest.mark.serial
def test_a_program_that_hangs_is_stopped_with_its_group(tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    hang = f"""
        import os, subprocess, time
        child = subprocess.Popen(["sleep", "60"])
        open({str(pids)!r}, "w").write(f"{{os.getpid()}} {{child.pid}}")
        time.sleep(60)
    """
    provider = _provider(
        acme__x={"argv": _python(tmp_path, hang), "result": RESULT, "timeout_seconds": 1}
    )
    started = time.monotonic()
    assert _error(provider, "acme.x", tmp_path) == (
        "HZ726",
        "the command did not end within 1 seconds; its process group was stopped",
        "raise timeout_seconds in the provider's settings, or ask for less",
    )
    assert time.monotonic() - started < 6
    for pid in map(int, pids.read_text().split()):
        assert not _alive(pid), f"{pid} survived"


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def test_a_gigabyte_of_output_is_cut_at_the_cap_in_flat_memory(tmp_path: Path) -> None:
    flood = """
        import sys
        chunk = b"[" * (1 << 20)
        for _ in range(1024):
            sys.stdout.buffer.write(chunk)
    """
    provider = _provider(
        acme__x={"argv": _python(tmp_path, flood), "result": RESULT, "max_bytes": 1 << 20}
    )
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    assert _error(provider, "acme.x", tmp_path) == (
        "HZ725",
        "the command printed more than 1048576 bytes",
        'raise max_bytes in [providers.command.operations."acme.x"], or ask for less',
    )
    grown_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
    assert grown_kib < 64 * 1024, f"hz's peak memory grew by {grown_kib} KiB"
    # The request's own cap is the smaller one here.
    small = _provider(acme__x={"argv": _python(tmp_path, flood), "result": RESULT})
    assert _error(small, "acme.x", tmp_path, max_bytes=100)[1] == (
        "the command printed more than 100 bytes"
    )


def test_only_the_named_variables_reach_the_program(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ACME_TOKEN", "acme-token-passed")
    monkeypatch.setenv("GITHUB_TOKEN", "ghp_planted_secret")
    monkeypatch.setenv("HZ_CREDENTIAL_GITHUB", "hz-credential-planted")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "aws-planted")
    dump = "import json, os; print(json.dumps(dict(os.environ)))"
    provider = _provider(
        acme__x={"argv": [sys.executable, "-c", dump], "result": RESULT, "env": ["ACME_TOKEN"]}
    )
    seen = _fetch(provider, "acme.x", tmp_path)
    assert seen["ACME_TOKEN"] == "acme-token-passed"
    assert set(seen) - {"ACME_TOKEN"} <= BASE_NAMES | {"LC_CTYPE"}  # python may set LC_CTYPE
    text = json.dumps(seen)
    for planted in ("ghp_planted_secret", "hz-credential-planted", "aws-planted"):
        assert planted not in text


def test_ready_finds_each_program(tmp_path: Path) -> None:
    assert (
        _provider().ready().detail == "no operation is declared in [providers.command.operations]"
    )
    missing = _provider(
        acme__a={"argv": ["/bin/true"], "result": RESULT},
        acme__b={"argv": ["no-such-program-of-acme"], "result": RESULT},
    )
    assert missing.ready(online=True) == missing.ready()
    assert (missing.ready().ok, missing.ready().detail) == (
        False,
        "the program of acme.b is not found",
    )
    found = _provider(
        acme__a={"argv": ["/bin/true"], "result": RESULT},
        acme__b={"argv": ["sh"], "result": RESULT},
    )
    assert (found.ready().ok, found.ready().detail) == (True, "2 operation(s), each program found")


def test_an_operation_not_declared(tmp_path: Path) -> None:
    provider = _provider(acme__a={"argv": ["/bin/true"], "result": RESULT})
    request = FetchRequest(CATALOG["git.log"], {}, None, tmp_path, time.monotonic() + 5)
    with pytest.raises(ProviderError) as caught:
        provider.fetch(request)
    assert (caught.value.code, str(caught.value)) == (
        "HZ721",
        "no operation 'git.log' is declared in [providers.command.operations]",
    )


OP = '[providers.command.operations."acme.x"]'


@pytest.mark.parametrize(
    ("operations", "message"),
    [
        (
            {"tracker.issue": {"argv": ["x"], "result": {"type": "object"}}},
            '[providers.command.operations."tracker.issue"] sets result, but tracker.issue is '
            "an operation of the catalog: its arguments, result and window are the catalog's",
        ),
        (
            {"git.log": {"argv": ["x"], "window": False}},
            '[providers.command.operations."git.log"] sets window, but git.log is an '
            "operation of the catalog: its arguments, result and window are the catalog's",
        ),
        (
            {"acme.x": {"argv": ["x"]}},
            f"{OP} needs a result: the JSON Schema of what the program prints",
        ),
        (
            {"acme.x": {"argv": ["x"], "result": {}, "args": {"type": "array"}}},
            f'{OP} args must be the schema of an object (type = "object"), '
            "got {'type': 'array'}",
        ),
        (
            {"acme.x": {"argv": ["x"], "result": {"type": "nothing"}}},
            f"{OP} result must be a JSON Schema (a table that is valid JSON Schema 2020-12), "
            "got {'type': 'nothing'}",
        ),
        (
            {"acme.x": {"argv": ["x"], "result": {"const": dt.date(2024, 1, 1)}}},
            f"{OP} result must be a JSON Schema (a table that is valid JSON Schema 2020-12), "
            "got {'const': datetime.date(2024, 1, 1)}",
        ),
        (
            {"acme.x": {"argv": [], "result": {}}},
            f"{OP} argv must be a non-empty list of strings whose first item is a program name "
            "or an absolute path, got []",
        ),
        (
            {"acme.x": {"argv": ["./bin/x"], "result": {}}},
            f"{OP} argv must be a non-empty list of strings whose first item is a program name "
            "or an absolute path, got ['./bin/x']",
        ),
        (
            {"acme.x": {"argv": ["x"], "result": {}, "timeout": 5}},
            f"{OP} has no key 'timeout' (did you mean 'timeout_seconds'?)",
        ),
        (
            {"acme.x": {"argv": ["x"], "result": {}, "env": ["HZ_CREDENTIAL_X"]}},
            f"{OP} env: HZ_CREDENTIAL_X is an hz credential and is never passed to a child process",
        ),
        (
            {"acme.x": {"argv": ["x"], "result": {}, "timeout_seconds": 0}},
            f"{OP} timeout_seconds must be a number of seconds greater than 0 and at most 3600, "
            "got 0",
        ),
        (
            {"Acme.X\n": {"argv": ["x"], "result": {}}},
            "[providers.command.operations] 'Acme.X\\n' is not an operation name",
        ),
        ({"acme.x": "argv"}, f"{OP} must be a table, got 'argv'"),
    ],
)
def test_bad_operations_are_refused_when_read(operations: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        CommandProviderSettings.from_table({"operations": operations})
    assert str(caught.value) == message


def test_operations_must_be_a_table() -> None:
    with pytest.raises(ConfigError) as caught:
        CommandProviderSettings.from_table({"operations": ["acme.x"]})
    assert str(caught.value) == (
        "[providers.command] operations must be a table of operations, got ['acme.x']"
    )


def test_a_home_relative_program_is_expanded(monkeypatch: pytest.MonkeyPatch) -> None:
    settings = CommandProviderSettings.from_table(
        {"operations": {"acme.x": {"argv": ["~/bin/x", "~/y"], "result": {}}}}
    )
    assert settings.operations["acme.x"].argv == (os.path.expanduser("~/bin/x"), "~/y")
