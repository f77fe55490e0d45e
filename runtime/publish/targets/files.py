"""``files.write``: the draft as a file in a folder the operator allows.

The contract's path is relative, without ``..``; it must lie in one of ``[publish] folders``
(relative to the working directory, or absolute). Every directory on the way is opened
without following a link (``O_NOFOLLOW``, one ``dir_fd`` at a time), so no link leads out of
the folder; missing ones inside it are made. A folder inside the working directory is reached
the same way from a descriptor of the working directory (the repository checked out there is
the project's: it can commit the folder itself as a link to ``/etc/cron.d``); only a folder the
operator names outside the working directory is opened as given. Where a draft goes is said as
the real path: what ``--staged`` shows is where it is written.

The file is written to a temporary name, synced, then linked into place (``link`` fails when
the name exists: no overwrite) or, with ``overwrite`` allowed by both the operator and the
contract, renamed over it. A sidecar ``.NAME.hz-publish.json`` beside it holds the step's
marker and the draft's digest: the lookup after an unobserved write.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import os
from pathlib import Path, PurePosixPath

from hz.runtime.artifacts.beneath import open_directory, open_folders, place_file
from hz.runtime.ledger.store import Step
from hz.runtime.publish.draft import Payload
from hz.runtime.publish.targets.base import Refused

SIDECAR = ".{name}.hz-publish.json"
#: The longest name a draft's file may take, in bytes: its temporary name
#: (``.NAME.hz-RUN-STEP.tmp``, some 40 bytes more) must stay within a file system's 255.
MAX_NAME_BYTES = 200


def check_path(path: str, folders: tuple[str, ...], workdir: Path) -> tuple[Path, PurePosixPath]:
    """The allowed folder (absolute) and the path below it, or ``Refused``."""
    pure = PurePosixPath(path)
    if pure.is_absolute() or "\\" in path or "\x00" in path:
        raise Refused(f"files.write: {path!r} must be a relative path")
    if any(part in ("..", ".") for part in path.split("/")) or path.endswith("/"):
        raise Refused(f"files.write: {path!r} must name a file without '.' or '..' parts")
    if not path.isprintable():  # a newline, an ESC, a bidi override: not a name to make
        raise Refused(f"files.write: {path!r} has characters that are not printable")
    if any(len(part.encode("utf-8")) > MAX_NAME_BYTES for part in path.split("/")):
        raise Refused(f"files.write: a name in {path!r} is longer than {MAX_NAME_BYTES} bytes")
    wanted = PurePosixPath(os.path.normpath(workdir)) / pure
    for folder in folders:
        base = PurePosixPath(
            os.path.normpath(folder if os.path.isabs(folder) else workdir / folder)
        )
        try:
            relative = wanted.relative_to(base)
        except ValueError:
            continue
        if relative.parts:
            return Path(base), relative
    raise Refused(
        f"files.write: {path!r} is in no folder [publish] folders allows "
        f"({', '.join(folders) or 'none'})"
    )


class FilesPublisher:
    def __init__(self, folders: tuple[str, ...], workdir: Path, *, overwrite: bool) -> None:
        self.folders = folders
        self.workdir = workdir
        self.overwrite = overwrite

    def credential(self, step: Step) -> str | None:
        return None

    def where(self, step: Step) -> str:
        """The real path the step writes (``Refused`` when its folder cannot be reached
        without following a link)."""
        base, relative = check_path(str(step.args.get("path", "")), self.folders, self.workdir)
        os.close(_open_dirs(base, (), make=False, workdir=self.workdir))
        return str(_real(base, self.workdir) / relative)

    def write(self, step: Step, payload: Payload) -> str:
        base, relative = check_path(str(step.args.get("path", "")), self.folders, self.workdir)
        replace = bool(step.args.get("overwrite")) and self.overwrite
        data = payload.text.encode("utf-8")
        where = _real(base, self.workdir) / relative
        try:
            directory = _open_dirs(base, relative.parent.parts, make=True, workdir=self.workdir)
        except OSError as e:
            raise Refused(f"files.write: cannot make the folders of {where}: {e.strerror}") from e
        try:
            _place(directory, relative.name, step, data, replace=replace, where=where)
            # In place: what fails from here on leaves the file written (its digest finds it).
            with contextlib.suppress(OSError):
                _write_sidecar(directory, relative.name, step, hashlib.sha256(data).hexdigest())
                os.fsync(directory)
        finally:
            os.close(directory)
        return str(where)

    def lookup(self, step: Step) -> str | None:
        base, relative = check_path(str(step.args.get("path", "")), self.folders, self.workdir)
        try:
            directory = _open_dirs(base, relative.parent.parts, make=False, workdir=self.workdir)
        except (Refused, FileNotFoundError):
            return None
        where = str(_real(base, self.workdir) / relative)
        try:
            marker = _read_sidecar(directory, relative.name)
            if marker == step.marker:
                return where
            if step.sha256 and _digest(directory, relative.name) == step.sha256:
                _write_sidecar(directory, relative.name, step, step.sha256)
                return where
            return None
        finally:
            os.close(directory)


def _place(
    directory: int, name: str, step: Step, data: bytes, *, replace: bool, where: Path
) -> None:
    """``data`` as ``name`` in ``directory``: a temporary file, synced, then linked (never over
    a file) or with ``replace`` renamed into place. ``Refused`` when it is not in place."""
    tmp = f".{name}.hz-{step.run_id}-{step.step}.tmp"
    try:
        place_file(directory, name, data, temporary=tmp, replace=replace)
    except FileExistsError as e:
        raise Refused(
            f"files.write: {where} exists and is not replaced (overwrite needs "
            "args.overwrite: true and [publish] overwrite = true)"
        ) from e
    except OSError as e:
        raise Refused(f"files.write: cannot write {where}: {e.strerror}") from e


def _inside(base: Path, workdir: Path) -> tuple[str, ...] | None:
    """The names from the working directory down to ``base``; None: ``base`` lies outside."""
    try:
        return PurePosixPath(base).relative_to(os.path.normpath(workdir)).parts
    except ValueError:
        return None


def _real(base: Path, workdir: Path) -> Path:
    """Where ``base`` really is: below the working directory no link is followed (a link is
    refused), so the working directory's real path and the names; outside, its real path."""
    inside = _inside(base, workdir)
    if inside is None:
        return Path(os.path.realpath(base))
    return Path(os.path.realpath(workdir), *inside)


def _open_dirs(base: Path, parts: tuple[str, ...], *, make: bool, workdir: Path) -> int:
    """A descriptor of ``base``/``parts``: below the working directory every name is opened
    without following a link, ``base``'s own included; ``make``: missing ``parts`` made."""
    inside = _inside(base, workdir)
    try:
        root = open_directory(workdir if inside is not None else base)
    except OSError as e:
        raise Refused(f"files.write: the folder {base} cannot be opened: {e.strerror}") from e
    try:
        fd = open_folders(root, inside or ())
    except OSError as e:
        if e.errno in (errno.ELOOP, errno.ENOTDIR):
            raise Refused(
                f"files.write: the folder {base} is reached through a link or is not a "
                f"folder ({e.filename!r}): nothing is written through a link"
            ) from e
        raise Refused(f"files.write: the folder {base} cannot be opened: {e.strerror}") from e
    finally:
        os.close(root)
    try:
        return open_folders(fd, parts, make=make)
    except OSError as e:
        if e.errno in (errno.ELOOP, errno.ENOTDIR):
            raise Refused(
                f"files.write: {e.filename!r} under {base} is a link or not a folder"
            ) from e
        raise
    finally:
        os.close(fd)


def _write_sidecar(directory: int, name: str, step: Step, sha256: str) -> None:
    sidecar = SIDECAR.format(name=name)
    text = json.dumps({"marker": step.marker, "sha256": sha256}) + "\n"
    place_file(directory, sidecar, text.encode(), temporary=sidecar + ".tmp", replace=True)


def _read_sidecar(directory: int, name: str) -> str | None:
    try:
        fd = os.open(SIDECAR.format(name=name), os.O_RDONLY | os.O_NOFOLLOW, dir_fd=directory)
    except OSError:
        return None
    try:
        data = json.loads(os.read(fd, 4096))
    except ValueError:
        return None
    finally:
        os.close(fd)
    return str(data.get("marker")) if isinstance(data, dict) else None


def _digest(directory: int, name: str) -> str | None:
    try:
        fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW, dir_fd=directory)
    except OSError:
        return None
    digest = hashlib.sha256()
    try:
        while chunk := os.read(fd, 1 << 20):
            digest.update(chunk)
    finally:
        os.close(fd)
    return digest.hexdigest()
