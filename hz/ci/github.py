"""The script of the GitHub Action (``action.yml``): validate, check or compile, run jobs, and
report the way GitHub Actions reads it.

    python -m hz.ci.github --contracts contracts --jobs-dir build/jobs --run "a b" ...

It drives hz as a child process per step (``python -m hz validate|compile|run``), exactly as a
user's workflow would, so the action behaves like the documented commands and their exit
statuses. Each ``hz run`` bounds its own agent session; the timeout here is a backstop.

What it writes, from the ``GITHUB_*`` environment:

- stdout: the commands' ``--format github`` annotations, and one ``::error`` per job that did
  not complete (workflow-command data escaped);
- ``$GITHUB_OUTPUT``: ``results`` (a JSON object by job name), per job ``NAME-status``,
  ``NAME-draft`` (a file path) and ``NAME-structured-output`` (JSON), and when one job was
  asked for also ``status``, ``draft`` and ``structured_output``; every value in the
  multiline form with a delimiter that does not occur in it;
- ``$GITHUB_STEP_SUMMARY``: what was checked, or which step failed, and one table row per job
  (job, status, cost, duration, tool calls, limits), every string from outside escaped for
  Markdown and HTML.

When validation or the compile step fails, no job runs and both are written all the same: each
job asked for is ``error``, "not run" and why.

Exit status: 0 every job completed (or none was asked for), 1 validation, the compile step or a
job did not succeed, 2 a usage error (an unknown job name, a missing directory).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import secrets
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hz.runtime.artifacts.files import write_atomically
from hz.runtime.artifacts.printable import printable, printable_json
from hz.runtime.artifacts.regular_file import check_links

#: A backstop over the job's own timeout, for hz's start-up, rendering and receipt.
_GRACE_SECONDS = 120.0
#: A GitHub event document is a few KiB; more is not read.
_MAX_EVENT_BYTES = 8 * 1024 * 1024
_DRAFT_SUFFIX = {"markdown": ".md", "text": ".txt", "json": ".json"}
#: ASCII punctuation: CommonMark lets a backslash make any of it literal, which also stops HTML
#: (``\<``), entities (``\&``), table cells (``\|``), math (``\$``) and mentions (``\@``).
_PUNCTUATION = re.compile(r"([!-/:-@\[-`{-~])")
#: ``hz: error: …``, ``FILE:LINE:COL: error: …`` (a diagnostic), click's ``Error: …``.
_ERROR_LINE = re.compile(r"(?:^|: )(?:error|Error): ")


@dataclass(frozen=True)
class JobRun:
    """One job's run, as reported: the result JSON of ``hz run``, or why there is none
    (``exit_code`` None: ``hz run`` was not started, its ``job`` unread)."""

    name: str
    exit_code: int | None
    result: Mapping[str, Any] | None
    job: Mapping[str, Any]
    draft_path: Path | None
    error: str = ""
    #: Publishes staged, not written (a pull request from a fork): ``hz publish --staged``.
    staged: tuple[dict[str, Any], ...] = ()

    @property
    def status(self) -> str:
        return str(self.result["status"]) if self.result is not None else "error"


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    environ = os.environ
    contracts = args.contracts.split()
    if not contracts:
        return _usage("give at least one contract path (input 'contracts')")
    jobs_dir = Path(args.jobs_dir)
    failed = _failed_step(contracts, args)
    if failed is not None:
        return _nothing_ran(failed, args, environ)
    names = _job_names(args.run, jobs_dir)
    if isinstance(names, str):
        return _usage(names)
    if not names:
        _write_outputs(environ.get("GITHUB_OUTPUT"), [])
        _write_summary(environ.get("GITHUB_STEP_SUMMARY"), [], _passed_note(args))
        return 0
    drafts = Path(args.drafts_dir)
    try:  # a relative --drafts-dir is in the repository, where links can be planted
        if not drafts.is_absolute():
            check_links(drafts, Path.cwd())
    except OSError as e:
        return _usage(f"--drafts-dir {drafts} is {e.strerror}")
    drafts.mkdir(parents=True, exist_ok=True)
    args.fork = from_fork(environ)
    runs = [_run_job(name, jobs_dir, drafts, args) for name in names]
    for run in runs:
        if run.status != "completed":
            print(annotation(run))
    _write_outputs(environ.get("GITHUB_OUTPUT"), runs)
    _write_summary(environ.get("GITHUB_STEP_SUMMARY"), runs)
    return 0 if all(run.status == "completed" for run in runs) else 1


def _failed_step(contracts: list[str], args: argparse.Namespace) -> str | None:
    """Validate, then check or write the compiled jobs: None when both pass, else what failed
    (each problem is an annotation the command printed)."""
    if _hz("validate", *contracts, "--format", "github").returncode != 0:
        return "the contracts have errors (hz validate)"
    compile_args = ["compile", *contracts, "--out", args.jobs_dir, "--format", "github"]
    if args.compile == "check":
        compile_args.append("--check")
        if _hz(*compile_args).returncode != 0:
            return f"the compiled jobs in {args.jobs_dir} are not current (hz compile --check)"
    elif _hz(*compile_args).returncode != 0:
        return "the contracts did not compile (hz compile)"
    return None


def _nothing_ran(failed: str, args: argparse.Namespace, environ: Mapping[str, str]) -> int:
    """Validation or the compile step failed: no job runs, and the outputs and the summary say
    so for every job asked for (also one that is not compiled yet)."""
    asked = _job_names(args.run, Path(args.jobs_dir))
    names = asked if isinstance(asked, list) else list(dict.fromkeys(args.run.split()))
    runs = [JobRun(name, None, None, {}, None, error=f"not run: {failed}") for name in names]
    _write_outputs(environ.get("GITHUB_OUTPUT"), runs)
    _write_summary(environ.get("GITHUB_STEP_SUMMARY"), runs, _failure_note(failed, args))
    return 1


def _failure_note(failed: str, args: argparse.Namespace) -> str:
    """The summary's Markdown when validation or the compile step failed."""
    note = markdown_text(
        f"{failed[:1].upper()}{failed[1:]}: nothing ran. Each problem is an annotation."
    )
    if failed.endswith("(hz compile --check)"):
        # The usual cause on a first pull request: no compiled jobs committed yet.
        command = f"hz compile {' '.join(args.contracts.split())} --out {args.jobs_dir}"
        note += f" Compile them with {_code(command)} and commit {_code(args.jobs_dir)}."
    return note


def _passed_note(args: argparse.Namespace) -> str:
    jobs = "current" if args.compile == "check" else "written"
    return markdown_text(
        f"The contracts are valid; the compiled jobs in {args.jobs_dir} are {jobs}."
    )


def _code(text: str) -> str:
    """``text`` from the action's inputs as a Markdown code span (which shows every character,
    HTML included, as written), or escaped text when it could end the span."""
    return f"`{text}`" if "`" not in text and "\n" not in text else markdown_text(text)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m hz.ci.github", description=__doc__)
    parser.add_argument("--contracts", default="contracts", help="contract paths, space-separated")
    parser.add_argument("--jobs-dir", default="build/jobs")
    parser.add_argument("--compile", choices=("check", "write"), default="check")
    parser.add_argument("--run", default="", help="job names, space-separated, or 'all'")
    parser.add_argument("--inputs-dir", default="", help="NAME.json / NAME.yaml per job")
    parser.add_argument("--workdir", default=".")
    parser.add_argument("--receipt-dir", default="hz-receipts")
    parser.add_argument("--drafts-dir", default="hz-drafts")
    return parser


def _usage(message: str) -> int:
    print(f"::error title=hz action::{_command_data(message)}")
    print(f"hz action: error: {message}", file=sys.stderr)
    return 2


def _hz(
    *args: str, timeout: float | None = None, env: Mapping[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """``python -m hz ARGS`` with this interpreter; stdout passes through unless captured."""
    capture = args[0] in ("run", "publish")
    done = subprocess.run(
        [sys.executable, "-m", "hz", *args],
        capture_output=capture,
        text=True,
        timeout=timeout,
        check=False,
        env=None if env is None else {**os.environ, **env},
    )
    sys.stdout.flush()
    return done


def _job_names(requested: str, jobs_dir: Path) -> list[str] | str:
    names = requested.split()
    available = sorted(p.name.removesuffix(".job.json") for p in jobs_dir.glob("*.job.json"))
    if names == ["all"]:
        return available
    unknown = [name for name in names if name not in available]
    if unknown:
        return (
            f"no compiled job named {', '.join(unknown)} in {jobs_dir} "
            f"(there are: {', '.join(available) or 'none'})"
        )
    return list(dict.fromkeys(names))


def _inputs_file(inputs_dir: str, name: str) -> Path | None:
    if not inputs_dir:
        return None
    for suffix in (".json", ".yaml", ".yml"):
        candidate = Path(inputs_dir) / f"{name}{suffix}"
        if candidate.is_file():
            return candidate
    return None


def request_key(name: str, job: Mapping[str, Any], args: argparse.Namespace) -> str | None:
    """The request key of job ``name`` in this step: one per workflow run, attempt, workflow
    job and hz job, so a step the runner delivers again starts nothing twice while "Re-run
    jobs" (a new attempt) runs it again. The digest tells apart what the names cannot: two
    repositories, two legs of a matrix, two uses of the action in one job with other inputs.
    None outside GitHub Actions: every run is a new one."""
    environ = os.environ
    given = [environ.get(n, "") for n in ("GITHUB_RUN_ID", "GITHUB_RUN_ATTEMPT", "GITHUB_JOB")]
    if not all(given):
        return None
    inputs = _inputs_file(args.inputs_dir, name)
    config = environ.get("HZ_CONFIG", "")
    request = [
        environ.get("GITHUB_REPOSITORY", ""),
        str(job.get("digest")),
        inputs.read_text(encoding="utf-8", errors="replace") if inputs is not None else "",
        str(Path(args.workdir).resolve()),
        environ.get("HZ_RUNNER", ""),
        Path(config).read_text(encoding="utf-8", errors="replace") if config else "",
    ]
    digest = hashlib.sha256(json.dumps(request).encode()).hexdigest()[:16]
    run_id, attempt, workflow_job = (re.sub(r"[^A-Za-z0-9._-]", "_", v)[:100] for v in given)
    return f"github:{run_id}.{attempt}:{workflow_job}:{name}:{digest}"


#: ``hz run``'s refusal of a key that has a run: the step was delivered again. (A line of its
#: own: lines of runs reconciled first may come before it.)
_HELD = re.compile(
    r"^hz: error: run (run_[0-9]{8}_[0-9a-f]{12}) \([^)]*\) already holds this ", re.MULTILINE
)


def _run_job(name: str, jobs_dir: Path, drafts: Path, args: argparse.Namespace) -> JobRun:
    job_file = jobs_dir / f"{name}.job.json"
    job = json.loads(job_file.read_text(encoding="utf-8"))
    command = ["run", str(job_file), "--format", "json", "--workdir", args.workdir]
    command += ["--receipt-dir", args.receipt_dir]
    key = request_key(name, job, args)
    if key is not None:
        command += ["--request-key", key]
    inputs = _inputs_file(args.inputs_dir, name)
    if inputs is not None:
        command += ["--inputs", str(inputs)]
    print(f"::group::hz {' '.join(command)}")
    # A pull request from a fork publishes nothing: its steps wait for a person (approve).
    env = {"HZ_PUBLISH__MODE": "approve"} if args.fork else None
    try:
        done = _hz(*command, timeout=float(job["timeout_seconds"]) + _GRACE_SECONDS, env=env)
    except subprocess.TimeoutExpired:
        print("::endgroup::")
        return JobRun(name, -1, None, job, None, error="hz run did not end after the timeout")
    _untrusted_to_stderr(done.stderr)
    print("::endgroup::")
    try:
        result = json.loads(done.stdout) if done.stdout.strip() else None
    except json.JSONDecodeError:
        result = None
    code = done.returncode
    held = _HELD.search(done.stderr)
    if result is None and held is not None:
        # Delivered again: the run this step started before is the job's result.
        result, code, error = _earlier(held[1])
        if result is None:
            return JobRun(name, code, None, job, None, error=error)
    if not isinstance(result, dict):
        return JobRun(name, done.returncode, None, job, None, error=why_nothing_ran(done))
    draft_path = None
    if result.get("draft") is not None:
        suffix = _DRAFT_SUFFIX.get(str(job["output"]["format"]), ".txt")
        draft_path = drafts / f"{name}{suffix}"
        # Replaces a file or link in its place, never writes through it: a repository can plant
        # hz-drafts/NAME.md -> ~/.bashrc, and the draft is the agent's text.
        write_atomically(draft_path, str(result["draft"]))
    staged = _staged(done.stderr) if args.fork else ()
    return JobRun(name, code, result, job, draft_path, staged=staged)


#: What ``hz run`` says of a completed run whose publishes wait for approval.
_AWAITING = re.compile(r"^hz: [0-9]+ publish(?:es)? of (run_[0-9]{8}_[0-9a-f]{12}) await", re.M)


def _staged(stderr: str) -> tuple[dict[str, Any], ...]:
    """The staged publishes of the run ``hz run`` left awaiting approval (``hz publish RUN
    --staged``): what would be written, where, with which credential's name."""
    found = _AWAITING.search(stderr)
    if found is None:
        return ()
    shown = _hz("publish", found[1], "--staged", "--format", "json", timeout=120)
    _untrusted_to_stderr(shown.stderr)
    try:
        document = json.loads(shown.stdout)
    except json.JSONDecodeError:
        return ()
    if not isinstance(document, list):
        return ()
    return tuple(item | {"run_id": found[1]} for item in document if isinstance(item, dict))


def from_fork(environ: Mapping[str, str]) -> bool:
    """Whether this workflow runs for a pull request from another repository (a fork): its
    event's head repository is not its base (or is gone). Then nothing is published."""
    if environ.get("GITHUB_EVENT_NAME") not in ("pull_request", "pull_request_target"):
        return False
    try:
        with open(environ.get("GITHUB_EVENT_PATH", ""), "rb") as f:
            event = json.loads(f.read(_MAX_EVENT_BYTES))
    except (OSError, ValueError):
        return True  # a pull request hz cannot place is treated as the untrusted kind
    pull = event.get("pull_request") if isinstance(event, dict) else None
    head = ((pull or {}).get("head") or {}).get("repo") or {}
    base = ((pull or {}).get("base") or {}).get("repo") or {}
    return not head or head.get("full_name") != base.get("full_name")


def _earlier(run_id: str) -> tuple[dict[str, Any] | None, int, str]:
    """The result of a run of the ledger and its exit status (``hz runs show``), or why there
    is none."""
    from hz.runtime.ledger.view import exit_status

    shown = subprocess.run(
        [sys.executable, "-m", "hz", "runs", "show", run_id, "--format", "json"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    _untrusted_to_stderr(shown.stderr)
    try:
        document = json.loads(shown.stdout)
    except json.JSONDecodeError:
        return None, shown.returncode, f"hz runs show {run_id} printed no run"
    result = document.get("result")
    if isinstance(result, dict):
        return result, exit_status(document), ""
    state = printable(str(document.get("state")))
    return None, exit_status(document), f"run {run_id} of this step before is {state}"


def why_nothing_ran(done: subprocess.CompletedProcess[str]) -> str:
    """What ``hz run`` said when it printed no result (bad input values, a configuration or
    usage error): its first error line, not the summary or a hint after it. Hints and quoted
    lines are indented, and skipped."""
    lines = [line for line in done.stderr.splitlines() if line.strip() and line[0] != " "]
    errors = [line for line in lines if _ERROR_LINE.search(line)]
    if errors:
        more = len(errors) - 1
        return errors[0] + (f" (and {more} more error{'s' if more > 1 else ''})" if more else "")
    return lines[-1] if lines else f"hz run exited with {done.returncode}"


def annotation(run: JobRun) -> str:
    """The ``::error`` line of a run that did not complete. Its reason can be the agent's own
    words (an API error it relayed): escaped like every text hz shows."""
    title = _command_property(f"hz run {run.name}")
    return f"::error title={title}::{_command_data(printable(_headline(run)))}"


def _headline(run: JobRun) -> str:
    if run.result is None:
        return f"{run.name}: {run.error}"
    kind = run.result.get("failure_kind")
    head = run.status if kind is None else f"{run.status} ({kind})"
    reason = run.result.get("reason")
    return f"{run.name}: {head}" + (f": {reason}" if reason else "")


# --- $GITHUB_OUTPUT ---------------------------------------------------------------------------


def _outputs(runs: Sequence[JobRun]) -> dict[str, str]:
    results: dict[str, Any] = {}
    values: dict[str, str] = {}
    for run in runs:
        result = run.result or {}
        structured = printable_json(result.get("structured_output"))
        draft = "" if run.draft_path is None else str(run.draft_path)
        results[run.name] = {
            "status": run.status,
            "failure_kind": result.get("failure_kind"),
            "reason": result.get("reason") if run.result is not None else run.error,
            "exit_code": run.exit_code,
            "draft": draft or None,
            "structured_output": result.get("structured_output"),
            "cost_usd": result.get("cost_usd"),
            "duration_seconds": result.get("duration_seconds"),
        }
        values[f"{run.name}-status"] = run.status
        values[f"{run.name}-draft"] = draft
        values[f"{run.name}-structured-output"] = structured
    if len(runs) == 1:
        (only,) = runs
        values["status"] = values[f"{only.name}-status"]
        values["draft"] = values[f"{only.name}-draft"]
        values["structured_output"] = values[f"{only.name}-structured-output"]
    values["results"] = printable_json(results, sort_keys=True)
    return values


def output_block(name: str, value: str) -> str:
    """One ``$GITHUB_OUTPUT`` entry in the multiline form ``NAME<<DELIM``: safe for any value,
    since the random delimiter is chosen so that no line of the value equals it."""
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_-]*", name):
        raise ValueError(f"not an output name: {name!r}")
    delimiter = f"ghadelimiter_{secrets.token_hex(16)}"
    while delimiter in value:
        delimiter = f"ghadelimiter_{secrets.token_hex(16)}"
    return f"{name}<<{delimiter}\n{value}\n{delimiter}\n"


def _write_outputs(path: str | None, runs: Sequence[JobRun]) -> None:
    if not path:
        return
    with open(path, "a", encoding="utf-8") as f:
        for name, value in _outputs(runs).items():
            f.write(output_block(name, value))


# --- $GITHUB_STEP_SUMMARY ---------------------------------------------------------------------


def markdown_text(text: str) -> str:
    """``text`` from outside as inline Markdown that renders as exactly those characters: every
    ASCII punctuation character backslash-escaped, line breaks as spaces (a row is one line)."""
    return _PUNCTUATION.sub(r"\\\1", " ".join(text.split()))


def _limits(run: JobRun) -> str:
    if not run.job:  # not run: its job was not read
        return "—"
    unenforced = set((run.result or {}).get("limits_unenforced") or ())
    timeout = run.job["timeout_seconds"]
    budget = run.job["budget"]["max_usd"]
    parts = [("timeout", f"timeout {timeout:g} s"), ("budget", f"budget ${budget:.2f}")]
    shown = [text + (" (not enforced)" if key in unenforced else "") for key, text in parts]
    shown += [f"{key} (not enforced)" for key in sorted(unenforced - {"timeout", "budget"})]
    return ", ".join(shown)


def summary_markdown(runs: Sequence[JobRun], note: str = "") -> str:
    """``### hz``, the ``note`` (Markdown: what was checked, or what failed) and a table row
    per job when any was asked for."""
    head = "### hz\n\n" + (note + "\n\n" if note else "")
    if not runs:
        return head
    rows = ["| job | status | cost | duration | tool calls | limits |", "|---|---|---|---|---|---|"]
    for run in runs:
        result = run.result or {}
        cost = result.get("cost_usd")
        duration = result.get("duration_seconds")
        calls = result.get("tool_calls")
        cells = [
            markdown_text(run.name),
            markdown_text(_headline(run).removeprefix(f"{run.name}: ")),
            "—" if cost is None else f"\\${cost:.4f}",
            "—" if duration is None else f"{duration:.1f} s",
            "—" if calls is None else str(len(calls)),
            markdown_text(_limits(run)),
        ]
        rows.append("| " + " | ".join(cells) + " |")
    return head + "\n".join(rows) + "\n" + staged_markdown(runs)


def staged_markdown(runs: Sequence[JobRun]) -> str:
    """The publishes a pull request from a fork staged: per step where it would go, with which
    credential, and the body in a code block no line of it can close."""
    staged = [(run.name, item) for run in runs for item in run.staged]
    if not staged:
        return ""
    out = [
        "",
        "#### Staged publishes",
        "",
        "A pull request from a fork publishes nothing; a maintainer runs "
        "`hz publish RUN` to write these.",
    ]
    for name, item in staged:
        where = f"{item.get('to')} → {item.get('where')}"
        credential = item.get("credential")
        line = f"- {markdown_text(name)}, step {item.get('step')}: {markdown_text(where)}"
        if credential:
            line += f" (credential {markdown_text('$' + str(credential))})"
        line += f", run {markdown_text(str(item.get('run_id')))}"
        out += ["", line]
        if item.get("problem"):
            out.append(f"  refused: {markdown_text(str(item['problem']))}")
            continue
        body = "\n".join(printable(line) for line in str(item.get("body") or "").splitlines())
        fence = "`" * max(3, 1 + max((len(m) for m in re.findall(r"`+", body)), default=0))
        out += ["", f"{fence}text", body, fence]
    return "\n".join(out) + "\n"


def _write_summary(path: str | None, runs: Sequence[JobRun], note: str = "") -> None:
    if not path:
        return
    with open(path, "a", encoding="utf-8") as f:
        f.write(summary_markdown(runs, note))


# --- workflow commands ------------------------------------------------------------------------


def _untrusted_to_stderr(text: str) -> None:
    """``hz run``'s stderr, which quotes the agent's last stderr lines: GitHub reads a
    ``::command::`` at the start of any line (after blanks) of either stream, so a prompt-injected
    agent could annotate, mask or ``::stop-commands::`` the rest of the step. Commands are off
    (``::stop-commands::TOKEN`` ... ``::TOKEN::``, a token the text cannot know) while it prints."""
    if not text:
        return
    token = secrets.token_hex(16)
    separator = "" if text.endswith("\n") else "\n"
    sys.stderr.write(f"::stop-commands::{token}\n{text}{separator}::{token}::\n")
    sys.stderr.flush()


def _command_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _command_property(text: str) -> str:
    return _command_data(text).replace(":", "%3A").replace(",", "%2C")


if __name__ == "__main__":
    sys.exit(main())
