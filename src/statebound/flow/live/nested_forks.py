"""A fork that starts at a child run's checkpoint: a new top-level thread whose run continues
inside the child.

Forking the child ``t1/Research.1/b2`` at its checkpoint ``SEQ`` as ``NEW`` writes:

* ``NEW``: ``t1`` forked at its last checkpoint before the output that ran the child began
  (:mod:`statebound.flow.live.start_points`), so the resumed ``NEW`` runs that output again; a
  grandchild's fork forks each ancestor so, each where its child began;
* ``NEW/Research.1/b2``: the child forked at ``SEQ``, with the edit and the variables set (checked
  against the child's own history and variables), which the output finds by its name and runs on
  from there;
* the child's siblings (the other children of the same output run, ``t1/Research.1/*``), each
  forked *whole*, at its last checkpoint: a finished one returns its stored result and costs
  nothing again, an unfinished one continues where it stood; their children that the output
  they stand in will look for, likewise;
* the forked child's own children that it stands among at ``SEQ`` (it was inside the output that
  ran them), each as it stood when ``SEQ`` was written (its last checkpoint stored no later, by
  the stored times): a child started after ``SEQ`` is not copied, the forked child runs it again.

Every copy is a fork (read through, not copied byte for byte). Everything is checked before the
first thread is written; if a write fails, the threads written are removed again.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Collection, Mapping
from typing import Any

from statebound.errors import CheckpointError
from statebound.flow.live.child_threads import ancestry, children_under
from statebound.flow.live.records import StoredCheckpoint, ThreadRecord
from statebound.flow.live.start_points import start_point, visit_prefix
from statebound.flow.live.thread_store import ThreadStore

__all__ = ["fork_nested"]

Rows = list[tuple[ThreadRecord, StoredCheckpoint]]
Renamed = Callable[[str], str]


def fork_nested(store: ThreadStore, source: str, *, at: int, thread: str, edit: tuple[int, str] | None,
                vars: Mapping[str, Any] | None) -> str:  # noqa: A002
    """Fork the child thread ``source`` at ``at`` as the new top-level thread ``thread`` (module
    docstring); its name."""
    checked = store.lineage(source, upto=at)  # a missing thread is named as such, not as an orphan
    links = ancestry(store, source)
    top = links[-1].parent

    def renamed(name: str) -> str:
        return thread + name[len(top):]

    names = {info.thread for info in store.threads()}
    rows = [store.fork_rows(source, at=at, thread=renamed(source), edit=edit, vars=vars)]
    rows += _children(store, source, at, renamed, names, until=checked[-1].created)
    for link in links:
        rows.append(store.fork_rows(link.parent, at=start_point(store, link), thread=renamed(link.parent)))
        for sibling in children_under(link.prefix, names):
            if sibling != link.thread:
                rows += _copy(store, sibling, renamed, names, until=None)
    _write(store, rows, names)
    return thread


def _copy(store: ThreadStore, name: str, renamed: Renamed, names: Collection[str], until: float | None) -> Rows:
    """``name`` forked at its last checkpoint (stored by ``until``, when given), with the children
    it stands among there; nothing when it had none by then."""
    kept = [point for point in store.lineage(name) if until is None or point.created <= until]
    if not kept:
        return []
    at = kept[-1].seq
    return [store.fork_rows(name, at=at, thread=renamed(name)), *_children(store, name, at, renamed, names, until)]


def _children(store: ThreadStore, thread: str, at: int, renamed: Renamed, names: Collection[str],
              until: float | None) -> Rows:
    """Copies of the children of the output ``thread`` stands in at ``at`` (if any)."""
    prefix = visit_prefix(store, thread, at)
    if prefix is None:
        return []
    return [row for child in children_under(prefix, names) for row in _copy(store, child, renamed, names, until)]


def _write(store: ThreadStore, rows: Rows, names: Collection[str]) -> None:
    """Write the threads, parents before children; none of them when one cannot be written."""
    rows = sorted(rows, key=lambda row: (row[0].thread.count("/"), row[0].thread))
    for record, _ in rows:
        if record.thread in names:
            raise CheckpointError(f"{store.where} has a thread {record.thread!r} already; pick another name")
    written: list[str] = []
    try:
        for record, first in rows:
            now = time.time()  # listings show the threads in the order written, parents first
            store.create_thread(dataclasses.replace(record, created=now))
            written.append(record.thread)
            store.append(dataclasses.replace(first, created=now))
    except CheckpointError:
        for name in reversed(written):
            try:
                store.remove(name)
            except CheckpointError:  # a lost server: the error above says what went wrong first
                break
        raise
