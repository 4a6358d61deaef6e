"""Who is running a stored thread: one run at a time holds it, a crashed one holds it no more.

A run takes the thread's lease before it writes and gives it back when it ends. A lease names
the process that holds it (host, process id and the process's start time, so a reused process
id is not taken for the holder) and a token of its own (two runs in one process are two
holders). A lease whose holder is gone does not count: a process killed with ``kill -9`` leaves
a row behind, and the next run takes it over. Whether a holder lives is the store's to say: on
this host by its process (:mod:`statebound.processes`), elsewhere by what the store can see of
it (PostgreSQL: its database session). A holder that lives but is stuck can be taken over by name
(``take_over``: its token), which a server does once the stuck worker's claim on the run ran out;
should the stuck one wake up, its next checkpoint finds its number taken and it writes no more.

A lease is held for the code that runs under it (a context variable): a run started inside a
``holding`` of the same thread and store takes that lease instead of claiming one again.
"""

from __future__ import annotations

import os
import socket
import time
import uuid
from collections.abc import Mapping
from contextvars import ContextVar
from dataclasses import dataclass
from types import MappingProxyType

from statebound.errors import ThreadTaken
from statebound.processes import process_started

__all__ = ["HELD", "Lease", "refused"]

# the leases the code running now holds, by (store, thread)
HELD: ContextVar[Mapping[tuple[int, str], Lease]] = ContextVar("statebound_leases", default=MappingProxyType({}))


@dataclass(frozen=True, slots=True)
class Lease:
    """One run's hold on a thread."""

    thread: str
    token: str
    host: str
    pid: int
    started: str  # the holding process's start time (statebound.processes.process_started)
    since: float

    @classmethod
    def mine(cls, thread: str, token: str | None = None) -> Lease:
        """A lease of this process on ``thread`` (``token``: its own name, else a new one)."""
        return cls(thread, token or uuid.uuid4().hex, socket.gethostname(), os.getpid(), process_started(), time.time())

    def here(self) -> bool:
        """Held by a process on this host."""
        return self.host == socket.gethostname()

    def describe(self) -> str:
        when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(self.since))
        who = "this process" if self.here() and self.pid == os.getpid() else f"process {self.pid}"
        return f"{who} on {self.host} (since {when})"


def refused(holder: Lease, where: str) -> ThreadTaken:
    """The error of a run that finds its thread held by a living run."""
    return ThreadTaken(
        f"thread {holder.thread!r} in {where} is being run by {holder.describe()}; only one run of a thread "
        "writes at a time: wait for that one to end (or pause), then resume it again (a process that "
        "died holds it no more)"
    )
