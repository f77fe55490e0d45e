"""The ``files`` provider: the working directory's files as text (``files.read``, ``files.glob``).

What it reads is the repository's, so it is held to the rules hz keeps for every file a
repository can plant (docs/security.md):

- Paths are relative to the working directory and stay under it: an absolute path, a ``..``
  component or a symbolic link whose target lies outside the tree is refused (HZ727), so a
  contract cannot make hz read ``~/.ssh/id_ed25519`` into a prompt. The path is opened by
  descriptor, one name at a time without following a link (``beneath``): a directory swapped
  for a link meanwhile cannot lead the open out of the tree.
- The working directory holds the operator's machine state too, not only the repository's
  files: ``.git`` (its ``config`` holds the checkout's credential where actions/checkout
  persisted it) is never read, in any case and whatever the path or a link spells; names the
  operator's ``deny`` patterns match (``.env``, ``*.pem``, ``.npmrc`` ... by default) neither.
  Both are refused when a path or a pattern names them (HZ727) and left out of a pattern's
  walk. ``*``, ``?``, ``[…]`` and ``**`` do not match names that begin with ``.``: a pattern
  part must begin with ``.`` itself to match one (``pattern``).
- Regular files only: a named pipe (which would block), a device (``/dev/zero`` never ends) or
  a socket that a path or a pattern names is refused (HZ727); directories a pattern matches are
  left out, as are links a pattern matches that lead to a directory or to nothing; a pattern
  never goes through a link to a directory.
- Every read is bounded: at most ``max_file_bytes`` per file and ``max_total_bytes`` for one
  fetch are read (a 1 GB file costs one read of the cap, then HZ725), and a pattern may match
  at most ``max_files`` files (an input's ``max_files`` lowers it): past that, HZ725 rather than
  a silent cut. Matching looks at ``max_entries`` entries of the tree at most, ``max_depth``
  directories deep, and checks the deadline at every one (HZ725, HZ726).
- Text is UTF-8, decoded strictly: a file that is not UTF-8 is HZ722 naming the file and the
  offset of the first bad byte (no replacement characters slipped into a prompt); a path that
  is not UTF-8 (a file name's bytes) is HZ722 naming it, escaped.
- Matches come sorted by path (``/``-separated, relative to the working directory), so the same
  tree gives the same value and digest.

Files other users can write are not refused: everything else under the working directory is
the repository's data for the prompt anyway (never instructions, never configuration).
"""

from __future__ import annotations

import errno
import fnmatch
import os
from collections.abc import Mapping, Sequence
from pathlib import PurePosixPath
from typing import Annotated, Any, ClassVar

from pydantic import Field

from hz.runtime.artifacts.beneath import Refused, open_beneath, open_directory
from hz.runtime.artifacts.operations import CATALOG, Operation
from hz.runtime.artifacts.printable import cut
from hz.runtime.artifacts.regular_file import read_descriptor
from hz.runtime.providers.files.pattern import Match, Pattern, TooDeep, walk
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
#: Where a quoted path or pattern is cut in a message (a path may be 4,096 characters).
SHOWN = 160
#: Names that hold machine state or secrets rather than the repository's text.
DENIED = (
    ".env",
    ".env.*",
    ".netrc",
    ".npmrc",
    ".pypirc",
    ".git-credentials",
    ".aws",
    ".ssh",
    ".gnupg",
    ".docker",
    ".kube",
    ".terraform",
    "*.tfstate",
    "*.tfstate.*",
    "*.pem",
    "*.key",
    "*.p12",
    "*.pfx",
    "id_rsa*",
    "id_dsa*",
    "id_ecdsa*",
    "id_ed25519*",
)
_REFUSED_HINT = (
    "the files provider reads regular files under the working directory only, never in .git "
    "nor a name [providers.files] deny matches"
)


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
    max_entries: Annotated[
        PositiveInteger,
        Field(
            description="the most entries of the tree (files and directories) matching one "
            "pattern looks at (HZ725 past it)"
        ),
    ] = 100_000
    max_depth: Annotated[
        PositiveInteger,
        Field(description="the deepest directory a pattern's walk enters (HZ725 past it)"),
    ] = 64
    deny: Annotated[
        tuple[str, ...],
        Field(
            description="glob patterns of names (any part of a path, case ignored) never read: "
            "refused when named, left out of a pattern's walk. `.git` is never read whatever "
            "this says"
        ),
    ] = DENIED


class FilesProvider:
    """Reads files under the run's working directory (``FetchRequest.workdir``)."""

    name: ClassVar[str] = "files"
    capabilities: ClassVar[tuple[str, ...]] = ("files",)
    settings_model: ClassVar[type[ProviderSettings]] = FilesSettings

    def __init__(self, settings: FilesSettings) -> None:
        self.settings = settings
        self.denied = tuple(pattern.casefold() for pattern in settings.deny)

    def operations(self) -> Mapping[str, Operation]:
        return {name: CATALOG[name] for name in ("files.read", "files.glob")}

    def ready(self, *, online: bool = False) -> Readiness:
        s = self.settings
        return Readiness(
            True,
            f"reads the working directory's files: up to {s.max_files} files, "
            f"{s.max_file_bytes:,} bytes each, {s.max_total_bytes:,} in all",
        )

    def reserved(self, name: str) -> str | None:
        """Why the name ``name`` is never read, or ``None``."""
        folded = name.casefold()
        if folded == ".git":
            return "it is in .git, which holds the checkout's configuration and credentials"
        for pattern in self.denied:
            if fnmatch.fnmatchcase(folded, pattern):
                return f"{_quoted(name)} matches {_quoted(pattern)} of [providers.files] deny"
        return None

    def fetch(self, request: FetchRequest) -> Any:
        try:
            root = open_directory(request.workdir)
        except OSError as e:
            raise ProviderError(
                HZ722,
                f"the working directory {_quoted(str(request.workdir))} cannot be opened: "
                f"{e.strerror or e}",
            ) from e
        try:
            reader = _Reader(self, request, root)
            if request.operation.name == "files.read":
                path = _relative(str(request.args["path"]), "path")
                value = reader.read(path.parts, link=False)
                assert value is not None  # only a pattern's links are left out
                return value
            text = str(request.args["pattern"])
            pattern = Pattern(_relative(text, "pattern").parts)
            for part in pattern.literal_parts():
                why = self.reserved(part)
                if why is not None:
                    raise ProviderError(
                        HZ727,
                        f"the pattern {_quoted(text)} is refused: {why}",
                        hint=_REFUSED_HINT,
                    )
            limit = min(self.settings.max_files, int(request.args.get("max_files", 1000)))
            found = _matches(self, request, root, text, pattern, limit)
            values = (reader.read(match.names, link=match.link) for match in found)
            return [value for value in values if value is not None]
        finally:
            os.close(root)


def _relative(text: str, what: str) -> PurePosixPath:
    """A path or pattern relative to the working directory that cannot climb out of it."""
    path = PurePosixPath(text)
    if path.is_absolute() or ".." in path.parts or "\x00" in text:
        raise ProviderError(
            HZ727,
            f"the {what} {_quoted(text)} leaves the working directory",
            hint=f"give a {what} relative to the working directory, without '..'",
        )
    if not _is_text(text):
        raise ProviderError(
            HZ727,
            f"the {what} {_quoted(text)} is not text: it holds a lone surrogate",
            hint=f"give a {what} in UTF-8",
        )
    return path


def _matches(
    provider: FilesProvider,
    request: FetchRequest,
    root: int,
    text: str,
    pattern: Pattern,
    limit: int,
) -> list[Match]:
    settings = provider.settings
    seen = 0

    def tick() -> None:
        nonlocal seen
        seen += 1
        if seen > settings.max_entries:
            raise ProviderError(
                HZ725,
                f"matching {_quoted(text)} looked at more than {settings.max_entries:,} "
                "entries of the tree",
                hint="narrow the pattern (start it with the directory to look in), or raise "
                "[providers.files] max_entries",
            )
        if request.clock() > request.deadline:
            raise ProviderError(HZ726, f"matching {_quoted(text)} did not end in time")

    found: list[Match] = []
    matches = walk(
        root,
        pattern,
        tick=tick,
        skip=lambda name: provider.reserved(name) is not None,
        max_depth=settings.max_depth,
    )
    try:
        for match in matches:
            found.append(match)
            if len(found) > limit:
                raise ProviderError(
                    HZ725,
                    f"the pattern {_quoted(text)} matches more than {limit} files",
                    hint="narrow the pattern, or raise the input's max_files (at most "
                    "[providers.files] max_files)",
                )
    except TooDeep as e:
        raise ProviderError(
            HZ725,
            f"matching {_quoted(text)} goes deeper than {settings.max_depth} directories "
            f"(at {_shown(str(e).split('/'))})",
            hint="narrow the pattern, or raise [providers.files] max_depth",
        ) from e
    except OSError as e:
        raise ProviderError(HZ722, f"cannot match {_quoted(text)}: {e.strerror or e}") from e
    finally:
        matches.close()
    return sorted(found, key=lambda match: "/".join(match.names))


class _Reader:
    """Reads files of one fetch, counting the bytes against the caps."""

    def __init__(self, provider: FilesProvider, request: FetchRequest, root: int) -> None:
        self.provider = provider
        self.settings = provider.settings
        self.request = request
        self.root = root
        self.top = os.path.abspath(request.workdir)
        self.left = self.settings.max_total_bytes

    def read(self, names: Sequence[str], *, link: bool) -> dict[str, str] | None:
        """``{path, text}`` of the file ``names`` under the working directory; ``None`` for
        a ``link`` a pattern matched that leads to a directory or to nothing."""
        request = self.request
        path = "/".join(names)
        shown = _shown(names)
        if not _is_text(path):
            raise ProviderError(
                HZ722,
                f"{shown} has a name that is not UTF-8: only files whose path is text are read",
                hint="rename it, or leave it out of the pattern",
            )
        if request.clock() > request.deadline:
            raise ProviderError(HZ726, f"reading {shown} did not start in time")
        cap = min(self.settings.max_file_bytes, self.left)
        try:
            fd = open_beneath(self.root, names, top=self.top, reserved=self.provider.reserved)
            try:
                data = read_descriptor(fd, limit=cap, path=path)
            finally:
                os.close(fd)
        except Refused as e:
            raise ProviderError(
                HZ727, f"{shown} cannot be read: {e.reason}", hint=_REFUSED_HINT
            ) from e
        except OSError as e:
            if link and e.errno in (errno.ENOENT, errno.ENOTDIR, errno.EISDIR):
                return None  # a dangling link, or one to a directory: left out
            if e.errno == errno.ENOENT:
                raise ProviderError(
                    HZ722, f"{shown} does not exist in the working directory"
                ) from e
            refused = e.errno in (errno.EACCES, errno.EINVAL, errno.EISDIR, errno.ELOOP)
            raise ProviderError(
                HZ727 if refused else HZ722,
                f"{shown} cannot be read: {e.strerror or e}",
                hint=_REFUSED_HINT if refused else None,
            ) from e
        if len(data) > cap:
            which = (
                f"the cap of {self.settings.max_file_bytes:,} bytes per file"
                if cap == self.settings.max_file_bytes
                else f"what is left of the {self.settings.max_total_bytes:,} bytes of one fetch"
            )
            raise ProviderError(
                HZ725,
                f"{shown} is larger than {which}",
                hint="read a smaller file, or raise [providers.files] max_file_bytes / "
                "max_total_bytes",
            )
        self.left -= len(data)
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as e:
            raise ProviderError(
                HZ722,
                f"{shown} is not UTF-8 text (byte 0x{data[e.start]:02x} at offset {e.start})",
                hint="the files provider reads text; leave binary files out of the pattern",
            ) from e
        return {"path": path, "text": text}


def _is_text(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _quoted(text: str) -> str:
    """``text`` (a path, a pattern) quoted for a message, cut to ``SHOWN`` characters."""
    return repr(cut(text, SHOWN))


def _shown(names: Sequence[str]) -> str:
    """A path for a message: a name that is not UTF-8 shows its bytes escaped (``\\xff``)."""
    path = "/".join(names)
    if _is_text(path):
        return _quoted(path)
    return repr(os.fsencode(cut(path, SHOWN)))[1:]
