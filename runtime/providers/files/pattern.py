"""Matching a glob pattern against the working directory: one bounded walk of the tree.

``pathlib.Path.glob`` walks the tree once per ``**`` and branch (``**/**/**/**/*.x`` over a
60-deep chain took minutes), checks nothing while no name matches, lists what a link to a
directory outside leads to, and matches dot files with ``*``. Here the pattern is split into
its ``/``-separated parts, each part but ``**`` compiled once to a regular expression
(``fnmatch``'s, which does not backtrack), and the tree is walked once (``os.scandir`` on
descriptors opened without following links) carrying the set of pattern positions each
directory has reached — as a regular-expression engine runs an automaton, never exploring the
same directory twice. The walk:

- enters a directory only when the pattern can still match something below it, never through
  a symbolic link, and never ``.git`` (in any case) or a name the operator denies;
- calls ``tick`` for every entry it looks at (the caller's deadline and entry cap) and stops
  at ``max_depth`` directories below the working directory;
- leaves names that begin with ``.`` to parts that begin with a literal ``.``: ``*``, ``?``,
  ``[…]`` and ``**`` do not match them (as a shell does without ``dotglob``), so ``*/config``
  is not ``.git/config`` and ``*env`` is not ``.env``.

It yields the matching entries that are not directories (files, and links, which the reader
resolves inside the tree), as tuples of names.
"""

from __future__ import annotations

import errno
import fnmatch
import os
import re
from collections.abc import Callable, Generator, Iterator
from dataclasses import dataclass

_DIRECTORY = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_WILD = re.compile(r"[*?\[]")


class TooDeep(Exception):
    """The walk would go deeper than its ``max_depth``."""


@dataclass(frozen=True, slots=True)
class Match:
    names: tuple[str, ...]
    link: bool


class Pattern:
    """A glob pattern's parts, compiled: ``None`` for ``**``."""

    def __init__(self, parts: tuple[str, ...]) -> None:
        self.parts = parts
        self.steps = tuple(None if part == "**" else _compile(part) for part in parts)
        self.dotted = tuple(part.startswith(".") for part in parts)

    def literal_parts(self) -> tuple[str, ...]:
        """The parts without a wildcard: names the pattern spells out."""
        return tuple(part for part in self.parts if not _WILD.search(part))

    def start(self) -> frozenset[int]:
        return self._closure({0})

    def advance(self, states: frozenset[int], name: str, *, directory: bool) -> frozenset[int]:
        """The positions reached after ``name`` (a directory or not) from ``states``."""
        reached: set[int] = set()
        hidden = name.startswith(".")
        for i in states:
            if i == len(self.steps):
                continue
            step = self.steps[i]
            if step is None:
                if directory and not hidden:
                    reached.add(i)
            elif (not hidden or self.dotted[i]) and step.fullmatch(name):
                reached.add(i + 1)
        return self._closure(reached)

    def _closure(self, states: set[int]) -> frozenset[int]:
        """``states`` with every position a ``**`` there may skip to (it matches no name)."""
        todo = list(states)
        while todo:
            i = todo.pop()
            if i < len(self.steps) and self.steps[i] is None and i + 1 not in states:
                states.add(i + 1)
                todo.append(i + 1)
        return frozenset(states)


def _compile(part: str) -> re.Pattern[str]:
    return re.compile(fnmatch.translate(part))


def walk(
    root: int,
    pattern: Pattern,
    *,
    tick: Callable[[], None],
    skip: Callable[[str], bool],
    max_depth: int,
) -> Generator[Match, None, None]:
    """The entries of the tree under the directory ``root`` that ``pattern`` matches (see the
    module docstring); ``skip`` leaves a name out (and never enters it)."""
    yield from _walk(root, (), pattern.start(), pattern, tick, skip, max_depth)


def _walk(
    fd: int,
    at: tuple[str, ...],
    states: frozenset[int],
    pattern: Pattern,
    tick: Callable[[], None],
    skip: Callable[[str], bool],
    max_depth: int,
) -> Iterator[Match]:
    end = len(pattern.steps)
    entries: list[tuple[str, bool, bool]] = []
    with os.scandir(fd) as listing:
        for entry in listing:
            tick()
            if skip(entry.name):
                continue
            try:
                directory = entry.is_dir(follow_symlinks=False)
                link = entry.is_symlink()
            except OSError:
                continue  # gone meanwhile
            entries.append((entry.name, directory, link))
    for name, directory, link in sorted(entries):
        reached = pattern.advance(states, name, directory=directory)
        if not reached:
            continue
        if not directory:
            if end in reached:
                yield Match((*at, name), link)
            continue
        if not any(i < end for i in reached):
            continue  # the directory itself matched: directories are left out
        if len(at) >= max_depth:
            raise TooDeep("/".join((*at, name)))
        try:
            below = os.open(name, _DIRECTORY, dir_fd=fd)
        except OSError as e:
            if e.errno in (errno.ENOENT, errno.ENOTDIR, errno.ELOOP):
                continue  # removed or swapped meanwhile (a link now: not entered)
            raise
        try:
            yield from _walk(below, (*at, name), reached, pattern, tick, skip, max_depth)
        finally:
            os.close(below)
