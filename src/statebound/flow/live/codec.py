"""Checkpoint bodies as bytes: history entries, LLM calls and positions, JSON via orjson.

Entries and calls are written compactly: what follows from the checkpoint (its state) or from
the entry's source (its chat role) is left out, and so are empty fields.

An entry's ``data`` must be JSON (dicts with string keys, lists, strings, finite numbers, integers
of 64 bits at most, booleans, None, nested at most ``json_data.MAX_DEPTH`` deep; tuples come back
as lists): anything else is refused when the checkpoint is written, with an error naming the tool
and the place in the data, so a resumed run never sees data different from the original run's.
"""

from __future__ import annotations

from typing import Any

import orjson

from statebound.errors import CheckpointError
from statebound.flow.history import Entry, EntryRole
from statebound.flow.json_data import json_problem
from statebound.flow.result import CallRecord
from statebound.llm.base import Usage

__all__ = ["decode", "decode_call", "decode_entry", "encode", "encode_call", "encode_entry"]

_ROLE_OF: dict[str, EntryRole] = {"task": "user", "instruction": "user", "human": "user", "llm": "assistant", "tool": "tool"}


def encode_entry(entry: Entry, state: str) -> list[Any]:
    """``[source, content]``, then ``{r: role, t: state, n: name, o: ok, u: usage, d: data}``
    for those that are set and differ from the defaults (``state``: the checkpoint's)."""
    data = entry.data
    if data is not None and (problem := json_problem(data)) is not None:
        who = f"tool {entry.name!r}" if entry.source == "tool" else f"the {entry.source} entry"
        raise CheckpointError(
            f"{who} in state {entry.state!r} returned data a checkpoint cannot store ({problem}); "
            "return JSON data (dict, list, str, number, bool, None) in ToolResult.data, or run "
            "without a checkpointer"
        )
    extras: dict[str, Any] = {}
    if entry.role != _ROLE_OF.get(entry.source):
        extras["r"] = entry.role
    if entry.state != state:
        extras["t"] = entry.state
    if entry.name is not None:
        extras["n"] = entry.name
    if entry.ok is not None:
        extras["o"] = entry.ok
    if (usage := entry.usage) is not None:
        extras["u"] = [usage.prompt_tokens, usage.completion_tokens, usage.calls]
    if data is not None:
        extras["d"] = data
    return [entry.source, entry.content, extras] if extras else [entry.source, entry.content]


def decode_entry(row: list[Any], state: str) -> Entry:
    source, content, *rest = row
    extras = rest[0] if rest else {}
    usage = extras.get("u")
    return Entry(extras.get("r") or _ROLE_OF[source], content, extras.get("t", state), source, extras.get("n"),
                 extras.get("o"), None if usage is None else Usage(*usage), extras.get("d"))


def encode_call(call: CallRecord, state: str) -> list[Any]:
    """``[kind, model, prompt, completion, calls, cost]``, then the state if not ``state``."""
    u = call.usage
    row = [call.kind, call.model, u.prompt_tokens, u.completion_tokens, u.calls, call.cost]
    return row if call.state == state else [*row, call.state]


def decode_call(row: list[Any], state: str) -> CallRecord:
    kind, model, prompt, completion, calls, cost, *where = row
    return CallRecord(where[0] if where else state, kind, model, Usage(prompt, completion, calls), cost)


def encode(body: dict[str, Any]) -> bytes:
    return orjson.dumps(body) if body else b""


def decode(raw: bytes) -> dict[str, Any]:
    """A stored body (ValueError, TypeError or KeyError when it is damaged)."""
    if not raw:
        return {}
    body = orjson.loads(raw)
    if not isinstance(body, dict):
        raise ValueError(f"a checkpoint body is a JSON object, found {type(body).__name__}")
    return body
