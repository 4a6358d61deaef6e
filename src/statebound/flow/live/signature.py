"""What a stored thread remembers of its flow, so a resume with another flow is refused."""

from __future__ import annotations

from typing import Any

import orjson

from statebound.flow.draw import output_labels
from statebound.flow.machine import Machine

__all__ = ["differences", "signature"]


def signature(machine: Machine) -> str:
    """The flow's name, initial state and each state's output functions and finality (JSON):
    what a stored position (a state, an output function's index) refers to."""
    states = {s.name: {"outputs": output_labels(machine, s.name), "final": s.final} for s in machine.states}
    return orjson.dumps({"name": machine.name, "initial": machine.initial, "states": states}).decode()


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
