"""ALFWorld agents: ReAct, StateAct (chain of states, with its ablations and JSON variant),
StateFlow state machines per task type, and the walkthrough oracle; :data:`AGENTS` is registered
for the ``alfworld`` benchmark by entry point."""

from statebound.agents.alfworld.agents import AGENTS, FlowAgentForGame, LoopAgent, Walkthrough
from statebound.agents.alfworld.phases import build_phases
from statebound.agents.alfworld.prompts import react_prompt, stateact_prompt
from statebound.agents.alfworld.walkthrough import WalkthroughOutcome, play_walkthrough

__all__ = [
    "AGENTS",
    "FlowAgentForGame",
    "LoopAgent",
    "Walkthrough",
    "WalkthroughOutcome",
    "build_phases",
    "play_walkthrough",
    "react_prompt",
    "stateact_prompt",
]
