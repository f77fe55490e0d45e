"""A packet is held to what rendering gives — a prompt of at most 1 MiB, input values of at
most 8 MiB as JSON, a contract text of at most 256 KiB — whoever made it: one made by hand
with its digests recomputed is refused before anything is recorded or run, and rendering
refuses input values a packet could not hold."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from hz.runtime.artifacts.canonical import canonical_json, digest_of, sha256_hex
from tests.conftest import Cli, CliResult

CONTRACT = """\
hz:
  contract: 1
  name: greet
  timeout: 30s
  agent:
    tools: [Read]
    max_usd: 0.5
  inputs:
    blob:
      schema: {type: string}
contract: |
  Be brief.
prompt: |
  Say hi to {{ inputs.blob | length }}.
"""
MIB = 1024 * 1024
HINT = "  hint: hz render makes packets within the caps; nothing was recorded or run\n"


@pytest.fixture
def hz(cli: Cli, tmp_path: Path) -> Callable[..., CliResult]:
    (tmp_path / "greet.yaml").write_text(CONTRACT)
    env = {"HZ_RUNNER": "echo", "HZ_STATE_DIR": str(tmp_path / "state")}

    def run(*args: str) -> CliResult:
        return cli(*args, cwd=tmp_path, env=env)

    return run


def hand_made(hz: Callable[..., CliResult], tmp_path: Path, **change: Any) -> str:
    """A packet rendered by hz, then changed by hand with every digest recomputed."""
    assert hz("render", "greet.yaml", "--input", "blob=b", "--output", "p.json").returncode == 0
    packet = json.loads((tmp_path / "p.json").read_text())
    packet.update(change)
    if "contract" in change:
        packet["job"]["contract"] = packet["contract"]
        job = {k: v for k, v in packet["job"].items() if k != "digest"}
        packet["job"]["digest"] = packet["job_digest"] = digest_of(job)
    packet["prompt_sha256"] = sha256_hex(packet["prompt"])
    packet["inputs_sha256"] = digest_of(packet["inputs"])
    (tmp_path / "hand.json").write_text(canonical_json(packet))
    return "hand.json"


@pytest.mark.parametrize("command", ["run", "submit"])
@pytest.mark.parametrize(
    ("change", "problem"),
    [
        (
            {"prompt": "x" * (20 * MIB)},
            "prompt: 20,971,520 bytes of UTF-8, over the 1 MiB (1,048,576 bytes) a rendered "
            "prompt may be (HZ709)",
        ),
        (
            {"inputs": {"blob": "y" * (9 * MIB)}},
            "inputs: 9,437,195 bytes as JSON, over the 8 MiB (8,388,608 bytes) the input values "
            "may be (HZ705)",
        ),
        (
            {"contract": "z" * (300 * 1024)},
            "job.contract: 307,200 bytes of UTF-8, over the 256 KiB (262,144 bytes) a contract "
            "file may be (HZ003) (and 1 more)",
        ),
    ],
)
def test_a_hand_made_packet_past_a_cap_is_refused_before_the_ledger(
    hz: Callable[..., CliResult],
    tmp_path: Path,
    command: str,
    change: dict[str, Any],
    problem: str,
) -> None:
    packet = hand_made(hz, tmp_path, **change)
    done = hz(command, packet)
    assert (done.returncode, done.stdout, done.stderr) == (
        2,
        "",
        f"hz: error: {packet}: invalid packet: {problem}\n" + HINT,
    )
    assert not (tmp_path / "state").exists()


def test_a_packet_at_the_caps_runs(hz: Callable[..., CliResult], tmp_path: Path) -> None:
    prompt = "é" * (MIB // 2)  # 1 MiB of UTF-8 exactly
    packet = hand_made(hz, tmp_path, prompt=prompt, inputs={"blob": "y" * (8 * MIB - 11)})
    done = hz("run", packet, "-q")
    assert (done.returncode, done.stderr) == (0, "")


def test_rendering_refuses_input_values_a_packet_could_not_hold(
    hz: Callable[..., CliResult], tmp_path: Path
) -> None:
    # 2 MiB read (under the 8 MiB of sources), 12 MiB as JSON: each \x01 is written \u0001.
    (tmp_path / "blob.txt").write_bytes(b"\x01" * (2 * MIB))
    done = hz("render", "greet.yaml", "--input", "blob=@blob.txt", "--output", "p.json")
    assert (done.returncode, done.stdout, done.stderr) == (
        1,
        "",
        "greet.yaml:0:0: error: the input values are larger than 8 MiB (8,388,608 bytes) as "
        "JSON (12,582,923 bytes) [HZ705]\n"
        "  hint: pass a smaller extract of the data; the prompt is capped at 1 MiB anyway\n"
        "Found 1 error in 1 file (checked 2 files)\n",
    )
    assert not (tmp_path / "p.json").exists()
