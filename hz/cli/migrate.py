"""``hz migrate``: Heinzelmännchen contracts as hz contracts (``hz.compiler.migrate``)."""

from __future__ import annotations

import contextlib
import os
import secrets
import stat
from pathlib import Path, PurePath

import click

from hz.cli.help import examples

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


def _write_beneath(out: Path, relative: PurePath, text: str, mode: int) -> None:
    """Write ``text`` to ``out/relative`` atomically, never through a symbolic link below
    ``out``: the source repository chooses the relative paths and may have planted a link in
    the output folder (``contracts/team -> ~/.claude``). Each folder is made and opened by
    descriptor from the one before, without following a link (``O_NOFOLLOW``), so what is
    written into is what was checked; a link met on the way is an error naming it. ``out``
    itself is the operator's choice and is followed."""
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
                _refuse_link(fd, folder, walked, e)
                raise
            os.close(fd)
            fd = inner
        _refuse_link(fd, name, out / relative, None)
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


_DIRECTORY = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_NEW = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC


def _refuse_link(fd: int, name: str, shown: Path, error: OSError | None) -> None:
    """``HzError`` when ``name`` in the directory ``fd`` is a symbolic link; else nothing."""
    from hz.runtime.artifacts.errors import HzError
    from hz.runtime.artifacts.printable import printable

    try:
        is_link = stat.S_ISLNK(os.lstat(name, dir_fd=fd).st_mode)
    except OSError:  # not there (yet): nothing to refuse
        return
    if is_link:
        raise HzError(
            f"{printable(str(shown))} is a symbolic link inside the output folder: hz migrate "
            "does not write through it",
            hint="remove the link, or choose an output folder without links",
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
    from hz.runtime.artifacts.errors import HzError
    from hz.runtime.artifacts.files import write_atomically
    from hz.runtime.artifacts.printable import printable

    files = _files(target)
    failed = changed = 0
    for path, relative in files:
        shown = printable(str(path))
        given = "" if namespace == "none" else namespace
        result = migrate_one(_read(path), str(path), given)
        for note in result.notes:
            where = f"{shown}:{note.line}:{note.column}"
            click.echo(f"{where}: {note.kind}: {printable(note.message)} [{note.code}]")
            if note.decide:
                click.echo(f"  decide: {printable(note.decide)}")
        if result.failed:
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
        # The file keeps its permissions: a private contract stays private.
        mode = stat.S_IMODE(path.lstat().st_mode)
        dest = (out / relative) if out is not None else path
        if out is not None:
            _write_beneath(out, relative, result.text, mode)
        else:
            try:
                write_atomically(path, result.text, mode=mode)
            except OSError as e:
                raise HzError(f"cannot write {shown}: {e.strerror or e}") from e
        click.echo(f"{shown}: migrated to {printable(str(dest))} ({decide} to decide)")
    if not files:
        looked = "looked for *.md with an hz: frontmatter"
        click.echo(f"no contracts found in {printable(str(target))} ({looked})")
        return 1
    return 1 if failed or (check and changed) else 0
