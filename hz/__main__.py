from __future__ import annotations

from hz.cli import main

main()
