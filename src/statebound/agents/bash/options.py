"""The options ``statebound eval intercode-bash -O key=value`` takes (the benchmark's, read by its
agents): the replay oracle's file, what the model sees of an output, the reply format and length,
and the scoped agents' chooser."""

from __future__ import annotations

from pydantic import Field

from statebound.contract.benchmark import ChoiceOptions, FormatOptions

__all__ = ["BashOptions"]


class BashOptions(FormatOptions, ChoiceOptions):
    replay: str | None = Field(None, description="recorded actions (JSONL) for the replay oracle")
    observation_chars: int = Field(350, ge=1, le=10_000_000, description="what the model sees of one output")
    reply_tokens: int = Field(256, ge=1, le=1_000_000, description="max_tokens of each model call")
