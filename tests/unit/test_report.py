"""The reporters: exact text and GitHub output, snapshots for JSON and SARIF, summaries."""

from __future__ import annotations

import io
import json

import pytest
from syrupy.assertion import SnapshotAssertion

from hz.compiler.diagnostics import Diagnostic
from hz.compiler.report.formats import summary, write_report
from hz.compiler.report.sarif import rule_title

DIAGNOSTICS = [
    Diagnostic(
        "HZ007",
        "duplicate key 'name' (first defined at line 2, column 3)",
        "b.yaml",
        5,
        3,
        hint="YAML would silently keep only one of them; remove or rename one",
    ),
    Diagnostic(
        "HZ003",
        "file is larger than 256 KiB (262,144 bytes), the limit for a contract",
        "contracts/big file.yaml",
    ),
    Diagnostic("HZ998", "unknown key 'timout', did you mean 'timeout'?", "b.yaml", 3, 3),
    Diagnostic(
        "HZ999",
        "odd: 50% done, a,b\r\nnext line",
        "a.yaml",
        1,
        1,
        severity="warning",
        hint="see: docs",
    ),
]


def run(fmt: str, diagnostics: list[Diagnostic] = DIAGNOSTICS, files: int = 4) -> tuple[str, str]:
    out, err = io.StringIO(), io.StringIO()
    write_report(diagnostics, fmt=fmt, files_checked=files, out=out, err=err, tool_version="9.9.9")
    return out.getvalue(), err.getvalue()


def test_text() -> None:
    out, err = run("text")
    assert out == (
        "a.yaml:1:1: warning: odd: 50% done, a,b\\r\\nnext line [HZ999]\n"
        "  hint: see: docs\n"
        "b.yaml:3:3: error: unknown key 'timout', did you mean 'timeout'? [HZ998]\n"
        "b.yaml:5:3: error: duplicate key 'name' (first defined at line 2, column 3) [HZ007]\n"
        "  hint: YAML would silently keep only one of them; remove or rename one\n"
        "contracts/big file.yaml:0:0: error: file is larger than 256 KiB (262,144 bytes), "
        "the limit for a contract [HZ003]\n"
    )
    assert err == "Found 3 errors and 1 warning in 3 files (checked 4 files)\n"


def test_github() -> None:
    out, _ = run("github")
    assert out.splitlines() == [
        "::warning file=a.yaml,line=1,col=1,title=HZ999::odd: 50%25 done, a,b\\r\\nnext line"
        "%0Ahint: see: docs",
        "::error file=b.yaml,line=3,col=3,title=HZ998::unknown key 'timout', did you mean "
        "'timeout'?",
        "::error file=b.yaml,line=5,col=3,title=HZ007::duplicate key 'name' (first defined at "
        "line 2, column 3)%0Ahint: YAML would silently keep only one of them; remove or rename one",
        "::error file=contracts/big file.yaml,title=HZ003::file is larger than 256 KiB "
        "(262,144 bytes), the limit for a contract",
    ]


def test_github_escapes_properties() -> None:
    weird = Diagnostic("HZ004", "m", "dir,x/a:b%.yaml", 2, 0)
    out, _ = run("github", [weird], 1)
    assert out == "::error file=dir%2Cx/a%3Ab%25.yaml,line=2,title=HZ004::m\n"


def test_json(snapshot: SnapshotAssertion) -> None:
    out, err = run("json")
    report = json.loads(out)
    assert report["version"] == 1
    assert (report["files_checked"], report["errors"], report["warnings"]) == (4, 3, 1)
    assert report["diagnostics"][0] == {
        "file": "a.yaml",
        "line": 1,
        "column": 1,
        "severity": "warning",
        "code": "HZ999",
        "message": "odd: 50% done, a,b\r\nnext line",
        "hint": "see: docs",
    }
    assert out == snapshot
    assert err == "Found 3 errors and 1 warning in 3 files (checked 4 files)\n"


def test_sarif(snapshot: SnapshotAssertion) -> None:
    out, _ = run("sarif")
    log = json.loads(out)
    assert log["version"] == "2.1.0"
    driver = log["runs"][0]["tool"]["driver"]
    assert (driver["name"], driver["version"]) == ("hz", "9.9.9")
    # The title comes from the rule's document; HZ998 and HZ999 have none.
    assert driver["rules"][0] == {
        "id": "HZ003",
        "shortDescription": {"text": "File is larger than 256 KiB"},
    }
    assert [r["id"] for r in driver["rules"]] == ["HZ003", "HZ007", "HZ998", "HZ999"]
    assert "shortDescription" not in driver["rules"][2]
    results = log["runs"][0]["results"]
    assert [(r["ruleId"], r["ruleIndex"], r["level"]) for r in results] == [
        ("HZ999", 3, "warning"),
        ("HZ998", 2, "error"),
        ("HZ007", 1, "error"),
        ("HZ003", 0, "error"),
    ]
    assert results[2]["message"]["text"] == (
        "duplicate key 'name' (first defined at line 2, column 3)\n"
        "hint: YAML would silently keep only one of them; remove or rename one"
    )
    assert results[2]["locations"] == [
        {
            "physicalLocation": {
                "artifactLocation": {"uri": "b.yaml"},
                "region": {"startLine": 5, "startColumn": 3},
            }
        }
    ]
    # A whole-file diagnostic has no region; a space in a path is escaped in the URI.
    assert results[3]["locations"] == [
        {"physicalLocation": {"artifactLocation": {"uri": "contracts/big%20file.yaml"}}}
    ]
    assert out == snapshot


def test_output_is_deterministic() -> None:
    assert run("sarif") == run("sarif", list(reversed(DIAGNOSTICS)))
    assert run("text") == run("text", list(reversed(DIAGNOSTICS)))


@pytest.mark.parametrize("fmt", ["text", "json", "github", "sarif"])
def test_no_diagnostics(fmt: str) -> None:
    out, err = run(fmt, [], 5)
    assert err == "Success: no issues found in 5 files\n"
    if fmt in ("text", "github"):
        assert out == ""
    elif fmt == "json":
        assert json.loads(out) == {
            "version": 1,
            "files_checked": 5,
            "errors": 0,
            "warnings": 0,
            "diagnostics": [],
        }
    else:
        assert json.loads(out)["runs"][0]["results"] == []


def test_summaries() -> None:
    error = Diagnostic("HZ004", "m", "a.yaml", 1, 1)
    warning = Diagnostic("HZ004", "m", "a.yaml", 1, 1, severity="warning")
    assert summary([], 1) == "Success: no issues found in 1 file"
    assert summary([error], 1) == "Found 1 error in 1 file (checked 1 file)"
    assert summary([warning], 2) == "Success: no errors found in 2 files (1 warning)"


ARGUMENT = Diagnostic(
    "HZ702", "input 'week': \"x\" is wrong", "--input week=x\n::warning::y", argument=True
)


def test_an_argument_is_shown_as_it_is_and_counted_apart_from_files() -> None:
    out, err = run("text", [ARGUMENT], 1)
    assert out == ("--input week=x\\n::warning::y: error: input 'week': \"x\" is wrong [HZ702]\n")
    assert err == "Found 1 error on the command line (checked 1 file)\n"
    both = [ARGUMENT, Diagnostic("HZ702", "m", "in.json", 1, 2)]
    assert summary(both, 2) == "Found 2 errors in 1 file and on the command line (checked 2 files)"
    assert summary(both, 2, "2 contracts") == (
        "Found 2 errors in 1 file and on the command line (checked 2 contracts)"
    )


def test_an_argument_is_no_file_in_the_machine_formats() -> None:
    (github,) = run("github", [ARGUMENT], 1)[0].splitlines()
    assert github == (
        "::error title=HZ702::--input week=x\\n::warning::y: input 'week': \"x\" is wrong"
    )
    (found,) = json.loads(run("json", [ARGUMENT], 1)[0])["diagnostics"]
    assert (found["file"], found["line"], found["argument"]) == (ARGUMENT.file, 0, True)
    (result,) = json.loads(run("sarif", [ARGUMENT], 1)[0])["runs"][0]["results"]
    assert "locations" not in result
    assert result["message"]["text"] == f"{ARGUMENT.file}: {ARGUMENT.message}"


def test_unknown_format() -> None:
    with pytest.raises(ValueError, match="unknown report format 'xml'"):
        run("xml")


def test_rule_title() -> None:
    assert rule_title("HZ007") == "Duplicate key"
    assert rule_title("HZ999") is None


@pytest.mark.parametrize("fmt", ["text", "github"])
def test_control_characters_from_a_contract_are_escaped(fmt: str) -> None:
    hostile = Diagnostic(
        "HZ502",
        "prompt: inputs.x\n::error::pwned\x1b[2J is not a declared input",
        "a\nb.yaml",
        1,
        1,
        hint="declared inputs: y\u202e",
    )
    out, _ = run(fmt, [hostile], 1)
    assert (
        out
        == {
            "text": "a\\nb.yaml:1:1: error: prompt: inputs.x\\n::error::pwned\\x1b[2J is not a "
            "declared input [HZ502]\n  hint: declared inputs: y\\u202e\n",
            "github": "::error file=a\\nb.yaml,line=1,col=1,title=HZ502::prompt: inputs.x\\n"
            "::error::pwned\\x1b[2J is not a declared input%0Ahint: declared inputs: y\\u202e\n",
        }[fmt]
    )
    assert len(out.splitlines()) == (2 if fmt == "text" else 1)


#: C1 controls (U+009B is a terminal's CSI), a line separator, bidi overrides and isolates, and
#: a lone surrogate (from a file name that is not UTF-8).
DANGEROUS = "\x85\x9b2J\u2028\u202a\u202e\u2066\u2069\x7f\udcff"


@pytest.mark.parametrize("fmt", ["text", "github", "json", "sarif"])
def test_c1_controls_and_bidi_overrides_are_escaped_in_every_format(fmt: str) -> None:
    hostile = Diagnostic("HZ502", f"m{DANGEROUS}", f"f{DANGEROUS}.yaml", 1, 1, hint=DANGEROUS)
    out, _ = run(fmt, [hostile], 1)
    assert out.isascii()
    out.encode("utf-8")  # no lone surrogate left to fail the write
    if fmt in ("json", "sarif"):
        report = json.loads(out)
        message = report["diagnostics"][0] if fmt == "json" else report["runs"][0]["results"][0]
        assert message["message"] == (
            f"m{DANGEROUS}" if fmt == "json" else {"text": f"m{DANGEROUS}\nhint: {DANGEROUS}"}
        )
        assert "\\u0085\\u009b2J\\u2028\\u202a\\u202e\\u2066\\u2069\\u007f\\udcff" in out
    else:
        assert "\\x85\\x9b2J\\u2028\\u202a\\u202e\\u2066\\u2069\\x7f\\udcff" in out


def test_json_keeps_printable_text_as_it_is() -> None:
    out, _ = run("json", [Diagnostic("HZ502", "é 😀 中", "a.yaml", 1, 1)], 1)
    assert '"message": "é 😀 中"' in out
