"""The ``files`` provider: the working directory's files as text (``files.read``, ``files.glob``).

What it reads is the repository's, so it is held to the rules hz keeps for every file a
repository can plant (docs/security.md):

- Paths are relative to the working directory and stay under it: an absolute path, a ``..``
  component or a symbolic link whose target lies outside the tree is refused (HZ727), so a
  contract cannot make hz read ``~/.ssh/id_ed25519`` into a prompt.
- Regular files only: a named pipe (which would block), a device (``/dev/zero`` never ends) or
  a socket that a path or a pattern names is refused (HZ727); directories a pattern matches are
  left out.
- Every read is bounded: at most ``max_file_bytes`` per file and ``max_total_bytes`` for one
  fetch are read (a 1 GB file costs one read of the cap, then HZ725), and a pattern may match
  at most ``max_files`` files (an input's ``max_files`` lowers it): past that, HZ725 rather than
  a silent cut.
- Text is UTF-8, decoded strictly: a file that is not UTF-8 is HZ722 naming the file and the
  offset of the first bad byte (no replacement characters slipped into a prompt).
- Matches come sorted by path (``/``-separated, relative to the working directory), so the same
  tree gives the same value and digest.

Files other users can write are not refused: everything under the working directory is the
repository's data for the prompt anyway (never instructions, never configuration).
"""

from __future__ import annotations

import errno
from collections.abc import Mapping
from pathlib import PurePosixPath
from typing import Annotated, Any, ClassVar

from pydantic import Field

from hz.runtime.artifacts.operations import CATALOG, Operation
from hz.runtime.artifacts.regular_file import check_links, read_regular
from hz.runtime.providers.protocol import (
    HZ722,
    HZ725,
    HZ726,
    HZ727,
    FetchRequest,
    ProviderError,
    ProviderSettings,
    Readiness,
)
from hz.runtime.settings.model import PositiveInteger

MIB = 1024 * 1024


class FilesSettings(ProviderSettings):
    table = "providers.files"

    max_file_bytes: Annotated[
        PositiveInteger,
        Field(description="the largest file read, in bytes; a larger one is refused (HZ725)"),
    ] = MIB
    max_total_bytes: Annotated[
        PositiveInteger,
        Field(description="the most bytes one fetch reads over all its files (HZ725 past it)"),
    ] = 4 * MIB
    max_files: Annotated[
        PositiveInteger,
        Field(
            description="the most files a pattern may match; an input's `max_files` lowers it "
            "(HZ725 past it)"
        ),
    ] = 200


class FilesProvider:
    """Reads files under the run's working directory (``FetchRequest.workdir``)."""

    name: ClassVar[str] = "files"
    capabilities: ClassVar[tuple[str, ...]] = ("files",)
    settings_model: ClassVar[type[ProviderSettings]] = FilesSettings

    def __init__(self, settings: FilesSettings) -> None:
        self.settings = settings

    def operations(self) -> Mapping[str, Operation]:
        return {name: CATALOG[name] for name in ("files.read", "files.glob")}

    def ready(self, *, online: bool = False) -> Readiness:
        s = self.settings
        return Readiness(
            True,
            f"reads the working directory's files: up to {s.max_files} files, "
            f"{s.max_file_bytes:,} bytes each, {s.max_total_bytes:,} in all",
        )

    def fetch(self, request: FetchRequest) -> Any:
        reader = _Reader(self.settings, request)
        if request.operation.name == "files.read":
            return reader.read(_relative(str(request.args["path"]), "path"))
        pattern = _relative(str(request.args["pattern"]), "pattern")
        limit = min(self.settings.max_files, int(request.args.get("max_files", 1000)))
        return [reader.read(path) for path in _matches(request, pattern, limit)]


def _relative(text: str, what: str) -> PurePosixPath:
    """A path or pattern relative to the working directory that cannot climb out of it."""
    path = PurePosixPath(text)
    if path.is_absolute() or ".." in path.parts or "\x00" in text:
        raise ProviderError(
            HZ727,
            f"the {what} {text!r} leaves the working directory",
            hint=f"give a {what} relative to the working directory, without '..'",
        )
    return path


def _matches(request: FetchRequest, pattern: PurePosixPath, limit: int) -> list[PurePosixPath]:
    root = request.workdir
    found: list[PurePosixPath] = []
    try:
        for match in root.glob(str(pattern)):
            if request.clock() > request.deadline:
                raise ProviderError(HZ726, f"matching {str(pattern)!r} did not end in time")
            if match.is_dir() and not match.is_symlink():
                continue
            found.append(PurePosixPath(match.relative_to(root).as_posix()))
            if len(found) > limit:
                raise ProviderError(
                    HZ725,
                    f"the pattern {str(pattern)!r} matches more than {limit} files",
                    hint="narrow the pattern, or raise the input's max_files (at most "
                    "[providers.files] max_files)",
                )
    except (OSError, ValueError, NotImplementedError) as e:
        raise ProviderError(HZ722, f"cannot match {str(pattern)!r}: {e}") from e
    return sorted(found, key=str)


class _Reader:
    """Reads files of one fetch, counting the bytes against the caps."""

    def __init__(self, settings: FilesSettings, request: FetchRequest) -> None:
        self.settings = settings
        self.request = request
        self.left = settings.max_total_bytes

    def read(self, path: PurePosixPath) -> dict[str, str]:
        request = self.request
        if request.clock() > request.deadline:
            raise ProviderError(HZ726, f"reading {str(path)!r} did not start in time")
        full = request.workdir / path
        cap = min(self.settings.max_file_bytes, self.left)
        try:
            check_links(full, request.workdir)
            data = read_regular(full, limit=cap)
        except FileNotFoundError as e:
            raise ProviderError(
                HZ722, f"{str(path)!r} does not exist in the working directory"
            ) from e
        except OSError as e:
            refused = e.errno in (errno.EACCES, errno.EINVAL, errno.EISDIR, errno.ELOOP)
            raise ProviderError(
                HZ727 if refused else HZ722,
                f"{str(path)!r} cannot be read: {e.strerror or e}",
                hint="the files provider reads regular files under the working directory only"
                if refused
                else None,
            ) from e
        if len(data) > cap:
            which = (
                f"the cap of {self.settings.max_file_bytes:,} bytes per file"
                if cap == self.settings.max_file_bytes
                else f"what is left of the {self.settings.max_total_bytes:,} bytes of one fetch"
            )
            raise ProviderError(
                HZ725,
                f"{str(path)!r} is larger than {which}",
                hint="read a smaller file, or raise [providers.files] max_file_bytes / "
                "max_total_bytes",
            )
        self.left -= len(data)
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as e:
            raise ProviderError(
                HZ722,
                f"{str(path)!r} is not UTF-8 text (byte 0x{data[e.start]:02x} at offset {e.start})",
                hint="the files provider reads text; leave binary files out of the pattern",
            ) from e
        return {"path": str(path), "text": text}
