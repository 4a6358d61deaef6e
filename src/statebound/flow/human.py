"""``AskHuman`` (the name this module always gave): :mod:`statebound.flow.outputs.ask_human`."""

from __future__ import annotations

from statebound.flow.outputs.ask_human import AskHuman

__all__ = ["AskHuman"]
