"""``hz migrate``: Heinzelmännchen contracts as hz contracts (``hz.compiler.migrate``).

The command and its report (command.py); the files read, by descriptor from the folder listed
(reading.py), through folders opened without following a link (folders.py); the files written
(writing.py); the names taken already (names.py: HZ180)."""
