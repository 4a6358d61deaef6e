"""The Agent Protocol's JSON shapes, made from statebound's threads, checkpoints and runs.

A thread's ``values`` (its state, as LangGraph clients read it)::

    {"messages": [...], "vars": {...}, "task": "...", "state": "Review", "turn": 3,
     "trajectory": ["Draft", "Review"], "status": "paused"}

``messages`` are the history as LangChain-style message dicts (``type`` human/ai/tool/system,
``content``, ``id``, and the statebound entry in ``additional_kwargs``), so chat UIs built on the
protocol show them; ``vars`` are the flow variables as stored (JSON). A paused thread's question
is its interrupt: ``{"value": question, "id": "THREAD:SEQ"}``, answered with
``Command(resume=...)``. A checkpoint's id is its number in the thread's lineage, as text.
"""

from __future__ import annotations

import datetime
from collections.abc import Mapping, Sequence
from typing import Any

from statebound.flow.context import Snapshot
from statebound.flow.history import Entry
from statebound.flow.live.records import StoredCheckpoint, ThreadRecord
from statebound.serve.db import RunRow

__all__ = ["THREAD_STATUS", "iso", "message", "run_shape", "state_shape", "values"]

_TYPES = {"user": "human", "assistant": "ai", "tool": "tool", "system": "system"}
# a statebound status -> the protocol's thread status (idle | busy | interrupted | error)
THREAD_STATUS = {"paused": "interrupted", "error": "error", "running": "idle"}


def iso(stamp: float) -> str:
    return datetime.datetime.fromtimestamp(stamp, datetime.UTC).isoformat()


def message(thread: str, index: int, entry: Entry) -> dict[str, Any]:
    """A history entry as a LangChain-style message dict."""
    shaped: dict[str, Any] = {"type": _TYPES.get(entry.role, entry.role), "content": entry.content,
                              "id": f"{thread}:{index}", "additional_kwargs": {"statebound": entry.to_dict()}}
    if entry.name is not None:
        shaped["name"] = entry.name
    call = entry.data.get("tool_call") if isinstance(entry.data, dict) else None
    if entry.role == "tool" and isinstance(call, dict):
        shaped["tool_call_id"] = call.get("id")
    calls = entry.data.get("tool_calls") if isinstance(entry.data, dict) else None
    if isinstance(calls, list):
        shaped["tool_calls"] = [{"id": c.get("id"), "name": c.get("name"), "args": c.get("arguments")} for c in calls]
    return shaped


def values(record: ThreadRecord, snapshot: Snapshot, status: str, *, pending: str | None = None,
           interrupt_id: str | None = None) -> dict[str, Any]:
    """A thread's ``values`` where ``snapshot`` stands (with its interrupt when it waits)."""
    shaped: dict[str, Any] = {
        "messages": [message(record.thread, i, entry) for i, entry in enumerate(snapshot.history)],
        "vars": dict(snapshot.vars) if snapshot.vars is not None else None,
        "task": record.task,
        "state": snapshot.state,
        "turn": snapshot.turn,
        "trajectory": list(snapshot.trajectory),
        "status": status,
    }
    if pending is not None:
        shaped["__interrupt__"] = [{"value": pending, "id": interrupt_id}]
    return shaped


def state_shape(record: ThreadRecord, checkpoint: StoredCheckpoint, snapshot: Snapshot, status: str,
                *, pending: str | None, final: bool, parent: StoredCheckpoint | None) -> dict[str, Any]:
    """A ``ThreadState``: the thread's values at ``checkpoint``, what runs next, its interrupts."""
    interrupt_id = f"{record.thread}:{checkpoint.seq}"
    interrupts = [{"value": pending, "id": interrupt_id}] if pending is not None else []
    shaped_values = values(record, snapshot, status, pending=pending, interrupt_id=interrupt_id)
    return {
        "values": shaped_values,
        "next": [] if final else [snapshot.state],
        "checkpoint": _checkpoint(record.thread, checkpoint.seq),
        "metadata": {"step": checkpoint.turn, "source": checkpoint.kind, "state": checkpoint.state,
                     "written_by": checkpoint.thread},
        "created_at": iso(checkpoint.created),
        "parent_checkpoint": _checkpoint(record.thread, parent.seq) if parent is not None else None,
        "tasks": [{"id": interrupt_id, "name": snapshot.state, "error": None, "interrupts": interrupts,
                   "checkpoint": None, "state": None, "result": None}] if not final else [],
        "interrupts": interrupts,
    }


def _checkpoint(thread: str, seq: int) -> dict[str, Any]:
    return {"thread_id": thread, "checkpoint_ns": "", "checkpoint_id": str(seq), "checkpoint_map": None}


def run_shape(run: RunRow) -> dict[str, Any]:
    """A ``Run``."""
    return {"run_id": run.run_id, "thread_id": run.thread, "assistant_id": run.assistant, "status": run.status,
            "created_at": iso(run.created), "updated_at": iso(run.updated), "metadata": run.metadata,
            "multitask_strategy": run.multitask, "kwargs": run.request}


def thread_shape(thread: str, metadata: Mapping[str, Any], created: float, updated: float, status: str,
                 shaped_values: Mapping[str, Any] | None) -> dict[str, Any]:
    """A ``Thread``."""
    interrupts = {}
    if shaped_values is not None and shaped_values.get("__interrupt__"):
        found = shaped_values["__interrupt__"]
        interrupts = {str(found[0]["id"]): list(found)}
    return {"thread_id": thread, "created_at": iso(created), "updated_at": iso(updated), "metadata": dict(metadata),
            "status": status, "values": dict(shaped_values) if shaped_values is not None else None,
            "interrupts": interrupts}


def assistant_shape(name: str, description: str | None, created: float) -> dict[str, Any]:
    """An ``Assistant``: one per served flow, its id the flow's name."""
    return {"assistant_id": name, "graph_id": name, "name": name, "description": description, "config": {},
            "context": {}, "metadata": {"created_by": "statebound"}, "version": 1, "created_at": iso(created),
            "updated_at": iso(created)}


def listed(items: Sequence[dict[str, Any]], *, limit: int, offset: int) -> list[dict[str, Any]]:
    return list(items[offset:offset + limit])
