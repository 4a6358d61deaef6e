"""``Update`` (the name this module always gave): :mod:`statebound.flow.outputs.update`."""

from __future__ import annotations

from statebound.flow.outputs.update import Update

__all__ = ["Update"]
