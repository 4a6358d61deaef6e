"""Chain-of-states prompting (StateAct, Rozanov & Rei 2024): at every step the agent writes its goal, the
state it tracks (location, inventory), a thought and an action.

:mod:`~statebound.chain.steps` writes and reads one step (text or JSON, with the paper's
ablations); :mod:`~statebound.chain.loop` is the prompt-continuation loop that plays an episode in
an environment, shared with ReAct. The ALFWorld agents built on it are in
:mod:`statebound.agents.alfworld`.
"""

from statebound.chain.loop import (
    ChainPolicy,
    LoopEpisode,
    ReactPolicy,
    StateChecker,
    Turn,
    TurnPolicy,
    TurnRecord,
    play,
)
from statebound.chain.steps import FIELDS, VARIANTS, ChainOfStates, StateStep

__all__ = [
    "FIELDS",
    "VARIANTS",
    "ChainOfStates",
    "ChainPolicy",
    "LoopEpisode",
    "ReactPolicy",
    "StateChecker",
    "StateStep",
    "Turn",
    "TurnPolicy",
    "TurnRecord",
    "play",
]
