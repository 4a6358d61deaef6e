"""The SF_Agent view: a state's (or group-chat role's) own instruction and model."""

from __future__ import annotations

from dataclasses import dataclass, field

from statebound.llm.base import LLM

__all__ = ["Agent"]


@dataclass(frozen=True, slots=True)
class Agent:
    """An SF_Agent: its own ``instruction`` (sent as part of its system message, never stored in
    the history or shown to other states) and optionally its own ``llm``."""

    instruction: str
    llm: LLM | None = field(default=None, kw_only=True)
    name: str | None = field(default=None, kw_only=True)
