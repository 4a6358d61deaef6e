"""The options ``statebound eval intercode-sql -O key=value`` takes (the benchmark's, read by its
agents): the database server, the replay oracle's file, where SQLite copies are kept, the reply
format and length, and the scoped agents' chooser."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from statebound.contract.benchmark import ChoiceOptions, FormatOptions

__all__ = ["SqlOptions"]


class SqlOptions(FormatOptions, ChoiceOptions):
    db: Literal["sqlite", "mysql"] = Field("sqlite", description="the database server")
    replay: str | None = Field(None, description="recorded actions (JSONL) for the replay oracle")
    cache_dir: str | None = Field(None, description="where the SQLite copies of the databases are kept")
    reply_tokens: int = Field(256, ge=1, le=1_000_000, description="max_tokens of each model call")
    gold_on: Literal["episode", "pristine"] = Field(
        "episode", description="where the gold query runs when an episode is graded: in the episode's database as "
                               "the agent left it (upstream's), or on an untouched copy (pristine)")
