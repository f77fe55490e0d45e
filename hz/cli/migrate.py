"""``hz migrate``: Heinzelmännchen contracts as hz contracts (``hz.compiler.migrate``)."""

from __future__ import annotations

import contextlib
import os
import secrets
import stat
from pathlib import Path, PurePath
from typing import TYPE_CHECKING

import click

from hz.cli.help import examples

if TYPE_CHECKING:
    from hz.compiler.migrate import Migration, Note

#: A directory's files that can be contracts (a Markdown file with an hz: frontmatter).
SUFFIX = ".md"


def _files(target: Path) -> list[tuple[Path, Path]]:
    """Each Markdown contract under ``target`` with its path relative to ``target`` (a file:
    its name), sorted; hidden folders are not entered."""
    from hz.compiler.load.markdown import has_hz_block
    from hz.runtime.artifacts.errors import HzError
    from hz.runtime.artifacts.printable import printable

    if target.is_symlink():
        # A migration rewrites the file: never the one a link points at, nor the link.
        raise HzError(f"{printable(str(target))} is a symbolic link: hz migrate edits files only")
    if target.is_file():
        return [(target, Path(target.name))]
    if not target.is_dir():
        raise HzError(f"no such file or directory: {printable(str(target))}")
    found = []
    for root, dirs, names in os.walk(target):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(names):
            path = Path(root) / name
            regular = name.endswith(SUFFIX) and path.is_file() and not path.is_symlink()
            if regular and has_hz_block(_read(path).decode("utf-8", errors="replace")):
                found.append((path, path.relative_to(target)))
    return found


def _read(path: Path) -> bytes:
    from hz.compiler.load.loader import MAX_BYTES
    from hz.runtime.artifacts.errors import HzError
    from hz.runtime.artifacts.regular_file import read_regular

    try:
        return read_regular(path, limit=MAX_BYTES + 1)
    except OSError as e:  # pragma: no cover - a file that changed after it was listed
        raise HzError(f"cannot read {path}: {e.strerror or e}") from e


def _mode(path: Path) -> int:
    from hz.runtime.artifacts.errors import HzError

    try:
        return stat.S_IMODE(path.lstat().st_mode)
    except OSError as e:  # pragma: no cover - a file that went after it was read
        raise HzError(f"cannot read {path}: {e.strerror or e}") from e


def _write_beneath(out: Path, relative: PurePath, text: str, mode: int, *, place: str) -> None:
    """Write ``text`` to ``out/relative`` atomically, never through a symbolic link below
    ``out`` (``place`` names ``out`` in the error): the source repository chooses the relative
    paths and may have planted a link in the output folder (``contracts/team -> ~/.claude``),
    and a folder migrated in place may be swapped for a link between listing and writing.
    Each folder is made and opened by descriptor from the one before, without following a link
    (``O_NOFOLLOW``), so what is written into is what was checked; a link met on the way is an
    error naming it. ``out`` itself is the operator's choice and is followed."""
    from hz.runtime.artifacts.errors import HzError
    from hz.runtime.artifacts.printable import printable

    shown = printable(str(out / relative))
    *folders, name = relative.parts
    try:
        out.mkdir(parents=True, exist_ok=True)
        fd = os.open(out, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError as e:
        raise HzError(f"cannot write {shown}: {e.strerror or e}") from e
    walked = out
    try:
        for folder in folders:
            walked = walked / folder
            with contextlib.suppress(FileExistsError):
                os.mkdir(folder, dir_fd=fd)
            try:
                inner = os.open(folder, _DIRECTORY, dir_fd=fd)
            except OSError as e:
                _refuse_link(fd, folder, walked, e, place)
                raise
            os.close(fd)
            fd = inner
        _refuse_link(fd, name, out / relative, None, place)
        temporary = f".{name}.{secrets.token_hex(6)}.tmp"
        handle = os.open(temporary, _NEW, 0o600, dir_fd=fd)
        try:
            with os.fdopen(handle, "wb") as f:
                f.write(text.encode("utf-8"))
                os.fchmod(f.fileno(), mode)
            os.replace(temporary, name, src_dir_fd=fd, dst_dir_fd=fd)
        finally:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(temporary, dir_fd=fd)
    except OSError as e:
        raise HzError(f"cannot write {shown}: {e.strerror or e}") from e
    finally:
        os.close(fd)


#: Where a migrated file is written, as an error names it, and what to do about a link there.
_OUT = "the output folder"
_IN_PLACE = "the folder being migrated"
_LINK_HINTS = {
    _OUT: "remove the link, or choose an output folder without links",
    _IN_PLACE: "a folder became a link after hz migrate listed it: see what made it, then "
    "migrate again",
}

_DIRECTORY = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_NEW = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC


def _refuse_link(fd: int, name: str, shown: Path, error: OSError | None, place: str) -> None:
    """``HzError`` when ``name`` in the directory ``fd`` is a symbolic link; else nothing."""
    from hz.runtime.artifacts.errors import HzError
    from hz.runtime.artifacts.printable import printable

    try:
        is_link = stat.S_ISLNK(os.lstat(name, dir_fd=fd).st_mode)
    except OSError:  # not there (yet): nothing to refuse
        return
    if is_link:
        raise HzError(
            f"{printable(str(shown))} is a symbolic link inside {place}: hz migrate does not "
            "write through it",
            hint=_LINK_HINTS[place],
        ) from error


@click.command(
    epilog=examples(
        "hz migrate workflows/ --check",
        "hz migrate workflows/ --out contracts/",
    )
)
@click.argument("target", type=click.Path(path_type=Path))
@click.option(
    "--out",
    type=click.Path(file_okay=False, path_type=Path),
    help="Write the migrated contracts under this folder (same relative paths), not in place.",
)
@click.option("--check", is_flag=True, help="Write nothing; exit 1 when a file would change.")
@click.option(
    "--namespace",
    type=click.Choice(["me", "team", "none"]),
    help="Heinzelmännchen's namespace of the contracts, carried into their names "
    "(NAMESPACE-NAME); default: a me/ or team/ folder in each file's path as given.",
)
def migrate(target: Path, out: Path | None, check: bool, namespace: str | None) -> int:
    """Convert Heinzelmännchen contracts (hz.schema: 1) in TARGET, a file or a folder, into hz
    contracts, key by key: the body, the comments and the key order stay as written.

    Every mapping and every key hz has no home for is reported with its code, line and what
    to decide (`hz explain HZ170`). A file that is already an hz contract is left as it is.
    Exit 1 when a file cannot be migrated, or with --check when one would change."""
    from hz.compiler.migrate import migrate as migrate_one
    from hz.runtime.artifacts.printable import printable

    files = _files(target)
    # In place, each file is written relative to the folder that was listed, by descriptor.
    base = target if target.is_dir() else target.parent
    given = "" if namespace == "none" else namespace
    results = [migrate_one(_read(path), str(path), given) for path, _ in files]
    # Each file keeps its permissions (a private contract stays private), as they were read.
    modes = [_mode(path) for path, _ in files]
    clashes = _collisions(results)
    failed = changed = 0
    for (path, relative), result, clash, mode in zip(files, results, clashes, modes, strict=True):
        shown = printable(str(path))
        # Not migrated for a clash: only what keeps it from being, as for any other error.
        for note in clash or result.notes:
            where = f"{shown}:{note.line}:{note.column}"
            click.echo(f"{where}: {note.kind}: {printable(note.message)} [{note.code}]")
            if note.decide:
                click.echo(f"  decide: {printable(note.decide)}")
        if result.failed or clash:
            failed += 1
            click.echo(f"{shown}: not migrated")
            continue
        if result.text is None:
            click.echo(f"{shown}: an hz contract already, unchanged")
            continue
        changed += 1
        decide = sum(1 for n in result.notes if n.kind == "decide")
        if check:
            click.echo(f"{shown}: would be migrated ({decide} to decide)")
            continue
        if out is not None:
            _write_beneath(out, relative, result.text, mode, place=_OUT)
        else:
            _write_beneath(base, relative, result.text, mode, place=_IN_PLACE)
        dest = (out / relative) if out is not None else path
        click.echo(f"{shown}: migrated to {printable(str(dest))} ({decide} to decide)")
    if not files:
        looked = "looked for *.md with an hz: frontmatter"
        click.echo(f"no contracts found in {printable(str(target))} ({looked})")
        return 1
    return 1 if failed or (check and changed) else 0


def _collisions(results: list[Migration]) -> list[tuple[Note, ...]]:
    """For each result, the HZ180 error when the hz.name it would write is another
    contract's: one that is an hz contract already, or one migrated before it."""
    from hz.compiler.migrate import Note
    from hz.compiler.rules.registry import HZ180
    from hz.runtime.artifacts.printable import printable

    holders: dict[str, str] = {}
    for result in results:
        if result.text is None and result.name is not None and not result.failed:
            holders.setdefault(result.name, result.path)
    out: list[tuple[Note, ...]] = []
    for result in results:
        if result.text is None or result.name is None:
            out.append(())
            continue
        other = holders.setdefault(result.name, result.path)
        if other == result.path:
            out.append(())
            continue
        line, column = result.name_at
        out.append(
            (
                Note(
                    HZ180,
                    "error",
                    line,
                    column,
                    f"hz.name would be {result.name}, the name of {printable(other)} too: two "
                    "jobs of one name are one job",
                    decide="give one of them a top-level name: of its own, then migrate again",
                ),
            )
        )
    return out
