"""Group chats (the names this module always gave): :mod:`statebound.flow.outputs.group_chat`."""

from __future__ import annotations

from statebound.flow.outputs.group_chat import (
    AUTO,
    MANUAL,
    METHODS,
    RANDOM,
    ROUND_ROBIN,
    GroupChat,
    Role,
    SpeakerSelector,
)

__all__ = ["AUTO", "MANUAL", "METHODS", "RANDOM", "ROUND_ROBIN", "GroupChat", "Role", "SpeakerSelector"]
