"""A range's two commits, resolved before git diff sees them."""

from __future__ import annotations

import re

from hz.runtime.artifacts.printable import printable
from hz.runtime.providers.git.parsing import HASH, unreadable
from hz.runtime.providers.git.running import HELPER_BYTES, Git, check
from hz.runtime.providers.protocol import HZ722, HZ727, ProviderError

#: A side of a range that reads as a path: git names a revision without ``./`` or ``../``
#: steps (``HEAD:../x`` names a file, never a commit; ``/etc/`` no revision at all).
_PATH_LIKE = re.compile(r"(?:^|/)\.\.?(?:/|$)")


def sides(git: Git, text_range: str) -> list[str]:
    """The two commits ``A..B`` or ``A...B`` compares, as hashes (``A...B``: the merge
    base of A and B, and B; an empty side is ``HEAD``)."""
    split = "..." if "..." in text_range else ".."
    if split not in text_range:
        raise ProviderError(
            HZ727,
            f"the range {printable(text_range)!r} is one revision: a diff compares two, "
            "such as main..HEAD",
            hint=f"write {printable(text_range)}^..{printable(text_range)} for its own change",
        )
    left, _, right = text_range.partition(split)
    base, tip = (_commit(git, text_range, side or "HEAD") for side in (left, right))
    if split == "...":
        argv = ["merge-base", "--end-of-options", base, tip]
        outcome = git.run(argv, HELPER_BYTES)
        if outcome.exit_code == 1 and not outcome.stdout.strip():
            raise ProviderError(
                HZ722,
                f"the sides of the range {printable(text_range)!r} have no common commit",
                hint="write A..B to compare the two commits themselves",
            )
        check(outcome)
        base = outcome.stdout.decode("ascii", errors="replace").strip()
        if outcome.stdout_truncated or not HASH.fullmatch(base.encode()):
            raise unreadable("merge-base did not print a commit")
    return [base, tip]


def _commit(git: Git, text_range: str, side: str) -> str:
    if side.startswith(("/", "-")) or _PATH_LIKE.search(side):
        raise ProviderError(
            HZ727,
            f"the range {printable(text_range)!r} names a path ({printable(side)!r}), not "
            "a revision",
            hint="give revisions, such as main..HEAD or v1.2...v1.3",
        )
    outcome = git.run(
        ["rev-parse", "--verify", "--quiet", "--end-of-options", f"{side}^{{commit}}"],
        HELPER_BYTES,
    )
    commit = outcome.stdout.strip()
    if outcome.exit_code == 1:  # --verify: not a valid object of that type
        raise ProviderError(
            HZ722,
            f"{printable(side)!r} of the range {printable(text_range)!r} is no commit of "
            "the repository",
            hint="check the revision's name (a branch, a tag, a hash)",
        )
    check(outcome)
    if outcome.stdout_truncated or not HASH.fullmatch(commit):
        raise unreadable("rev-parse did not print a commit")
    return commit.decode("ascii")
