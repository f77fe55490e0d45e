"""The loaded form of a contract: JSON data plus where each node sits in the file (the YAML
text, or a Markdown contract's frontmatter and body)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

#: A path into the data: mapping keys (str) and sequence indexes (int).
JsonPath = tuple[str | int, ...]


@dataclass(frozen=True, slots=True)
class Pos:
    """A node's position: 1-based line and column of its first character."""

    line: int
    column: int


@dataclass(frozen=True, slots=True)
class ScalarInfo:
    """How a string scalar was written, so a template error can be mapped back to the file.

    ``style`` is PyYAML's: ``None`` (plain), ``"'"``, ``'"'``, ``"|"`` or ``">"``.
    ``content_line`` is the file line holding the scalar's first line of content (for block
    scalars the line after the indicator).
    """

    style: str | None
    content_line: int


@dataclass(frozen=True, slots=True)
class Section:
    """A ``## Heading`` of a Markdown body: its title as written, where the heading starts,
    and whether anything but blank lines and comments stands under it."""

    title: str
    pos: Pos
    empty: bool


@dataclass(frozen=True, slots=True)
class Body:
    """The body of a Markdown contract, read once by the loader for the body rules.

    ``text`` is the contract text the agent gets: the body without its HTML comments
    (``comments``, each as written); ``line`` is the file line the body starts on.
    ``inputs`` are the ``inputs.NAME`` the body names, each where it is first named;
    ``unclosed_comment`` is where a ``<!--`` without its ``-->`` starts; ``too_deep`` is
    where the body first nests deeper than the Markdown parser reads.
    """

    line: int
    text: str
    sections: tuple[Section, ...] = ()
    comments: tuple[str, ...] = ()
    inputs: tuple[tuple[str, Pos], ...] = ()
    unclosed_comment: Pos | None = None
    built_prompt: bool = False
    too_deep: Pos | None = None


@dataclass(frozen=True, slots=True)
class SourceDoc:
    """A contract file after loading: its data in the JSON data model and node positions.

    ``values[path]`` is where the value at ``path`` starts (``()`` is the top-level mapping);
    ``keys[path]`` is where the key of the mapping entry at ``path`` starts.
    """

    path: str
    text: str
    data: dict[str, Any]
    values: dict[JsonPath, Pos] = field(default_factory=dict)
    keys: dict[JsonPath, Pos] = field(default_factory=dict)
    scalars: dict[JsonPath, ScalarInfo] = field(default_factory=dict)
    #: Set for a Markdown contract: its body, as the loader read it.
    body: Body | None = None

    def pos(self, path: JsonPath, *, key: bool = False) -> Pos:
        """Best position for ``path``: the key or value itself, else its nearest ancestor."""
        table = self.keys if key else self.values
        p = path
        while p:
            found = table.get(p) or self.values.get(p)
            if found is not None:
                return found
            p = p[:-1]
        return self.values.get((), Pos(1, 1))
