"""``hz plan``'s count of a job's slots over its 30-day horizon: counted (``count_slots``)
against walked one by one (``len(slots_between(...))``, what the count replaced), in process,
CPU seconds, best of ``--repeat``. The two must agree: the script exits 1 when they do not.

    .venv/bin/python benchmarks/plan.py [--repeat 3]
"""

from __future__ import annotations

import argparse
import sys
import time
from datetime import UTC, datetime, timedelta

from hz.runtime.artifacts.schedule import Schedule, count_slots, slots_between

CASES = (
    ("* * * * *", "UTC"),
    ("* * * * *", "Europe/Berlin"),  # the horizon holds the autumn repeat
    ("*/5 8-18 * * MON-FRI", "America/New_York"),
    ("30 2 * * *", "Europe/Berlin"),
)
SINCE = datetime(2026, 10, 10, 9, 0, 30, tzinfo=UTC)
UNTIL = SINCE + timedelta(days=30)


def _best(function: object, repeat: int) -> tuple[float, int]:
    best, result = float("inf"), 0
    for _ in range(repeat):
        started = time.process_time()
        result = function()  # type: ignore[operator]
        best = min(best, time.process_time() - started)
    return best, result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    repeat = parser.parse_args().repeat
    print(f"{'cron':<22} {'zone':<18} {'slots':>6} {'walked':>9} {'counted':>9}")
    agree = True
    for cron, zone in CASES:
        schedule = Schedule(cron=cron, timezone=zone)
        walked, want = _best(lambda s=schedule: len(slots_between(s, SINCE, UNTIL)), repeat)
        counted, got = _best(lambda s=schedule: count_slots(s, SINCE, UNTIL), repeat)
        agree = agree and want == got
        print(f"{cron:<22} {zone:<18} {got:>6} {walked:>8.3f}s {counted:>8.3f}s")
    return 0 if agree else 1


if __name__ == "__main__":
    sys.exit(main())
