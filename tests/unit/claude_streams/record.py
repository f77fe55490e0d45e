"""Re-records the stream-json fixtures in this folder from the real, pinned ``claude`` CLI.

    .venv/bin/python tests/unit/claude_streams/record.py [PATH-TO-CLAUDE]

Each scenario runs the CLI against the scripted fake Messages API in ``tests/fakes`` and keeps
its stdout lines verbatim (``NAME.jsonl``) and its exit code (first line of ``NAME.meta``).
The parser and classifier unit tests read these files: shapes are recorded, never invented.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[2]))

from tests.fakes.anthropic_server import FakeAnthropic, Reply, api_error, text, tool_use  # noqa: E402

SCHEMA = {
    "type": "object",
    "properties": {"n": {"type": "integer"}},
    "required": ["n"],
    "additionalProperties": False,
}
_BASE = ["--tools", "Read,Grep", "--allowed-tools", "Read,Grep", "--permission-mode", "dontAsk"]


def scenarios(workdir: str) -> dict[str, tuple[list[Reply], list[str], bool, bool]]:
    """name -> (replies, extra argv, repeat_last, with API key)."""
    notes = os.path.join(workdir, "notes.txt")
    return {
        "plain": ([text("Hello there")], [], False, True),
        "read": ([tool_use("Read", {"file_path": notes}), text("It says hi")], [], False, True),
        "bash_refused": (
            [tool_use("Bash", {"command": "touch pwned"}), text("I cannot run Bash")],
            [],
            False,
            True,
        ),
        "max_turns": ([tool_use("Grep", {"pattern": "x"})], ["--max-turns", "2"], True, True),
        "budget": (
            [tool_use("Grep", {"pattern": "x"}, output_tokens=2_000_000), text("done")],
            ["--max-budget-usd", "0.5"],
            False,
            True,
        ),
        "rate_limited": (
            [api_error(429, "rate_limit_error", "Slow down", [("retry-after", "7")])],
            [],
            False,
            True,
        ),
        "rate_limited_retried": (
            [api_error(429, "rate_limit_error", "Slow down", [("retry-after", "1")])] * 2,
            [],
            False,
            True,
        ),
        "unauthorized": (
            [api_error(401, "authentication_error", "invalid x-api-key")],
            [],
            False,
            True,
        ),
        "server_error": ([api_error(500, "api_error", "boom")], [], False, True),
        "structured_valid": (
            [tool_use("StructuredOutput", {"n": 3})],
            ["--json-schema", json.dumps(SCHEMA)],
            False,
            True,
        ),
        "structured_invalid": (
            [tool_use("StructuredOutput", {"n": "x"})],
            ["--json-schema", json.dumps(SCHEMA)],
            True,
            True,
        ),
        "read_outside": (
            [tool_use("Read", {"file_path": "/etc/hostname"}), text("could not read")],
            ["--tools", "Read", "--allowed-tools", "Grep"],
            False,
            True,
        ),
        "write_denied": (
            [tool_use("Write", {"file_path": "/nonexistent/x.txt", "content": "x"}), text("ok")],
            ["--tools", "Read,Write", "--allowed-tools", "Read"],
            False,
            True,
        ),
        "write_denied_then_error": (
            [
                tool_use("Write", {"file_path": "/nonexistent/x.txt", "content": "x"}),
                api_error(500, "api_error", "boom"),
            ],
            ["--tools", "Read,Write", "--allowed-tools", "Read"],
            False,
            True,
        ),
        "not_logged_in": ([text("unused")], [], False, False),
    }


def record_auth_status(claude: str) -> None:
    """``claude auth status`` with an API key, with an auth token, and logged out."""
    for name, extra in (
        ("api_key", {"ANTHROPIC_API_KEY": "test-key"}),
        ("auth_token", {"ANTHROPIC_AUTH_TOKEN": "test-token"}),
        ("logged_out", {}),
    ):
        with tempfile.TemporaryDirectory() as home:
            env = {"PATH": os.environ["PATH"], "HOME": home, **extra}
            done = subprocess.run(
                [claude, "auth", "status"],
                capture_output=True,
                text=True,
                env=env,
                cwd=home,
                timeout=60,
                check=False,
            )
        (HERE / f"auth_status_{name}.json").write_text(done.stdout.replace(home, "/HOME"))
        (HERE / f"auth_status_{name}.meta").write_text(f"{done.returncode}\n")
        print("auth status", name, done.returncode)


def main() -> None:
    claude = (
        sys.argv[1]
        if len(sys.argv) > 1
        else str(Path.home() / ".cache/hz/agent-clis/node_modules/.bin/claude")
    )
    only = set(sys.argv[2:])
    if not only or "auth_status" in only:
        record_auth_status(claude)
    with tempfile.TemporaryDirectory() as tmp:
        for name, (replies, extra, repeat, with_key) in scenarios(tmp).items():
            if only and name not in only:
                continue
            home = tempfile.mkdtemp(dir=tmp)
            work = tempfile.mkdtemp(dir=tmp)
            Path(work, "notes.txt").write_text("hi from the notes\n")
            for reply in replies:  # the Read scenario names a file in this run's workdir
                for block in reply.blocks:
                    if block.get("input", {}).get("file_path", "").endswith("/notes.txt"):
                        block["input"]["file_path"] = str(Path(work, "notes.txt"))
            with FakeAnthropic(replies, repeat_last=repeat) as api:
                env = {
                    "PATH": os.environ["PATH"],
                    "HOME": home,
                    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
                    "CLAUDE_CODE_MAX_RETRIES": "1" if name.endswith("_retried") else "0",
                    "DISABLE_AUTOUPDATER": "1",
                }
                if with_key:
                    env |= {"ANTHROPIC_BASE_URL": api.url, "ANTHROPIC_API_KEY": "test-key"}
                argv = [claude, "-p", "--output-format", "stream-json", "--verbose", *_BASE]
                argv += [*extra, "--model", "claude-fake-1"]
                done = subprocess.run(
                    argv,
                    input="Say hi",
                    capture_output=True,
                    text=True,
                    env=env,
                    cwd=work,
                    timeout=60,
                    check=False,
                )
            (HERE / f"{name}.jsonl").write_text(done.stdout)
            (HERE / f"{name}.meta").write_text(f"{done.returncode}\n")
            print(name, done.returncode, len(done.stdout.splitlines()), "lines")


if __name__ == "__main__":
    main()
