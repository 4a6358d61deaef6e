"""What a stored thread remembers of its flow, so a resume with another flow is refused."""

from __future__ import annotations

from typing import Any

import orjson

from statebound.flow.draw import output_labels
from statebound.flow.machine import Machine

__all__ = ["differences", "origin", "signature", "vars_schema"]


def signature(machine: Machine) -> str:
    """The flow's name, initial state and each state's output functions and finality (JSON):
    what a stored position (a state, an output function's index) refers to; and the JSON schema
    of its variables (what a fork's variables are checked against without the flow at hand)."""
    states = {s.name: {"outputs": output_labels(machine, s.name), "final": s.final} for s in machine.states}
    kept: dict[str, Any] = {"name": machine.name, "initial": machine.initial, "states": states}
    if machine.vars is not None:
        kept["vars"] = machine.vars.schema()
    if machine.origin is not None:
        kept["origin"] = machine.origin
    return orjson.dumps(kept).decode()


def _kept(stored: str, key: str) -> Any:
    try:
        return orjson.loads(stored).get(key)
    except (orjson.JSONDecodeError, AttributeError):
        return None


def vars_schema(stored: str) -> dict[str, Any] | None:
    """The JSON schema of the variables of the flow a thread was stored with (None: it declared
    none, or the thread was stored before schemas were kept)."""
    schema = _kept(stored, "vars")
    return schema if isinstance(schema, dict) else None


def origin(stored: str) -> str | None:
    """Where the flow a thread was stored with was loaded from (``statebound run``'s FLOW), if known."""
    found = _kept(stored, "origin")
    return found if isinstance(found, str) else None


def differences(stored: str, machine: Machine) -> list[str]:
    """How ``machine`` differs from the flow a thread was stored with (empty: it is the same)."""
    old: dict[str, Any] = orjson.loads(stored)
    new: dict[str, Any] = orjson.loads(signature(machine))
    found = []
    if old["name"] != new["name"]:
        found.append(f"flow name {old['name']!r} -> {new['name']!r}")
    added = [s for s in new["states"] if s not in old["states"]]
    removed = [s for s in old["states"] if s not in new["states"]]
    if added:
        found.append(f"states added: {', '.join(added)}")
    if removed:
        found.append(f"states removed: {', '.join(removed)}")
    if old["initial"] != new["initial"]:
        found.append(f"initial state {old['initial']!r} -> {new['initial']!r}")
    for name in old["states"]:
        before, after = old["states"][name], new["states"].get(name)
        if after is None:
            continue
        if before["outputs"] != after["outputs"]:
            found.append(f"state {name!r} outputs {before['outputs']} -> {after['outputs']}")
        if before["final"] != after["final"]:
            found.append(f"state {name!r} final {before['final']} -> {after['final']}")
    return found
