"""Did-you-mean: the closest allowed names to a misspelt one."""

from __future__ import annotations

from collections.abc import Iterable


def closest(word: str, choices: Iterable[str]) -> str | None:
    """The one allowed name closest to ``word``, or None when nothing is close enough."""
    import difflib

    pool = list(choices)
    lowered = {c.lower(): c for c in pool}
    # Case slips ("Name" for "name") are the commonest typo and difflib scores them poorly.
    if word.lower() in lowered and lowered[word.lower()] != word:
        return lowered[word.lower()]
    match = difflib.get_close_matches(word, pool, n=1, cutoff=0.6)
    return match[0] if match else None


def did_you_mean(word: str, choices: Iterable[str]) -> str | None:
    """``"did you mean 'x'?"`` or None."""
    match = closest(word, choices)
    return f"did you mean {match!r}?" if match else None
