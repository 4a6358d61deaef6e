"""Checkpoint bodies as bytes: history entries, LLM calls and positions, JSON via orjson.

An entry's ``data`` must be JSON (dicts with string keys, lists, strings, numbers, booleans,
None; tuples come back as lists): anything else is refused when the checkpoint is written, with
an error naming the tool, so a resumed run never sees data different from the original run's.
"""

from __future__ import annotations

from typing import Any

import orjson

from statebound.errors import CheckpointError
from statebound.flow.history import Entry
from statebound.flow.result import CallRecord
from statebound.llm.base import Usage

__all__ = ["decode", "decode_call", "decode_entry", "encode", "encode_call", "encode_entry"]

_SCALARS = (str, int, float, bool, type(None))


def _json_problem(value: Any, where: str) -> str | None:
    """Where ``value`` stops being JSON (None: it is JSON all through)."""
    kind = type(value)
    if kind in _SCALARS:
        return None
    if kind is list or kind is tuple:
        for i, item in enumerate(value):
            if (problem := _json_problem(item, f"{where}[{i}]")) is not None:
                return problem
        return None
    if kind is dict:
        for key, item in value.items():
            if type(key) is not str:
                return f"{where} has the non-string key {key!r}"
            if (problem := _json_problem(item, f"{where}[{key!r}]")) is not None:
                return problem
        return None
    return f"{where} is a {kind.__name__}"


def encode_entry(entry: Entry) -> list[Any]:
    """``[role, content, state, source, name, ok, usage, data]`` (usage as three counts)."""
    usage = entry.usage
    data = entry.data
    if data is not None and (problem := _json_problem(data, "data")) is not None:
        who = f"tool {entry.name!r}" if entry.source == "tool" else f"the {entry.source} entry"
        raise CheckpointError(
            f"{who} in state {entry.state!r} returned data a checkpoint cannot store ({problem}); "
            "return JSON data (dict, list, str, number, bool, None) in ToolResult.data, or run "
            "without a checkpointer"
        )
    return [entry.role, entry.content, entry.state, entry.source, entry.name, entry.ok,
            None if usage is None else [usage.prompt_tokens, usage.completion_tokens, usage.calls], data]


def decode_entry(row: list[Any]) -> Entry:
    role, content, state, source, name, ok, usage, data = row
    return Entry(role, content, state, source, name, ok, None if usage is None else Usage(*usage), data)


def encode_call(call: CallRecord) -> list[Any]:
    u = call.usage
    return [call.state, call.kind, call.model, u.prompt_tokens, u.completion_tokens, u.calls, call.cost]


def decode_call(row: list[Any]) -> CallRecord:
    state, kind, model, prompt, completion, calls, cost = row
    return CallRecord(state, kind, model, Usage(prompt, completion, calls), cost)


def encode(body: dict[str, Any]) -> bytes:
    return orjson.dumps(body)


def decode(raw: bytes | str | memoryview) -> dict[str, Any]:
    """A stored body (ValueError, TypeError or KeyError when it is damaged)."""
    body = orjson.loads(bytes(raw) if isinstance(raw, memoryview) else raw)
    if not isinstance(body, dict):
        raise ValueError(f"a checkpoint body is a JSON object, found {type(body).__name__}")
    return body
