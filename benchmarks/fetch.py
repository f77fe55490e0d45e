"""Time ``hz render CONTRACT --fetch --at T`` with three fetched inputs against a plain
``hz render CONTRACT --inputs FILE`` of the same contract given the same values by hand: what
fetching costs a render.

    .venv/bin/python benchmarks/fetch.py [--repeat 9]

The contract is the one of tests/integration/test_fetch_contracts.py
(tests/helpers/fetch_workspace.py): the pull requests merged into acme/app in 7 days from the
local fake GitHub (``[providers.github] api_url``, in this process's thread), ``git.log`` of a
real repository built here, and ``files.glob``. Whole processes, as a user runs them,
alternating so load from other processes hits both alike; one warm-up each. Also times the
fetch alone in process (``fetch_inputs``: the three providers, the result-schema checks and the
digests) to split the difference into importing the providers and fetching. A measurement, not
a test: exit status 0.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.fakes.github_server import FakeGitHub  # noqa: E402
from tests.helpers.fetch_workspace import AT, fetch_workspace, serve  # noqa: E402


def _timed(argv: list[str], cwd: Path, env: dict[str, str]) -> tuple[float, str]:
    started = time.perf_counter()
    done = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, check=False)
    took = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv[2:])} failed:\n{done.stderr}")
    return took, done.stdout


def _in_process(space_work: Path, env: dict[str, str], repeat: int) -> list[float]:
    """The fetch alone, in this process (providers imported once): what each render pays."""
    os.environ.update(env)
    from datetime import datetime

    from hz.compiler.render.packet import job_from_contract
    from hz.runtime.config.layers import load_config
    from hz.runtime.providers.binding import Bindings
    from hz.runtime.providers.fetch import FetchContext, fetch_inputs

    job, _, problems = job_from_contract(space_work / "weekly.yaml")
    assert job is not None, problems
    at = datetime.fromisoformat(AT)
    times = []
    for _ in range(repeat + 1):
        bindings = Bindings.from_config(load_config(cwd=space_work))
        started = time.perf_counter()
        found = fetch_inputs(job, FetchContext(bindings, space_work, at=at))
        times.append(time.perf_counter() - started)
        assert not found.problems, found.problems
    return times[1:]


def _line(label: str, times: list[float]) -> str:
    return (
        f"  {label:<34} median {statistics.median(times) * 1000:7.1f} ms"
        f"  best {min(times) * 1000:7.1f} ms"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=9)
    args = parser.parse_args()
    for name in list(os.environ):  # the fake is local: no proxy in between
        if name.lower() in ("http_proxy", "https_proxy", "all_proxy"):
            del os.environ[name]
    with tempfile.TemporaryDirectory() as tmp, FakeGitHub() as github:
        serve(github)
        space = fetch_workspace(Path(tmp), github.url)
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        env |= space.env() | {"HOME": tmp, "XDG_CONFIG_HOME": f"{tmp}/config"}
        hz = [sys.executable, "-m", "hz", "render", "weekly.yaml"]
        fetching = [*hz, "--fetch", "--at", AT]
        _, packet = _timed(fetching, space.work, env)
        values = Path(tmp) / "values.json"
        values.write_text(json.dumps(json.loads(packet)["inputs"]))
        by_hand = [*hz, "--inputs", str(values)]
        sides: dict[str, list[float]] = {"fetch": [], "hand": []}
        for _ in range(args.repeat + 1):  # the first round warms caches and is dropped
            sides["fetch"].append(_timed(fetching, space.work, env)[0])
            sides["hand"].append(_timed(by_hand, space.work, env)[0])
        alone = _in_process(space.work, env, args.repeat)
    fetch, hand = sides["fetch"][1:], sides["hand"][1:]
    print(f"hz render, 3 inputs (github + git + files), {args.repeat} runs each")
    print(_line("--inputs FILE (values by hand)", hand))
    print(_line("--fetch --at (fetched)", fetch))
    overhead = statistics.median(fetch) - statistics.median(hand)
    print(f"  {'fetch overhead (median difference)':<34} {overhead * 1000:7.1f} ms")
    print(_line("the fetch alone, in process", alone))


if __name__ == "__main__":
    main()
