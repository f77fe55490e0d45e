"""A stdio proxy in front of the real ``codex app-server`` that holds one answer: the server as
hz would see it when that answer is slow, or when the server is wedged.

    python appserver_proxy.py METHOD MODE PIDFILE REAL_CODEX [ARGS...]

Every line passes both ways unchanged until hz sends a request whose method is ``METHOD``
(``thread/start``, ``turn/start``). That request still reaches the server, which acts on it;
from then on nothing the server says reaches hz (neither the answer nor any notification), so
hz holds no answer and no turn id. With ``answered:METHOD`` the hold starts just after the
server's answer to that request reached hz (hz knows the turn id, then hears nothing more).
``MODE``:

- ``hold``: just that.
- ``wedge``: besides, once the held request went through, the proxy stops reading hz's lines
  (the server still sees everything before), ignores SIGTERM, and leaves a detached
  (``setsid``) helper that holds hz's stderr pipe open for 30 s; its pid goes to ``PIDFILE``
  so the test can end it.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading


def _message(line: bytes) -> dict[str, object]:
    try:
        message = json.loads(line)
    except ValueError:
        return {}
    return message if isinstance(message, dict) else {}


def main() -> None:
    hold, mode, pidfile, *argv = sys.argv[1:]
    if mode == "wedge":
        signal.signal(signal.SIGTERM, signal.SIG_IGN)  # inherited by the server too
    child = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert child.stdin is not None
    assert child.stdout is not None
    after_answer = hold.startswith("answered:")
    method = hold.removeprefix("answered:")
    held = threading.Event()
    wedged = threading.Event()
    awaited: list[object] = []  # the id of the request whose answer starts the hold

    def wedge() -> None:
        if mode != "wedge" or wedged.is_set():
            return
        wedged.set()
        helper = subprocess.Popen(  # inherits stderr; not the run's environment, so a test
            ["/bin/sleep", "30"],  # tells it from the run's own processes
            start_new_session=True,
            stdin=subprocess.DEVNULL,
            env={},
        )
        with open(pidfile, "w") as out:
            out.write(str(helper.pid))

    def downstream() -> None:
        for line in child.stdout:  # type: ignore[union-attr]
            if held.is_set():
                continue  # swallowed: hz never sees it
            sys.stdout.buffer.write(line)
            sys.stdout.buffer.flush()
            message = _message(line)
            if awaited and "method" not in message and message.get("id") == awaited[0]:
                held.set()
                wedge()

    threading.Thread(target=downstream, daemon=True).start()
    for line in sys.stdin.buffer:
        if wedged.is_set():
            break
        child.stdin.write(line)
        child.stdin.flush()
        message = _message(line)
        if message.get("method") == method and after_answer:
            awaited.append(message.get("id"))
        elif message.get("method") == method:
            held.set()
            wedge()
    if wedged.is_set():
        threading.Event().wait(60)  # stop reading; the group is killed around us
    child.stdin.close()
    os._exit(child.wait())


if __name__ == "__main__":
    main()
