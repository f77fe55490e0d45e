"""Reading the files of a receipt directory: a receipt or a transcript is a regular file of at
most ``MAX_FILE_BYTES``, never a symbolic link.

A receipt directory holds what others can plant (a repository's working tree, a shared CI
cache): a sparse file of a gigabyte, a FIFO, a link to ``/dev/zero`` or out of the tree. Each
is an ``OSError`` whose ``strerror`` says what it is, never a long read.
"""

from __future__ import annotations

import errno
from pathlib import Path

from hz.runtime.artifacts.regular_file import read_regular

#: A receipt is a few KiB and a transcript about one MiB (its stream is capped at that): a
#: larger file is none hz wrote, and is not read further.
MAX_FILE_BYTES = 16 * 1024 * 1024


def read_receipt_file(path: Path, *, follow_link: bool = False) -> bytes:
    """The bytes of ``path``; ``OSError`` when it is no regular file, is a symbolic link (unless
    ``follow_link``: a path the operator gave), or is larger than ``MAX_FILE_BYTES``."""
    data = read_regular(path, limit=MAX_FILE_BYTES, follow_link=follow_link)
    if len(data) > MAX_FILE_BYTES:
        message = f"larger than {MAX_FILE_BYTES // (1024 * 1024)} MiB"
        raise OSError(errno.EFBIG, message, str(path))
    return data
