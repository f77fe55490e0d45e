"""``hz migrate``: Heinzelmännchen contracts as hz contracts (``hz.compiler.migrate``)."""

from __future__ import annotations

import errno
import os
import stat
from dataclasses import dataclass
from pathlib import Path, PurePath
from typing import TYPE_CHECKING

import click

from hz.cli.help import examples
from hz.runtime.artifacts.beneath import open_directory, open_folders, place_file
from hz.runtime.artifacts.errors import HzError

if TYPE_CHECKING:
    from hz.compiler.migrate import Migration, Note

#: A directory's files that can be contracts (a Markdown file with an hz: frontmatter).
SUFFIX = ".md"
#: The files ``hz validate`` and ``hz compile`` read as contracts besides Markdown: hz
#: contracts whose names a migrated contract must not take (HZ180).
YAML_SUFFIXES = (".yaml", ".yml")


@dataclass(frozen=True)
class _Listed:
    """A file listed, or with ``error`` one that cannot be listed or read (reported as not
    migrated)."""

    relative: PurePath
    error: HzError | None = None


@dataclass(frozen=True)
class _Read:
    """A listed file as read: its bytes and its status (the permissions and the owner that
    the migrated file keeps)."""

    relative: PurePath
    data: bytes
    status: os.stat_result


def _files(target: Path) -> tuple[Path, list[_Listed]]:
    """The folder a migration reads from and writes into in place (``target``, or the folder
    of a file ``target``), and each Markdown file under it that may be a contract, relative to
    it, sorted; hidden folders are not entered. Only listed here: each is read by descriptor
    from the folder (``_read``), so a folder swapped for a link after the listing is not
    followed. A folder below ``target`` that cannot be listed is an entry with its error."""
    from hz.runtime.artifacts.printable import printable

    shown = printable(str(target))
    try:
        mode = os.lstat(target).st_mode
    except FileNotFoundError as e:
        raise HzError(f"no such file or directory: {shown}") from e
    except OSError as e:  # a name too long, a loop of links, a file on the way, no access
        raise HzError(f"cannot read {shown}: {e.strerror or e}") from e
    if stat.S_ISLNK(mode):
        # A migration rewrites the file: never the one a link points at, nor the link.
        raise HzError(f"{shown} is a symbolic link: hz migrate edits files only")
    if stat.S_ISREG(mode):
        return target.parent, [_Listed(PurePath(target.name))]
    if not stat.S_ISDIR(mode):
        raise HzError(f"{shown} is neither a file nor a folder: hz migrate edits files only")
    return target, _listing(target)


def _listing(folder: Path, suffixes: tuple[str, ...] = (SUFFIX,)) -> list[_Listed]:
    """Each file under ``folder`` (no link) whose name ends in one of ``suffixes``, relative
    to it, sorted; hidden folders are not entered. A folder that cannot be listed is an entry
    with its error: ``folder`` itself an ``HzError``."""
    from hz.runtime.artifacts.printable import printable

    found: list[_Listed] = []

    def unlisted(error: OSError) -> None:
        where = Path(os.fsdecode(error.filename or folder))
        message = f"cannot list {printable(str(where))}: {error.strerror or error}"
        if where == folder:
            raise HzError(message) from error
        found.append(_Listed(where.relative_to(folder), HzError(message)))

    for root, dirs, names in os.walk(folder, onerror=unlisted):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(names):
            path = Path(root) / name
            if name.endswith(suffixes) and _is_file(path):
                found.append(_Listed(path.relative_to(folder)))
    return found


def _is_file(path: Path) -> bool:
    """Whether ``path`` is a regular file, no link; True when its name cannot be looked at
    (a path longer than the system takes): the read, by descriptor, tells."""
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except FileNotFoundError:
        return False
    except OSError:
        return True


def _names_in(
    out: Path, replaced: set[PurePath], place: str, suffixes: tuple[str, ...]
) -> dict[str, str]:
    """The hz.name of each hz contract already in the folder ``out`` (the output folder, or
    the one migrated in place: ``place``) in a file ending in one of ``suffixes`` (those
    ``hz compile`` reads), with its path; not of those at the ``replaced`` paths (this run's
    migrations go there: an earlier migration of the same file)."""
    from hz.compiler.migrate import name_of

    if not out.is_dir():
        return {}
    names: dict[str, str] = {}
    for listed in _listing(out, suffixes):
        if listed.relative in replaced:
            continue
        if listed.error is not None:  # a name unknown: what it would clash with is too
            raise listed.error
        source = _read(out, listed.relative, place)
        name = name_of(source.data, str(out / source.relative))
        if name is not None:
            names.setdefault(name, str(out / source.relative))
    return names


def _contracts(base: Path, listed: list[_Listed], place: str) -> list[_Read | _Listed]:
    """Each of ``listed`` under ``base`` that has an hz: frontmatter, as read; each that
    cannot be read, with its error."""
    from hz.compiler.load.markdown import has_hz_block

    found: list[_Read | _Listed] = []
    for listing in listed:
        if listing.error is not None:
            found.append(listing)
            continue
        try:
            source = _read(base, listing.relative, place)
        except HzError as e:
            found.append(_Listed(listing.relative, e))
            continue
        if has_hz_block(source.data.decode("utf-8", errors="replace")):
            found.append(source)
    return found


def _read(base: Path, relative: PurePath, place: str) -> _Read:
    """The bytes (at most the loader's limit and one) and the status of the regular file
    ``base/relative``, opened by descriptor from ``base`` without following a link
    (``open_folders``): a folder or the file swapped for a link after the listing is an error
    naming it, never a read of what it points at (which a migration would write back)."""
    from hz.compiler.load.loader import MAX_BYTES
    from hz.runtime.artifacts.printable import printable
    from hz.runtime.artifacts.regular_file import read_descriptor

    shown = base / relative
    *folders, name = relative.parts
    try:
        fd = _folder(base, folders, place, verb="read")
        try:
            _refuse_link(fd, name, shown, place, verb="read")
            handle = os.open(name, _FILE, dir_fd=fd)
        finally:
            os.close(fd)
        try:
            data = read_descriptor(handle, limit=MAX_BYTES + 1, path=shown)
            return _Read(relative, data, os.fstat(handle))
        finally:
            os.close(handle)
    except OSError as e:  # the file went, or became no regular file, after it was listed
        raise HzError(f"cannot read {printable(str(shown))}: {e.strerror or e}") from e


def _folder(base: Path, folders: list[str], place: str, *, verb: str, make: bool = False) -> int:
    """A descriptor of the folder ``base/folders``, each folder opened (and with ``make``
    made) by descriptor from the one before, without following a link (``open_folders``):
    what is read from or written into is what was checked. A link met on the way is an
    ``HzError`` naming it (``place`` names ``base``, ``verb`` what hz migrate does not do
    through it); ``base`` itself is the operator's choice and is followed. ``OSError``
    otherwise."""
    if make:
        base.mkdir(parents=True, exist_ok=True)
    root = open_directory(base)
    try:
        return open_folders(root, folders, make=make)
    except OSError as e:
        if e.errno == errno.ELOOP and e.filename:
            raise _link(base / e.filename, place, verb) from e
        if e.errno == errno.ENOTDIR and e.filename:
            raise OSError(e.errno, f"{base / e.filename} is not a folder") from e
        raise
    finally:
        os.close(root)


class _Changed(Exception):
    """The file migrated in place is no longer the one read."""


def _held(out: Path, relative: PurePath) -> bytes | None:
    """What the output folder holds at ``relative`` (``None``: nothing), read by descriptor
    without following a link (``_folder``); what keeps it from being read keeps it from being
    written: an ``HzError`` saying so."""
    from hz.compiler.load.loader import MAX_BYTES
    from hz.runtime.artifacts.printable import printable
    from hz.runtime.artifacts.regular_file import read_descriptor

    shown = out / relative
    *folders, name = relative.parts
    try:
        fd = _folder(out, folders, _OUT, verb="write")
        try:
            _refuse_link(fd, name, shown, _OUT, verb="write")
            handle = os.open(name, _FILE, dir_fd=fd)
        finally:
            os.close(fd)
        try:
            return read_descriptor(handle, limit=MAX_BYTES + 1, path=shown)
        finally:
            os.close(handle)
    except FileNotFoundError:
        return None
    except OSError as e:  # what is there keeps it from being written
        raise HzError(f"cannot write {printable(str(shown))}: {e.strerror or e}") from e


def _write(base: Path, relative: PurePath, text: str, kept: os.stat_result, place: str) -> None:
    """Write ``text`` to ``base/relative`` atomically (``place_file``), never through a
    symbolic link below ``base`` (``place`` names ``base`` in the error): the source
    repository chooses the relative paths and may have planted a link in the output folder
    (``contracts/team -> ~/.claude``), and a folder migrated in place may be swapped for a link
    between listing and writing. The folders are made and opened as ``_folder`` walks them.

    The migrated file keeps the original's permissions, never setuid, setgid or sticky (a
    contract is no program). In place it replaces the original, and keeps its exact
    permissions, owner and group (``kept``): a file of another user is refused unless hz runs
    as root, which gives it back to them. In the output folder it is a new file of whoever
    runs hz, as ``cp`` makes one: the original's permissions less the umask.

    In place, just before the migrated file takes the name, the name must still be the file
    that was read (device, inode, size and modification time as ``kept``): one saved in the
    meantime (an editor's) is not overwritten, the file's error says so. A file of several
    hard links is refused: renamed over, the other names would keep the original."""
    from hz.runtime.artifacts.printable import printable

    shown = printable(str(base / relative))
    *folders, name = relative.parts
    if place == _IN_PLACE:
        _refuse_hard_links(shown, kept)
    try:
        fd = _folder(base, folders, place, verb="write", make=place == _OUT)

        def unchanged() -> None:
            if place != _IN_PLACE:
                return
            try:
                now = os.lstat(name, dir_fd=fd)
            except FileNotFoundError as e:
                raise _Changed from e
            same = (now.st_dev, now.st_ino, now.st_size, now.st_mtime_ns)
            if same != (kept.st_dev, kept.st_ino, kept.st_size, kept.st_mtime_ns):
                raise _Changed

        try:
            _refuse_link(fd, name, base / relative, place, verb="write")
            place_file(
                fd,
                name,
                text.encode("utf-8"),
                temporary=f".hz-migrate-{os.getpid()}.tmp",
                replace=True,
                mode=stat.S_IMODE(kept.st_mode) & 0o777,
                like=kept if place == _IN_PLACE else None,
                before=unchanged,
            )
        finally:
            os.close(fd)
    except _Changed as e:
        raise HzError(
            f"cannot write {shown}: it changed after hz migrate read it (saved, replaced or "
            "removed in the meantime): not overwritten",
            hint="migrate it again",
        ) from e
    except PermissionError as e:
        if e.errno == errno.EPERM and place == _IN_PLACE and kept.st_uid != os.geteuid():
            raise HzError(
                f"cannot write {shown}: it is a file of user {kept.st_uid}, and migrated in "
                "place it would become yours",
                hint="migrate it as its owner (or as root, which keeps the owner), or with --out",
            ) from e
        raise HzError(f"cannot write {shown}: {e.strerror or e}") from e
    except OSError as e:
        raise HzError(f"cannot write {shown}: {e.strerror or e}") from e


def _refuse_hard_links(shown: str, kept: os.stat_result) -> None:
    """``HzError`` when the file read (``kept``), to be migrated in place, has several hard
    links; else nothing. ``--check`` asks it too, so it reports the refusal the run makes."""
    if kept.st_nlink > 1:
        raise HzError(
            f"cannot write {shown}: it has {kept.st_nlink} hard links, and migrated in place "
            "only this name would hold the migrated contract (the others keep the original)",
            hint="migrate it with --out, or make it a file of its own (cp FILE NEW && mv NEW "
            "FILE), then migrate again",
        )


#: Where a migrated file is written, as an error names it, and what to do about a link there.
_OUT = "the output folder"
_IN_PLACE = "the folder being migrated"
_LINK_HINTS = {
    _OUT: "remove the link, or choose an output folder without links",
    _IN_PLACE: "it became a link after hz migrate listed the folder: see what made it, then "
    "migrate again",
}

_FILE = os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC


def _refuse_link(fd: int, name: str, shown: Path, place: str, *, verb: str) -> None:
    """``HzError`` when ``name`` in the directory ``fd`` is a symbolic link; else nothing."""
    try:
        is_link = stat.S_ISLNK(os.lstat(name, dir_fd=fd).st_mode)
    except OSError:  # not there (yet): nothing to refuse
        return
    if is_link:
        raise _link(shown, place, verb)


def _link(shown: Path, place: str, verb: str) -> HzError:
    from hz.runtime.artifacts.printable import printable

    return HzError(
        f"{printable(str(shown))} is a symbolic link inside {place}: hz migrate does not "
        f"{verb} through it",
        hint=_LINK_HINTS[place],
    )


def _refused(shown: str, error: HzError) -> None:
    """The report's lines for a file an error kept from being migrated."""
    from hz.runtime.artifacts.printable import printable

    click.echo(f"{shown}: error: {printable(error.message)}")
    if error.hint:
        click.echo(f"  hint: {printable(error.hint)}")
    click.echo(f"{shown}: not migrated")


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
@click.option(
    "--check",
    is_flag=True,
    help="Write nothing; exit 1 when a file would change (with --out: when a file there is "
    "not what hz migrate writes now).",
)
@click.option(
    "--namespace",
    type=click.Choice(["me", "team", "none"]),
    help="Heinzelmännchen's namespace of the contracts, carried into their names "
    "(NAMESPACE-NAME); default: a me/ or team/ folder in each file's path as given.",
)
@click.option(
    "--force",
    is_flag=True,
    help="With --out: overwrite a file there that differs from what hz migrate writes now "
    "(edited since an earlier migration).",
)
def migrate(target: Path, out: Path | None, check: bool, namespace: str | None, force: bool) -> int:
    """Convert Heinzelmännchen contracts (hz.schema: 1) in TARGET, a file or a folder, into hz
    contracts, key by key: the body, the comments and the key order stay as written.

    Every mapping and every key hz has no home for is reported with its code, line and what
    to decide (`hz explain HZ170`). A file that is already an hz contract is left as it is.
    With --out, a file there that differs from what hz migrate writes now is not overwritten
    without --force, and --check compares with the files there.
    Exit 1 when a file cannot be migrated, or with --check when one would change."""
    from hz.compiler.migrate import migrate as migrate_one
    from hz.runtime.artifacts.printable import printable

    # Each file is read, and in place written, by descriptor from the folder that was listed.
    base, listed = _files(target)
    files = _contracts(base, listed, _IN_PLACE)
    given = "" if namespace == "none" else namespace
    read = [source for source in files if isinstance(source, _Read)]
    results = [migrate_one(s.data, str(base / s.relative), given) for s in read]
    # With --out, the names of the hz contracts there are taken too (the file each migration
    # replaces aside); in place, those of a folder's hz contracts in YAML; a file migrated in
    # place on its own is checked against itself only.
    replaced = {source.relative for source in files}
    if out is not None:
        taken = _names_in(out, replaced, _OUT, (SUFFIX, *YAML_SUFFIXES))
    elif base == target:  # a folder migrated in place: its Markdown contracts are in results
        taken = _names_in(base, replaced, _IN_PLACE, YAML_SUFFIXES)
    else:
        taken = {}
    skip = {os.path.realpath(out / r) for r in replaced} if out is not None else set()
    clashes = _collisions(results, taken, skip)
    migrations = {s.relative: (r, c) for s, r, c in zip(read, results, clashes, strict=True)}
    failed = changed = 0
    # One file's error (a link in the output folder, a file gone) is that file's: reported,
    # and the others are migrated still.
    for source in files:
        path = base / source.relative
        shown = printable(str(path))
        if isinstance(source, _Listed):
            failed += 1
            _refused(shown, source.error or HzError(f"cannot read {shown}"))
            continue
        result, clash = migrations[source.relative]
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
        decide = sum(1 for n in result.notes if n.kind == "decide")
        dest = (out / source.relative) if out is not None else path
        written = printable(str(dest))
        try:
            held = _held(out, source.relative) if out is not None else None
        except HzError as e:
            failed += 1
            _refused(shown, e)
            continue
        if held == result.text.encode("utf-8"):
            click.echo(f"{shown}: {written} is up to date ({decide} to decide)")
            continue
        changed += 1
        # Not the user's edits of an earlier migration (unless told), nor the source itself
        # when the output folder is the folder migrated.
        edited = held is not None and os.path.realpath(dest) != os.path.realpath(path)
        if check:
            try:  # what the run would refuse, --check reports as the run does
                if out is None:
                    _refuse_hard_links(written, source.status)
            except HzError as e:
                failed += 1
                _refused(shown, e)
                continue
            where = f" to {written}" if out is not None else ""
            was = ", not there yet" if out is not None and held is None else ""
            was = ", which holds something else" if edited else was
            click.echo(f"{shown}: would be migrated{where}{was} ({decide} to decide)")
            continue
        if edited and not force:
            failed += 1
            _refused(
                shown,
                HzError(
                    f"{written} differs from what hz migrate writes now (edited since it was "
                    "migrated?): not overwritten",
                    hint="keep your edits (compare with a migration into another folder), or "
                    "migrate again with --force to overwrite it",
                ),
            )
            continue
        try:
            if out is not None:
                _write(out, source.relative, result.text, source.status, _OUT)
            else:
                _write(base, source.relative, result.text, source.status, _IN_PLACE)
        except HzError as e:
            failed += 1
            _refused(shown, e)
            continue
        click.echo(f"{shown}: migrated to {written} ({decide} to decide)")
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
                    decide="give one of them a top-level `name` of its own, then migrate again",
                ),
            )
        )
    return out
