"""Choice states (the names this module always gave): :class:`Pick`, the output function
(:mod:`statebound.flow.outputs.pick`), with how a choice is made and recorded
(:mod:`statebound.flow.choosing`)."""

from __future__ import annotations

from statebound.flow import choosing
from statebound.flow.choosing import *  # noqa: F403 - the names this module always gave
from statebound.flow.outputs.pick import Pick

__all__ = [*choosing.__all__, "Pick"]
