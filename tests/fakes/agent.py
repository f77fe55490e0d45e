#!/usr/bin/env python3
"""A fake agent CLI for tests: real processes that misbehave on purpose.

    agent.py MODE [--env-out FILE] [--pids FILE] [--prompt-file F] [--output-file F] ...

Modes:
  echo           the prompt (from --prompt-file, else stdin) becomes the draft
  inspect        JSON: prompt, contract, argv, cwd, modes of the private files and their dir
  fail           write --stderr to stderr, exit with --code
  sleep          sleep --seconds, silently
  ignore-term    ignore SIGTERM, say "ready", sleep for an hour
  stubborn       ignore SIGTERM and fork a grandchild that ignores it too and holds stdout;
                 both sleep for an hour
  grandchild     fork a grandchild that keeps stdout open and sleeps; print the draft, exit 0
  escape         like grandchild, but the grandchild starts its own session (setsid)
  flood          write --stdout-bytes / --stderr-bytes in large blocks (1 MiB lines, or one
                 endless line with --no-newlines), then "end", exit 0
  result-hang    print the draft line (--draft), then hang
  symlink-output replace --output-file by a symlink to --target, exit 0
  env            dump the environment as JSON (the draft)
  json           print a JSON document: {"draft"|--key: --draft, "usage": ..., cost}; --raw TEXT
                 prints TEXT instead (malformed JSON)
  no-read        never read stdin; print "ok", exit 0

Every mode writes the draft to --output-file when given, else to stdout. ``--delay S`` waits
S seconds before the mode runs (a run that takes a while, in any mode); ``--until FILE`` then
waits until FILE exists (at most an hour: a run the test ends when it chooses). Two options work in
every mode and act at start-up, before the mode runs, so tests can check any run:
``--env-out FILE`` writes the agent's environment as a JSON object (atomically: a run stopped
early leaves the whole file or none), to show that no secret reached it; ``--pids FILE``
appends one JSON line per process of the run ({"role", "pid", "pgid"}), to show that nothing
survives. ``--markers DIR`` writes one new file per start holding the prompt (from
``--prompt-file``), to count how often each run was started. ``--fill FILE`` writes zeros
to FILE until its file system is full, then runs the mode (a disk that fills up while the
agent works).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import stat
import sys
import time

HOUR = 3600.0


def _record(path: str | None, role: str) -> None:
    if path:
        with open(path, "a", encoding="utf-8") as f:
            f.write(json.dumps({"role": role, "pid": os.getpid(), "pgid": os.getpgrp()}) + "\n")


def _wait_for(path: str | None) -> None:
    deadline = time.monotonic() + HOUR
    while path and not os.path.exists(path) and time.monotonic() < deadline:
        time.sleep(0.02)


def _mark(directory: str | None, prompt_file: str | None) -> None:
    if directory:
        prompt = ""
        if prompt_file:
            with open(prompt_file, encoding="utf-8") as f:
                prompt = f.read()
        name = os.path.join(directory, f"{os.getpid()}-{time.time_ns()}")
        with open(f"{name}.tmp", "w", encoding="utf-8") as f:
            f.write(prompt)
        os.replace(f"{name}.tmp", name)


def markers(directory: str | os.PathLike[str]) -> list[str]:
    """For tests: the prompts of every start recorded with ``--markers`` (one per start)."""
    found = []
    for entry in sorted(os.listdir(directory)):
        if not entry.endswith(".tmp"):
            with open(os.path.join(directory, entry), encoding="utf-8") as f:
                found.append(f.read())
    return found


def _record_env(path: str | None) -> None:
    if path:
        with open(f"{path}.tmp", "w", encoding="utf-8") as f:
            json.dump(dict(os.environ), f, sort_keys=True)
        os.replace(f"{path}.tmp", path)


def _emit(args: argparse.Namespace, text: str) -> None:
    if args.output_file:
        with open(args.output_file, "w", encoding="utf-8") as f:
            f.write(text)
    else:
        sys.stdout.write(text)
        sys.stdout.flush()


def _prompt(args: argparse.Namespace) -> str:
    if args.prompt_file:
        with open(args.prompt_file, encoding="utf-8") as f:
            return f.read()
    return sys.stdin.read()


def _mode_of(path: str | None) -> str | None:
    return None if path is None else oct(stat.S_IMODE(os.stat(path).st_mode))


def _inspect(args: argparse.Namespace) -> str:
    private = os.path.dirname(args.contract_file) if args.contract_file else None
    contract = None
    if args.contract_file:
        with open(args.contract_file, encoding="utf-8") as f:
            contract = f.read()
    return json.dumps(
        {
            "prompt": _prompt(args),
            "contract": contract,
            "argv": sys.argv[1:],
            "cwd": os.getcwd(),
            "prompt_file_mode": _mode_of(args.prompt_file),
            "contract_file_mode": _mode_of(args.contract_file),
            "private_dir": private,
            "private_dir_mode": _mode_of(private),
        }
    )


def _flood(args: argparse.Namespace) -> None:
    block = b"x" * (1024 * 1024 - 1) + (b"x" if args.no_newlines else b"\n")
    for fd, total in ((1, args.stdout_bytes), (2, args.stderr_bytes)):
        left = total
        while left > 0:
            view = memoryview(block)[: min(left, len(block))]
            while view:
                view = view[os.write(fd, view) :]
            left -= min(left, len(block))
    os.write(1, b"end\n")


def _grandchild(args: argparse.Namespace) -> None:
    if os.fork() == 0:
        _record(args.pids, "grandchild")
        time.sleep(HOUR)  # holds the inherited stdout and stderr
        os._exit(0)
    _emit(args, args.draft)


def _escape(args: argparse.Namespace) -> None:
    if os.fork() == 0:
        os.setsid()  # leaves the run's process group: hz can't find it, only stop reading
        _record(args.pids, "escapee")
        time.sleep(HOUR)
        os._exit(0)
    _emit(args, args.draft)


def _json(args: argparse.Namespace) -> str:
    if args.raw is not None:
        return str(args.raw)
    doc: dict[str, object] = {args.key: args.draft}
    if args.input_tokens is not None:
        doc["usage"] = {"input_tokens": args.input_tokens, "output_tokens": args.output_tokens}
    if args.cost is not None:
        doc["total_cost_usd"] = args.cost
    return json.dumps(doc)


def _fill(path: str) -> None:
    with open(path, "ab", buffering=0) as f:
        for size in (1 << 16, 4096, 1):
            try:
                while True:
                    f.write(b"\0" * size)
            except OSError:
                continue


def recorded_pids(path: str | os.PathLike[str]) -> list[dict[str, object]]:
    """For tests: the processes a run recorded with ``--pids``."""
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def recorded_env(path: str | os.PathLike[str]) -> dict[str, str]:
    """For tests: the environment a run's agent got, recorded with ``--env-out``."""
    with open(path, encoding="utf-8") as f:
        env: dict[str, str] = json.load(f)
    return env


def _state_and_group(pid: int) -> tuple[str, int] | None:
    """A process's state letter and process group from /proc; None when it does not exist."""
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8") as f:
            # Fields after the command name, which may itself contain spaces and parentheses.
            fields = f.read().rsplit(")", 1)[1].split()
    except (FileNotFoundError, ProcessLookupError):
        return None
    return fields[0], int(fields[2])


def _running(pid: int) -> bool:
    found = _state_and_group(pid)
    return found is not None and found[0] not in ("Z", "X")  # a zombie awaits only its reaper


def is_gone(pid: int, wait: float = 5.0) -> bool:
    """For tests: whether ``pid`` no longer runs (a zombie awaiting its reaper counts as gone)."""
    deadline = time.monotonic() + wait
    while _running(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def survivors(path: str | os.PathLike[str], wait: float = 5.0) -> list[int]:
    """For tests: the processes of a run still running after up to ``wait`` seconds: those
    recorded with ``--pids`` and any other member of their process groups (SIGKILL is
    delivered at once, but a loaded machine may take a moment to let the process die)."""
    recorded = recorded_pids(path)
    groups = {int(str(p["pgid"])) for p in recorded}
    deadline = time.monotonic() + wait
    while True:
        alive = {int(str(p["pid"])) for p in recorded if _running(int(str(p["pid"])))}
        for entry in os.listdir("/proc"):
            found = _state_and_group(int(entry)) if entry.isdigit() else None
            if found is not None and found[1] in groups and found[0] not in ("Z", "X"):
                alive.add(int(entry))
        if not alive or time.monotonic() > deadline:
            return sorted(alive)
        time.sleep(0.05)


def main() -> int:
    p = argparse.ArgumentParser(prog="agent.py")
    p.add_argument("mode")
    p.add_argument("--pids")
    p.add_argument("--env-out")
    p.add_argument("--prompt-file")
    p.add_argument("--contract-file")
    p.add_argument("--output-file")
    p.add_argument("--draft", default="the draft\n")
    p.add_argument("--code", type=int, default=1)
    p.add_argument("--stderr", default="")
    p.add_argument("--seconds", type=float, default=HOUR)
    p.add_argument("--stdout-bytes", type=int, default=0)
    p.add_argument("--stderr-bytes", type=int, default=0)
    p.add_argument("--no-newlines", action="store_true")
    p.add_argument("--target")
    p.add_argument("--key", default="draft")
    p.add_argument("--raw")
    p.add_argument("--input-tokens", type=int)
    p.add_argument("--output-tokens", type=int, default=0)
    p.add_argument("--cost", type=float)
    p.add_argument("--markers")
    p.add_argument("--delay", type=float, default=0.0)
    p.add_argument("--until")
    p.add_argument("--fill")
    args, _unknown = p.parse_known_args()
    _record_env(args.env_out)
    _record(args.pids, "leader")
    _mark(args.markers, args.prompt_file)
    time.sleep(args.delay)
    _wait_for(args.until)
    if args.fill:
        _fill(args.fill)
    mode = args.mode
    if mode == "echo":
        _emit(args, _prompt(args))
    elif mode == "inspect":
        _emit(args, _inspect(args))
    elif mode == "fail":
        sys.stderr.write(args.stderr)
        return int(args.code)
    elif mode == "sleep":
        time.sleep(args.seconds)
    elif mode == "ignore-term":
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        _emit(args, "ready\n")
        time.sleep(HOUR)
    elif mode == "stubborn":
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        if os.fork() == 0:
            _record(args.pids, "grandchild")
            time.sleep(HOUR)
            os._exit(0)
        time.sleep(HOUR)
    elif mode == "grandchild":
        _grandchild(args)
    elif mode == "escape":
        _escape(args)
    elif mode == "flood":
        _flood(args)
    elif mode == "result-hang":
        _emit(args, args.draft)
        time.sleep(HOUR)
    elif mode == "symlink-output":
        os.unlink(args.output_file)
        os.symlink(args.target, args.output_file)
    elif mode == "env":
        _emit(args, json.dumps(dict(os.environ), sort_keys=True))
    elif mode == "json":
        _emit(args, _json(args))
    elif mode == "no-read":
        _emit(args, "ok\n")
    else:
        sys.stderr.write(f"agent.py: unknown mode {mode}\n")
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
