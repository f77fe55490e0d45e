"""Receipts: a chain of files, each naming the sha256 of the one before; tampering shows."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator

from hz import __version__
from hz.runtime.artifacts.canonical import canonical_json, digest_of, sha256_hex
from hz.runtime.artifacts.errors import HzError
from hz.runtime.artifacts.receipt import Receipt
from hz.runtime.artifacts.result import AgentResult
from hz.runtime.artifacts.schemas import schema_data
from hz.runtime.receipts.verify import receipt_rows, verify_chain
from hz.runtime.receipts.write import receipt_body, write_receipt
from tests.helpers.packets import END, START, make_packet, receipt_sample


def test_first_receipt_content(tmp_path: Path) -> None:
    path = write_receipt(tmp_path, receipt_sample())
    assert path == tmp_path / "000001-greet.json"
    document = json.loads(path.read_text())
    digest = document.pop("digest")
    assert len(digest) == 64
    assert document == {
        "kind": "receipt",
        "format_version": 1,
        "sequence": 1,
        "job_name": "greet",
        "job_digest": make_packet().job_digest,
        "inputs_sha256": "1" * 64,
        "prompt_sha256": sha256_hex(make_packet().prompt),
        "runner": "echo",
        "model": "m",
        "status": "completed",
        "failure_kind": None,
        "reason": None,
        "tool_calls": {"Grep": 1, "Read": 2},
        "tool_call_total": 3,
        "turns": 2,
        "usage": {
            "input_tokens": 10,
            "output_tokens": 5,
            "cache_read_input_tokens": 0,
            "cache_creation_input_tokens": 0,
        },
        "cost_usd": 0.01,
        "duration_seconds": 5.0,
        "limits_unenforced": ["budget"],
        "session_widened": [],
        "draft_sha256": sha256_hex("hi"),
        "transcript_sha256": None,
        "transcript_file": None,
        "started_at": "2026-11-29T12:00:00.123Z",
        "ended_at": "2026-11-29T12:00:05.000Z",
        "hz_version": __version__,
        "previous_receipt": None,
        "previous_sha256": None,
    }


def test_a_receipt_names_a_widened_session() -> None:
    result = AgentResult(runner="claude-code", status="completed", session_widened=("WebFetch",))
    body = receipt_body(make_packet(), result, started_at=START, ended_at=END)
    assert body.to_json_data()["session_widened"] == ["WebFetch"]


def test_a_receipt_file_is_its_model_in_canonical_json(tmp_path: Path) -> None:
    write_receipt(tmp_path, receipt_sample())
    path = write_receipt(tmp_path, receipt_sample())
    receipt = Receipt.model_validate_json(path.read_bytes())
    assert (receipt.sequence, receipt.previous_receipt) == (2, "000001-greet.json")
    assert canonical_json(receipt.to_json_data()).encode() == path.read_bytes()
    validator = Draft202012Validator(schema_data("receipt"))
    assert list(validator.iter_errors(json.loads(path.read_bytes()))) == []


def test_a_sealed_document_that_is_no_receipt_is_a_problem(tmp_path: Path) -> None:
    document: dict[str, object] = {"kind": "receipt", "sequence": 1, "previous_sha256": None}
    document["digest"] = digest_of(document)
    (tmp_path / "000001-greet.json").write_text(json.dumps(document))
    assert verify_chain(tmp_path) == (
        1,
        ["000001-greet.json: not in the receipt format (job_name: Field required)"],
    )


def test_chain_links_by_sha256_of_the_previous_file(tmp_path: Path) -> None:
    first = write_receipt(tmp_path, receipt_sample())
    second = write_receipt(tmp_path, receipt_sample())
    document = json.loads(second.read_text())
    assert (second.name, document["previous_receipt"], document["previous_sha256"]) == (
        "000002-greet.json",
        "000001-greet.json",
        sha256_hex(first.read_bytes()),
    )
    assert verify_chain(tmp_path) == (2, [])
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        ".lock",
        "000001-greet.json",
        "000002-greet.json",
    ]


def _chain(tmp_path: Path, n: int) -> list[Path]:
    return [write_receipt(tmp_path, receipt_sample()) for _ in range(n)]


def test_edited_receipt_is_named(tmp_path: Path) -> None:
    paths = _chain(tmp_path, 3)
    paths[1].write_text(paths[1].read_text().replace('"completed"', '"failed"'))
    assert verify_chain(tmp_path) == (
        3,
        [
            "000002-greet.json: edited after it was written (its digest does not match)",
            "000003-greet.json: previous_sha256 does not match 000002-greet.json (that receipt "
            "was changed or replaced after this one was written)",
        ],
    )


def test_edit_of_the_last_receipt_is_caught_by_its_digest(tmp_path: Path) -> None:
    paths = _chain(tmp_path, 2)
    paths[1].write_text(paths[1].read_text().replace('"cost_usd": 0.01', '"cost_usd": 0.0'))
    assert verify_chain(tmp_path) == (
        2,
        ["000002-greet.json: edited after it was written (its digest does not match)"],
    )


def test_missing_predecessor(tmp_path: Path) -> None:
    paths = _chain(tmp_path, 4)
    paths[1].unlink()
    paths[0].unlink()
    assert verify_chain(tmp_path) == (
        2,
        [
            "000003-greet.json: missing predecessor (no receipt with sequence 1 to 2)",
        ],
    )


def test_gap_in_the_middle(tmp_path: Path) -> None:
    paths = _chain(tmp_path, 3)
    paths[1].unlink()
    assert verify_chain(tmp_path) == (
        2,
        ["000003-greet.json: missing predecessor (no receipt with sequence 2)"],
    )


def test_fork_is_reported(tmp_path: Path) -> None:
    paths = _chain(tmp_path, 2)
    (tmp_path / "000002-other.json").write_bytes(paths[1].read_bytes())
    count, problems = verify_chain(tmp_path)
    assert (count, problems[0]) == (
        3,
        "000002-greet.json and 000002-other.json: two receipts with sequence 2 (the chain forked)",
    )


def test_not_json(tmp_path: Path) -> None:
    _chain(tmp_path, 1)
    (tmp_path / "000002-greet.json").write_text("{")
    count, problems = verify_chain(tmp_path)
    assert (count, problems) == (
        2,
        [
            "000002-greet.json: not valid JSON (Expecting property name enclosed in double "
            "quotes: line 1 column 2 (char 1))"
        ],
    )


WRITER = """
import sys
from pathlib import Path

import pytest
from hz.runtime.receipts.write import write_receipt
from tests.helpers.packets import receipt_sample
for _ in range(int(sys.argv[2])):
    write_receipt(Path(sys.argv[1]), receipt_sample())
"""


def test_concurrent_writers_keep_one_chain(tmp_path: Path) -> None:
    repo = Path(__file__).resolve().parents[2]
    writers = [
        subprocess.Popen([sys.executable, "-c", WRITER, str(tmp_path), "10"], cwd=repo)
        for _ in range(4)
    ]
    assert [w.wait(timeout=120) for w in writers] == [0, 0, 0, 0]
    assert verify_chain(tmp_path) == (40, [])


def test_verify_names_a_missing_directory(tmp_path: Path) -> None:
    with pytest.raises(HzError) as caught:
        verify_chain(tmp_path / "nowhere")
    assert caught.value.message == f"{tmp_path / 'nowhere'}: no such receipt directory"


def test_verify_refuses_a_file(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    with pytest.raises(HzError) as caught:
        verify_chain(tmp_path / "file")
    assert caught.value.message == f"{tmp_path / 'file'}: not a directory"


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        ("[" * 100_000 + "]" * 100_000, "not valid JSON (nested more than 64 levels deep)"),
        (
            '{"kind": "receipt", "reason": "\\ud800"}',
            "not valid JSON (a string holds a lone surrogate (\\ud800), which is not text)",
        ),
        (
            '{"kind": "receipt", "sequence": ' + "7" * 5001 + "}",
            "not valid JSON (an integer of 5001 digits (at most 4300 are read))",
        ),
        ('{"kind": "receipt", "cost_usd": NaN}', "not valid JSON (NaN is not a JSON value)"),
        (
            '{"kind": "receipt", "kind": "receipt"}',
            "not valid JSON (duplicate key 'kind' in a JSON object)",
        ),
    ],
)
def test_hostile_receipt_content_is_a_problem_not_a_crash(
    tmp_path: Path, content: str, problem: str
) -> None:
    _chain(tmp_path, 1)
    (tmp_path / "000002-greet.json").write_text(content)
    assert verify_chain(tmp_path) == (2, [f"000002-greet.json: {problem}"])
    assert receipt_rows(tmp_path)[1] == {"file": "000002-greet.json"}


def test_a_symlinked_receipt_directory_is_refused(tmp_path: Path) -> None:
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "receipts").symlink_to(tmp_path / "elsewhere")
    with pytest.raises(HzError) as caught:
        write_receipt(tmp_path / "receipts", receipt_sample())
    assert caught.value.message == (
        f"cannot write a receipt in {tmp_path / 'receipts'}: it is a symbolic link"
    )
    assert list((tmp_path / "elsewhere").iterdir()) == []


def test_a_planted_lock_link_creates_nothing(tmp_path: Path) -> None:
    (tmp_path / "r").mkdir()
    (tmp_path / "r" / ".lock").symlink_to(tmp_path / "created-by-a-link")
    with pytest.raises(HzError):
        write_receipt(tmp_path / "r", receipt_sample())
    assert not (tmp_path / "created-by-a-link").exists()


def test_a_dangling_link_named_like_the_next_receipt_does_not_stop_the_chain(
    tmp_path: Path,
) -> None:
    _chain(tmp_path, 1)
    (tmp_path / "000002-greet.json").symlink_to(tmp_path / "nowhere")
    written = write_receipt(tmp_path, receipt_sample())
    assert written.name == "000002-greet-2.json"
    assert verify_chain(tmp_path) == (2, [])


def test_a_name_with_a_trailing_newline_is_no_receipt(tmp_path: Path) -> None:
    _chain(tmp_path, 1)
    (tmp_path / "000002-greet.json\n").write_text("{}")
    assert verify_chain(tmp_path) == (1, [])
