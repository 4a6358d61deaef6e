"""The names of child runs' threads: ``PARENT/STATE.VISIT/KEY`` (:mod:`statebound.flow.nested`),
read back into their parts, and walked up to the top-level thread.

A name is a child's when it has that shape *and* its parent is a thread of the store; a name of
that shape whose parent is missing is refused where it matters (a fork of it could not be run as
anyone's child), naming the parent it lacks.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass

from statebound.errors import CheckpointError
from statebound.flow.live.thread_store import ThreadStore

__all__ = ["ChildOf", "ancestry", "child_of", "children_under", "fork_name", "free_thread_name", "top_of"]

_VISIT = re.compile(r"^(?P<state>.+)\.(?P<visit>[1-9][0-9]*)$")


@dataclass(frozen=True, slots=True)
class ChildOf:
    """Where a child's thread was run: its ``parent`` thread, the parent's ``state`` and its
    ``visit`` (from 1), and the child's ``key`` among that output's children."""

    thread: str
    parent: str
    state: str
    visit: int
    key: str

    @property
    def prefix(self) -> str:
        """``PARENT/STATE.VISIT/``: what the names of this child and its siblings begin with."""
        return f"{self.parent}/{self.state}.{self.visit}/"


def child_of(thread: str) -> ChildOf | None:
    """``thread``'s parts when its name has a child's shape (``PARENT/STATE.VISIT/KEY``), else None."""
    parts = thread.rsplit("/", 2)
    if len(parts) != 3 or not all(parts):
        return None
    found = _VISIT.match(parts[1])
    if found is None:
        return None
    return ChildOf(thread, parts[0], found["state"], int(found["visit"]), parts[2])


def ancestry(store: ThreadStore, thread: str) -> list[ChildOf]:
    """``thread``'s links up to its top-level thread, its own first (empty: it is top-level); a
    :class:`CheckpointError` when a name of a child's shape has no parent in the store."""
    links: list[ChildOf] = []
    link = child_of(thread)
    while link is not None:
        if store.record(link.parent) is None:
            raise CheckpointError(
                f"thread {link.thread!r} is named as a child run of thread {link.parent!r} (state "
                f"{link.state!r}, visit {link.visit}, key {link.key!r}), but {store.where} has no thread "
                f"{link.parent!r}, so nothing could run a fork of it as a child; fork the thread alone with "
                "store.fork_one(...) to run it as a flow of its own")
        links.append(link)
        link = child_of(link.parent)
    return links


def top_of(thread: str, names: Collection[str]) -> str:
    """The top-level thread above ``thread`` among ``names`` (``thread`` itself when top-level)."""
    link = child_of(thread)
    while link is not None and link.parent in names:
        thread = link.parent
        link = child_of(thread)
    return thread


def children_under(prefix: str, names: Collection[str]) -> list[str]:
    """The names that are ``prefix`` and one key more (a visit's children, not their own), sorted."""
    return sorted(name for name in names if name.startswith(prefix) and name != prefix
                  and "/" not in name[len(prefix):])


def fork_name(thread: str, at: int, names: Collection[str]) -> str:
    """The default name of a fork of ``thread`` at ``at``: ``THREAD-at-AT``, or for a child's
    thread its top-level thread's name and the child's path (``t1-at-Research.1-b2-5``); ``-2``,
    ``-3``... when taken."""
    top = top_of(thread, names)
    base = f"{thread}-at-{at}" if top == thread else f"{top}-at-{thread[len(top) + 1:].replace('/', '-')}-{at}"
    return free_thread_name(base, names)


def free_thread_name(base: str, names: Collection[str]) -> str:
    """``base``, or ``base-2``, ``base-3``... whichever of them is not in ``names`` (a fork's name)."""
    name, number = base, 1
    while name in names:
        number += 1
        name = f"{base}-{number}"
    return name
