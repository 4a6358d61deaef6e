"""Whether a process still runs: by its id, and by when it started, so that a process id the
system gave to a new process is not taken for the old one (Linux's ``/proc``; elsewhere the id
alone)."""

from __future__ import annotations

import os
from functools import cache

__all__ = ["process_alive", "process_started"]


def _read_started(pid: int) -> str | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            fields = stat.read().rsplit(b")", 1)[1].split()
        return fields[19].decode()  # starttime, clock ticks after boot (field 22 of proc(5))
    except (OSError, IndexError):
        return None


@cache
def _own_start(pid: int) -> str | None:  # this process's: it never changes
    return _read_started(pid)


def process_started(pid: int | None = None) -> str:
    """When process ``pid`` (this one by default) started, as the system counts it ("" unknown)."""
    return (_own_start(os.getpid()) if pid is None else _read_started(pid)) or ""


def process_alive(pid: int, started: str = "") -> bool:
    """Whether process ``pid`` on this host runs (and, given ``started``, is the one that started then)."""
    if started:
        return _read_started(pid) == started
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
