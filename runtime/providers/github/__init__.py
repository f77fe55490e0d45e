"""The ``github`` provider: the ``code-host`` and ``tracker`` operations over GitHub's REST API
(``provider``), its settings (``settings``), one fetch's HTTP conversation (``client``, the
only module that imports httpx) and the four operations (``reads``).
docs/providers-github.md lists the endpoints and media types; decision 0017 says why httpx.
"""

from __future__ import annotations

from hz.runtime.providers.github.provider import GitHubProvider

__all__ = ["GitHubProvider"]
