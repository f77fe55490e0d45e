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


def _files(target: Path) -> tuple[Path, list[PurePath]]:
    """The folder a migration reads from and writes into in place (``target``, or the folder
    of a file ``target``), and each Markdown file under it that may be a contract, relative to
    it, sorted; hidden folders are not entered. Only listed here: each is read by descriptor
    from the folder (``_read``), so a folder swapped for a link after the listing is not
    followed."""
    from hz.runtime.artifacts.errors import HzError
    from hz.runtime.artifacts.printable import printable

    if target.is_symlink():
        # A migration rewrites the file: never the one a link points at, nor the link.
        raise HzError(f"{printable(str(target))} is a symbolic link: hz migrate edits files only")
    if target.is_file():
        return target.parent, [PurePath(target.name)]
    if not target.is_dir():
        raise HzError(f"no such file or directory: {printable(str(target))}")
    return target, _listing(target)


def _listing(folder: Path) -> list[PurePath]:
    """Each ``*.md`` file under ``folder`` (no link), relative to it, sorted; hidden folders
    are not entered."""
    found: list[PurePath] = []
    for root, dirs, names in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(names):
            path = Path(root) / name
            if name.endswith(SUFFIX) and path.is_file() and not path.is_symlink():
                found.append(path.relative_to(folder))
    return found


def _names_in(out: Path, replaced: set[PurePath]) -> dict[str, str]:
    """The hz.name of each hz contract already in the output folder, with its path; not of
    those at the ``replaced`` paths (this run's migrations go there: an earlier migration of
    the same file)."""
    from hz.compiler.migrate import name_of

    if not out.is_dir():
        return {}
    names: dict[str, str] = {}
    for relative, data, _ in _contracts(out, _listing(out), _OUT):
        if relative in replaced:
            continue
        name = name_of(data, str(out / relative))
        if name is not None:
            names.setdefault(name, str(out / relative))
    return names


def _contracts(base: Path, listed: list[PurePath], place: str) -> list[tuple[PurePath, bytes, int]]:
    """Each of ``listed`` under ``base`` that has an hz: frontmatter: its bytes and its
    permissions, as read."""
    from hz.compiler.load.markdown import has_hz_block

    found = []
    for relative in listed:
        data, mode = _read(base, relative, place)
        if has_hz_block(data.decode("utf-8", errors="replace")):
            found.append((relative, data, mode))
    return found


def _read(base: Path, relative: PurePath, place: str) -> tuple[bytes, int]:
    """The bytes (at most the loader's limit and one) and the permissions of the regular file
    ``base/relative``, opened by descriptor from ``base`` without following a link
    (``_beneath``): a folder or the file swapped for a link after the listing is an error
    naming it, never a read of what it points at (which a migration would write back)."""
    from hz.compiler.load.loader import MAX_BYTES
    from hz.runtime.artifacts.errors import HzError
    from hz.runtime.artifacts.printable import printable
    from hz.runtime.artifacts.regular_file import read_descriptor

    shown = base / relative
    *folders, name = relative.parts
    try:
        fd = _beneath(base, folders, place, verb="read")
        try:
            _refuse_link(fd, name, shown, None, place, verb="read")
            handle = os.open(name, _FILE, dir_fd=fd)
        finally:
            os.close(fd)
        try:
            return read_descriptor(handle, limit=MAX_BYTES + 1, path=shown), stat.S_IMODE(
                os.fstat(handle).st_mode
            )
        finally:
            os.close(handle)
    except OSError as e:  # the file went, or became no regular file, after it was listed
        raise HzError(f"cannot read {printable(str(shown))}: {e.strerror or e}") from e


def _beneath(base: Path, folders: list[str], place: str, *, verb: str, make: bool = False) -> int:
    """A descriptor of the folder ``base/folders``, each folder opened (and with ``make``
    made) by descriptor from the one before, without following a link (``O_NOFOLLOW``): what
    is read from or written into is what was checked. A link met on the way is an ``HzError``
    naming it (``place`` names ``base``, ``verb`` what hz migrate does not do through it);
    ``base`` itself is the operator's choice and is followed."""
    if make:
        base.mkdir(parents=True, exist_ok=True)
    fd = os.open(base, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    walked = base
    try:
        for folder in folders:
            walked = walked / folder
            if make:
                with contextlib.suppress(FileExistsError):
                    os.mkdir(folder, dir_fd=fd)
            try:
                inner = os.open(folder, _DIRECTORY, dir_fd=fd)
            except OSError as e:
                _refuse_link(fd, folder, walked, e, place, verb=verb)
                raise
            os.close(fd)
            fd = inner
    except BaseException:
        os.close(fd)
        raise
    return fd


def _write_beneath(out: Path, relative: PurePath, text: str, mode: int, *, place: str) -> None:
    """Write ``text`` to ``out/relative`` atomically, never through a symbolic link below
    ``out`` (``place`` names ``out`` in the error): the source repository chooses the relative
    paths and may have planted a link in the output folder (``contracts/team -> ~/.claude``),
    and a folder migrated in place may be swapped for a link between listing and writing.
    The folders are made and opened as ``_beneath`` walks them."""
    from hz.runtime.artifacts.errors import HzError
    from hz.runtime.artifacts.printable import printable

    shown = printable(str(out / relative))
    *folders, name = relative.parts
    try:
        fd = _beneath(out, folders, place, verb="write", make=True)
    except OSError as e:
        raise HzError(f"cannot write {shown}: {e.strerror or e}") from e
    try:
        _refuse_link(fd, name, out / relative, None, place, verb="write")
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
    _IN_PLACE: "it became a link after hz migrate listed the folder: see what made it, then "
    "migrate again",
}

_DIRECTORY = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_NEW = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
_FILE = os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC


def _refuse_link(
    fd: int, name: str, shown: Path, error: OSError | None, place: str, *, verb: str
) -> None:
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
            f"{verb} through it",
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

    # Each file is read, and in place written, by descriptor from the folder that was listed.
    base, listed = _files(target)
    files = _contracts(base, listed, _IN_PLACE)
    given = "" if namespace == "none" else namespace
    results = [migrate_one(data, str(base / relative), given) for relative, data, _ in files]
    # With --out, the names of the hz contracts there are taken too (the file each migration
    # replaces aside); a file migrated in place, or a folder, is checked against itself only.
    replaced = {relative for relative, _, _ in files}
    taken = _names_in(out, replaced) if out is not None else {}
    skip = {os.path.realpath(out / r) for r in replaced} if out is not None else set()
    clashes = _collisions(results, taken, skip)
    failed = changed = 0
    # Each file keeps its permissions (a private contract stays private), as they were read.
    for (relative, _, mode), result, clash in zip(files, results, clashes, strict=True):
        path = base / relative
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


def _collisions(
    results: list[Migration], taken: dict[str, str], replaced: set[str]
) -> list[tuple[Note, ...]]:
    """For each result, the HZ180 error when the hz.name it would write is another
    contract's: one in the output folder (``taken``: by name, its path), one that is an hz
    contract already, or one migrated before it. A contract of the run that is at one of the
    ``replaced`` paths (real paths: the output folder inside the folder migrated) is a file
    this run replaces, and holds no name."""
    from hz.compiler.migrate import Note
    from hz.compiler.rules.registry import HZ180
    from hz.runtime.artifacts.printable import printable

    holders = dict(taken)
    for result in results:
        if result.text is None and result.name is not None and not result.failed:
            if replaced and os.path.realpath(result.path) in replaced:
                continue
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
