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
from tests.helpers.contracts import contract

CONTRACT = contract(inputs=("blob",), prompt="Say hi to {{ inputs.blob | length }}.")
MIB = 1024 * 1024
HINT = "  hint: hz render makes packets within the caps; nothing was recorded or run\n"


@pytest.fixture
def hz(cli: Cli, tmp_path: Path) -> Callable[..., CliResult]:
    (tmp_path / "greet.yaml").write_text(CONTRACT)
    env = {"HZ_RUNNER": "echo", "HZ_STATE_DIR": str(tmp_path / "state")}

    def run(*args: str) -> CliResult:
        return cli(*args, cwd=tmp_path, env=env)

    return run


def hand_made(
    hz: Callable[..., CliResult],
    tmp_path: Path,
    edit_job: Callable[[dict[str, Any]], None] | None = None,
    **change: Any,
) -> str:
    """A packet rendered by hz, then changed by hand (``edit_job`` changes its job) with every
    digest recomputed."""
    assert hz("render", "greet.yaml", "--input", "blob=b", "--output", "p.json").returncode == 0
    packet = json.loads((tmp_path / "p.json").read_text())
    packet.update(change)
    if "contract" in change:
        packet["job"]["contract"] = packet["contract"]
    if edit_job is not None:
        edit_job(packet["job"])
    if "contract" in change or edit_job is not None:
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


def title(job: dict[str, Any]) -> None:
    job["title"] = "T" * 201


def name(job: dict[str, Any]) -> None:
    job["name"] = "n" * 65


def description(job: dict[str, Any]) -> None:
    job["inputs"]["blob"]["description"] = "d" * (300 * 1024)


def output_schema(job: dict[str, Any]) -> None:
    job["output"] = {"format": "json", "schema": {"description": "s" * (5 * MIB)}}


def tools(job: dict[str, Any]) -> None:
    job["tools"]["tools"] = [f"T{n}" for n in range(300)]


def source_path(job: dict[str, Any]) -> None:
    job["source"]["path"] = "p/" * 2100


@pytest.mark.parametrize(
    ("edit", "problem"),
    [
        (title, "job.title: 201 characters, over the 200 characters a title may have"),
        (name, "job.name: 65 characters, over the 64 characters a name may have"),
        (
            description,
            "job.inputs.blob.description: 307,200 bytes of UTF-8, over the 256 KiB (262,144 "
            "bytes) a contract file may be (HZ003)",
        ),
        (
            output_schema,
            "job: 5,243,467 bytes as JSON, over the 4 MiB (4,194,304 bytes) a job may be",
        ),
        (tools, "job.tools.tools: 300 tools, over the 256 a job may name"),
        (
            source_path,
            "job.source.path: 4,200 bytes of UTF-8, over the 4 KiB (4,096 bytes) a path may be",
        ),
    ],
    ids=["title", "name", "description", "output-schema", "tools", "source-path"],
)
def test_a_hand_made_packet_with_a_free_text_field_past_its_cap_is_refused(
    hz: Callable[..., CliResult],
    tmp_path: Path,
    edit: Callable[[dict[str, Any]], None],
    problem: str,
) -> None:
    """Only the prompt, the inputs and the contract text were capped: a 60 MiB title (or
    description, schema, 3,000,000 tool names) was stored whole, twice the size in the state
    directory (attack on issue 21, H8). Every field is held to the contract schema's caps, the
    job and the packet as a whole to theirs."""
    packet = hand_made(hz, tmp_path, edit_job=edit)
    done = hz("run", packet)
    assert (done.returncode, done.stdout, done.stderr) == (
        2,
        "",
        f"hz: error: {packet}: invalid packet: {problem}\n" + HINT,
    )
    assert not (tmp_path / "state").exists()


def test_a_packet_past_its_whole_cap_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    """What no field cap holds (the sum of them all) the packet's own cap does: smaller here,
    as a packet within every field cap stays under 20 MiB."""
    from hz.runtime.artifacts import models

    packet = models.Packet(
        job=models.Job(
            name="greet",
            source=models.SourceRef(path="greet.yaml", sha256="0" * 64),
            timeout_seconds=30,
            tools=models.ToolProfile(),
            budget=models.Budget(max_usd=0.5),
            contract="Be brief.",
            template="Say hi.",
            hz_version="0.1.0",
        ).sealed(),
        prompt="Say hi.",
        contract="Be brief.",
        inputs={"blob": "y" * 2000},
        inputs_sha256="1" * 64,
        job_digest="2" * 64,
        prompt_sha256="3" * 64,
    )
    monkeypatch.setattr(models, "MAX_PACKET_BYTES", 2048)
    with pytest.raises(models.ValidationError) as caught:
        models.Packet.model_validate_json(packet.model_dump_json())
    [error] = caught.value.errors()
    assert (error["type"], error["loc"], error["msg"]) == (
        "too_large",
        (),
        f"{len(packet.model_dump_json()):,} bytes as JSON, over the 2 KiB (2,048 bytes) a "
        "packet may be",
    )


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
