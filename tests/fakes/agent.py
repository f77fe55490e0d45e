#!/usr/bin/env python3
"""A fake agent CLI for tests: real processes that misbehave on purpose.

    agent.py MODE [--pids FILE] [--prompt-file F] [--contract-file F] [--output-file F] ...

Modes:
  echo           the prompt (from --prompt-file, else stdin) becomes the draft
  inspect        JSON: prompt, contract, argv, cwd, modes of the private files and their dir
  fail           write --stderr to stderr, exit with --code
  sleep          sleep --seconds, silently
  ignore-term    ignore SIGTERM, say "ready", sleep for an hour
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

Every mode writes the draft to --output-file when given, else to stdout. ``--pids FILE``
appends one JSON line per process of the run ({"role", "pid", "pgid"}) so tests can check
that nothing survives.
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


def recorded_pids(path: str | os.PathLike[str]) -> list[dict[str, object]]:
    """For tests: the processes a run recorded with ``--pids``."""
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def is_gone(pid: int, wait: float = 5.0) -> bool:
    """For tests: whether ``pid`` no longer runs (a zombie awaiting its reaper counts as gone)."""
    deadline = time.monotonic() + wait
    while True:
        try:
            os.kill(pid, 0)
            with open(f"/proc/{pid}/stat", encoding="utf-8") as f:
                state = f.read().rsplit(")", 1)[1].split()[0]
            if state in ("Z", "X"):
                return True
        except (ProcessLookupError, FileNotFoundError):
            return True
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)


def main() -> int:
    p = argparse.ArgumentParser(prog="agent.py")
    p.add_argument("mode")
    p.add_argument("--pids")
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
    args, _unknown = p.parse_known_args()
    _record(args.pids, "leader")
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
