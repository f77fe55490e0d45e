"""What ``hz migrate`` says about a file: its notes, and the migration of one file."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

#: What a note is: an edit made (``mapped``), a choice left to the user (``decide``), or a
#: problem that keeps the file from being migrated (``error``).
Kind = Literal["mapped", "decide", "error"]


@dataclass(frozen=True, slots=True)
class Note:
    """One line of a migration report."""

    code: str
    kind: Kind
    line: int
    column: int
    message: str
    decide: str | None = None


@dataclass(frozen=True, slots=True)
class Migration:
    """The migrated text of one file and its notes: ``text`` is ``None`` when the file is left
    as it is (an hz contract already, or one that cannot be migrated: an error note says why).
    ``name`` is the ``hz.name`` the contract has or gets (``None`` when it has none), written
    or taken from ``name_at`` (line, column), so that a folder's run can tell two contracts
    of one name apart."""

    path: str
    text: str | None
    notes: tuple[Note, ...] = ()
    name: str | None = None
    name_at: tuple[int, int] = (1, 1)

    @property
    def failed(self) -> bool:
        return any(n.kind == "error" for n in self.notes)
