"""Did-you-mean: the closest allowed names to a misspelt one."""

from __future__ import annotations

from collections.abc import Iterable


def close_matches(word: str, choices: Iterable[str], n: int = 1) -> list[str]:
    """Up to ``n`` allowed names close to ``word``, the closest first."""
    import difflib

    pool = list(choices)
    lowered = {c.lower(): c for c in pool}
    # Case slips ("Name" for "name") are the commonest typo and difflib scores them poorly.
    if word.lower() in lowered and lowered[word.lower()] != word:
        return [lowered[word.lower()]]
    return difflib.get_close_matches(word, pool, n=n, cutoff=0.6)


def closest(word: str, choices: Iterable[str]) -> str | None:
    """The one allowed name closest to ``word``, or None when nothing is close enough."""
    match = close_matches(word, choices)
    return match[0] if match else None


def did_you_mean(word: str, choices: Iterable[str]) -> str | None:
    """``"did you mean 'x'?"`` or None."""
    match = closest(word, choices)
    return f"did you mean {match!r}?" if match else None


def did_you_mean_suffix(word: str, choices: Iterable[str]) -> str:
    """`` (did you mean 'x'?)`` to end a message with, or an empty string."""
    match = did_you_mean(word, choices)
    return f" ({match})" if match else ""
