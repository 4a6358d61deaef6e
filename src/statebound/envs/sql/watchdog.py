"""What stops an embedded SQLite statement that runs too long or takes too much memory.

SQLite calls a progress handler every few thousand virtual-machine instructions; returning true
interrupts the statement. :class:`StatementWatch` is that handler: it stops the statement at its
deadline, or once the process's resident memory has grown by more than a budget since the
statement began (a sort of a cartesian join, ``ORDER BY random()``, kept in memory because temporary
storage is: 1.2 GB in 5 s unchecked). Memory is the whole process's, read from
``/proc/self/statm``, so statements running at the same time in other threads count too; where
that file does not exist only the deadline is watched.
"""

from __future__ import annotations

import os
import time

__all__ = ["MEMORY_MESSAGE", "TIME_MESSAGE", "StatementWatch", "resident_bytes"]

TIME_MESSAGE = "Query execution was interrupted (max_statement_time exceeded)"
MEMORY_MESSAGE = ("Query execution was interrupted: it took more than {limit} MB of memory (the "
                  "statement memory limit); sort or join fewer rows")
_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096
_MEMORY_EVERY = 4  # memory is read at every 4th call (reading it costs as much as 10,000 instructions)


def resident_bytes() -> int | None:
    """The process's resident memory now, or None where ``/proc/self/statm`` is missing."""
    try:
        with open("/proc/self/statm", "rb") as statm:
            return int(statm.read().split()[1]) * _PAGE
    except (OSError, IndexError, ValueError):
        return None


class StatementWatch:
    """A progress handler: stops the statement at ``timeout_s`` or past ``memory_bytes`` of growth."""

    def __init__(self, *, timeout_s: float, memory_bytes: int) -> None:
        self._deadline = time.monotonic() + timeout_s
        self._memory_bytes = memory_bytes
        start = resident_bytes()
        self._memory_cap = None if start is None else start + memory_bytes
        self.stopped_by: str | None = None  # "time" or "memory" once the handler stopped it
        self._calls = 0

    def __call__(self) -> int:
        if time.monotonic() > self._deadline:
            self.stopped_by = "time"
            return 1
        self._calls += 1
        if (self._memory_cap is not None and self._calls % _MEMORY_EVERY == 0
                and (resident_bytes() or 0) > self._memory_cap):
            self.stopped_by = "memory"
            return 1
        return 0

    def message(self) -> str:
        """What the agent reads when the handler stopped the statement."""
        if self.stopped_by == "memory":
            return MEMORY_MESSAGE.format(limit=self._memory_bytes >> 20)
        return TIME_MESSAGE
