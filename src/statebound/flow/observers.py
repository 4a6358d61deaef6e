"""Run observers: code outside the engine (tracing) that watches every flow run.

An observer is called once as each run starts, with the run's flow name and model; it returns an
event callback for that run (or None) and the model the run should use (the one given, or a
wrapper around it). :mod:`statebound.telemetry` registers one while tracing is on; with none
registered a run pays nothing.
"""

from __future__ import annotations

from collections.abc import Callable

from statebound.flow.listeners import EventCallback
from statebound.llm.base import LLM

__all__ = ["RunObserver", "add_observer", "observe_run", "remove_observer"]

RunObserver = Callable[[str, "LLM | None"], "tuple[EventCallback | None, LLM | None]"]

_observers: list[RunObserver] = []


def add_observer(observer: RunObserver) -> None:
    """Watch every run from now on (once, however often it is added)."""
    if observer not in _observers:
        _observers.append(observer)


def remove_observer(observer: RunObserver) -> None:
    """Stop watching runs with ``observer`` (no error if it was not added)."""
    if observer in _observers:
        _observers.remove(observer)


def observe_run(flow: str, llm: LLM | None) -> tuple[list[EventCallback], LLM | None]:
    """The callbacks the observers give a starting run of ``flow``, and the model it should use."""
    sinks: list[EventCallback] = []
    for observer in tuple(_observers):
        sink, llm = observer(flow, llm)
        if sink is not None:
            sinks.append(sink)
    return sinks, llm
