"""Cutting a value's text so that the whole value fits the fetch's cap.

The fetch measures an answer as the UTF-8 bytes of its compact canonical JSON (sorted keys,
no spaces, ``ensure_ascii=False``: what the packet holds and the digest is of), where a line
break takes two bytes and another control character six. A provider that cuts a long text
(``git.diff``'s diff, ``code-host.pull_request``'s) cuts it here, against that measure, so
that a cut value is never refused for its size afterwards.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from hz.runtime.providers.protocol import HZ725, ProviderError

#: The most bytes one character takes in the JSON (``\\u001b``); none takes fewer than one.
_WIDEST = 6


def json_size(value: Any) -> int:
    """Bytes of ``value`` as compact UTF-8 JSON: how the fetch measures an answer."""
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return len(text.encode("utf-8", errors="surrogatepass"))


def fitted(value: Mapping[str, Any], key: str, cap: int) -> dict[str, Any]:
    """``value`` within ``cap`` bytes as the fetch counts it: when it does not fit, its text
    ``value[key]`` is cut further, on a character, and ``truncated`` is set. ``HZ725`` when
    the rest of the value leaves no room for any of the text."""
    whole = dict(value)
    if json_size(whole) <= cap:
        return whole
    text: str = whole[key]
    room = cap - json_size({**whole, key: "", "truncated": True})
    if room < 0:
        raise ProviderError(
            HZ725,
            f"a cap of {cap} bytes leaves no room for the {key}",
            hint="raise max_bytes",
        )
    low, high = min(len(text), room // _WIDEST), min(len(text), room)
    while low < high:
        middle = (low + high + 1) // 2
        if json_size(text[:middle]) - 2 <= room:  # less the quotes
            low = middle
        else:
            high = middle - 1
    return {**whole, key: text[:low], "truncated": True}
