"""Where a child run began in its parent's checkpoints, and which children a thread stands among.

A child ``PARENT/STATE.VISIT/KEY`` was run by one output function of ``STATE`` (the ``Sub``
named ``KEY``, the ``Parallel`` with a branch ``KEY``, or the ``FanOut``: its signature's output
labels say which), on the parent's ``VISIT``-th visit of that state (counted as the engine counts
visits: the ``start`` and ``transition`` checkpoints entering it). The parent checkpoint a fork
of the child starts the parent from is the last one of that visit before that output began: a
parent run from it runs the output again, which finds the child by its name.
"""

from __future__ import annotations

from collections.abc import Sequence

import orjson

from statebound.errors import CheckpointError
from statebound.flow.live.child_threads import ChildOf
from statebound.flow.live.codec import decode
from statebound.flow.live.fold import fold
from statebound.flow.live.records import NOT_STEPS, StoredCheckpoint
from statebound.flow.live.thread_store import ThreadStore

__all__ = ["start_point", "visit_prefix"]


def start_point(store: ThreadStore, link: ChildOf) -> int:
    """The number of the checkpoint of ``link.parent`` just before the output that ran the child
    began; a :class:`CheckpointError` naming the thread when the store cannot say."""
    record = store.record(link.parent)
    assert record is not None  # ancestry() checked it
    index = _output_index(record.signature, link)
    return _before_output(_visit(store.lineage(link.parent), link), index, link)


def _why(link: ChildOf, reason: str) -> CheckpointError:
    return CheckpointError(f"cannot fork child thread {link.thread!r} as part of thread {link.parent!r}: {reason}; "
                           "the store is damaged or was written by another version")


def _runs(label: str, key: str) -> bool:
    """Whether an output labelled ``label`` runs a child keyed ``key``."""
    if label == f"Sub({key})":
        return True
    if label.startswith("Parallel(") and label.endswith(")"):
        return key in label[len("Parallel("):-1].split(", ")
    return label.startswith("FanOut(") and key.isdigit()


def _output_index(signature: str, link: ChildOf) -> int:
    """The index of the output of ``link.state`` that ran the child (the first that can: a
    second one with the same key would have found the first one's thread)."""
    try:
        labels = orjson.loads(signature)["states"][link.state]["outputs"]
    except (orjson.JSONDecodeError, KeyError, TypeError):
        raise _why(link, f"the parent's flow has no state {link.state!r}") from None
    for index, label in enumerate(labels):
        if isinstance(label, str) and _runs(label, link.key):
            return index
    raise _why(link, f"no output of state {link.state!r} ({', '.join(map(str, labels))}) runs a child {link.key!r}")


def _visit(lineage: Sequence[StoredCheckpoint], link: ChildOf) -> list[StoredCheckpoint]:
    """The checkpoints of the parent's ``link.visit``-th visit of ``link.state``, from the one
    entering it to the one before the next transition."""
    entries = [i for i, point in enumerate(lineage) if point.kind in ("start", "transition")]
    visits = [i for i in entries if lineage[i].state == link.state]
    if len(visits) < link.visit:
        raise _why(link, f"the parent entered state {link.state!r} {len(visits)} time(s), not {link.visit}")
    first = visits[link.visit - 1]
    end = next((i for i in entries if i > first), len(lineage))
    return list(lineage[first:end])


def _inside(point: StoredCheckpoint) -> bool:
    """Whether ``point`` was written while an output function ran (before a tool, a pause, its
    progress, a failure), not between two of them."""
    if point.kind in ("intent", "pause", "end"):
        return True
    return point.kind == "output" and "o" in decode(point.body)


def _before_output(visit: Sequence[StoredCheckpoint], index: int, link: ChildOf) -> int:
    """The last checkpoint of ``visit`` between outputs, at or before output ``index`` (a fork or
    edit checkpoint counts as the step checkpoint before it does)."""
    chosen: int | None = None
    between = False
    for point in visit:
        if point.kind not in NOT_STEPS:
            if point.step > index or (point.step == index and _inside(point)):
                break
            between = not _inside(point)
        if between:
            chosen = point.seq
    if chosen is None:
        raise _why(link, f"no checkpoint of state {link.state!r} (visit {link.visit}) comes before output {index}")
    return chosen


def visit_prefix(store: ThreadStore, thread: str, at: int) -> str | None:
    """``THREAD/STATE.VISIT/``: where the children of the output ``thread`` stands in at its
    checkpoint ``at`` are named (None: it stands in no output, or it ended)."""
    folded = fold(store.lineage(thread, upto=at), "")
    if folded.kind == "end" and folded.status != "error":
        return None
    snapshot = folded.resume_from
    if snapshot.step < 0:
        return None
    return f"{thread}/{snapshot.state}.{snapshot.trajectory.count(snapshot.state)}/"
