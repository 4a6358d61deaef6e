"""What model calls cost, in US dollars per 1,000 prompt / completion tokens.

The table holds the prices the StateFlow paper used (GPT-3.5-Turbo-1106 and GPT-4-Turbo-1106),
some current OpenAI models (list prices, standard tier), and local models at zero. Unknown models
cost 0 and :func:`price_for` returns ``None`` for them, so a report can say "price unknown"
instead of pretending a run was free. Add your own with :func:`register_price`, with the model
option ``price`` (``--model-option price=0.15,0.6``: USD per million prompt, completion tokens;
``price=free`` for a local server), or in the config file's ``[prices]`` table
(``"openai:local" = "free"``, ``"openai:my-model" = [0.15, 0.6]``).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

from statebound.errors import DefinitionError
from statebound.llm.base import Usage

__all__ = ["ALIASES", "PRICES", "Price", "cost", "is_priced", "parse_price", "price_for", "register_price"]


@dataclass(frozen=True, slots=True)
class Price:
    """USD per 1,000 tokens."""

    prompt_per_1k: float
    completion_per_1k: float

    @classmethod
    def per_million(cls, prompt: float, completion: float) -> Price:
        """A price given as USD per million tokens (how providers list them)."""
        return cls(prompt / 1000, completion / 1000)

    def of(self, usage: Usage) -> float:
        return (
            usage.prompt_tokens * self.prompt_per_1k
            + usage.completion_tokens * self.completion_per_1k
        ) / 1000


FREE = Price(0.0, 0.0)

PRICES: dict[str, Price] = {
    # The StateFlow paper's models (its cost tables use these prices).
    "gpt-3.5-turbo-1106": Price(0.001, 0.002),
    "gpt-4-1106-preview": Price(0.01, 0.03),
    # Current OpenAI models.
    "gpt-3.5-turbo-0125": Price(0.0005, 0.0015),
    "gpt-3.5-turbo": Price(0.0005, 0.0015),
    "gpt-3.5-turbo-instruct": Price(0.0015, 0.002),
    "gpt-4-turbo": Price(0.01, 0.03),
    "gpt-4o": Price(0.0025, 0.01),
    "gpt-4o-mini": Price(0.00015, 0.0006),
    "gpt-4.1": Price(0.002, 0.008),
    "gpt-4.1-mini": Price(0.0004, 0.0016),
    "gpt-4.1-nano": Price(0.0001, 0.0004),
    "o3-mini": Price(0.0011, 0.0044),
    # Local models and test doubles.
    "smollm2": FREE,
    "gemma3-270m": FREE,
    "scripted": FREE,
    "function": FREE,
}

ALIASES = {"gpt-4-turbo-1106": "gpt-4-1106-preview"}  # the paper's name for it
_FREE_PREFIXES = ("gguf:", "function:")  # any local file; responders computed in this process
_PROVIDER_PREFIX = re.compile(r"^openai:")
_SNAPSHOT_DATE = re.compile(r"-\d{4}-\d{2}-\d{2}$")  # gpt-4o-2024-08-06 -> gpt-4o


def price_for(model: str) -> Price | None:
    """The price of ``model`` (``openai:`` prefix and snapshot dates ignored), or ``None``."""
    if model in PRICES:  # as registered, prefix and all (a price set for "openai:local")
        return PRICES[model]
    if model.startswith(_FREE_PREFIXES):
        return FREE
    name = _PROVIDER_PREFIX.sub("", model)
    name = ALIASES.get(name, name)
    if name in PRICES:
        return PRICES[name]
    return PRICES.get(_SNAPSHOT_DATE.sub("", name))


def is_priced(model: str) -> bool:
    """Whether the table knows ``model`` (an unknown model's cost of 0 means "unknown")."""
    return price_for(model) is not None


def cost(model: str, usage: Usage) -> float:
    """USD for ``usage`` on ``model``; 0.0 for unknown models (check with :func:`is_priced`)."""
    price = price_for(model)
    return 0.0 if price is None else price.of(usage)


def register_price(model: str, *, prompt_per_1k: float, completion_per_1k: float) -> None:
    """Add or replace a model's price (e.g. a private deployment's)."""
    if prompt_per_1k < 0 or completion_per_1k < 0:
        raise ValueError("prices cannot be negative")
    PRICES[model] = Price(prompt_per_1k, completion_per_1k)


_PRICE_FORM = ("a price is 'free', or USD per million prompt and completion tokens: "
               "price=0.15,0.6 (a model option) or [0.15, 0.6] (the config file)")


def parse_price(value: Any, *, where: str) -> Price:
    """A price as a model option or the config file gives it: ``"free"`` (or 0), ``"0.15,0.6"``,
    ``[0.15, 0.6]`` or ``{"prompt": 0.15, "completion": 0.6}``, in USD per million tokens;
    anything else is a :class:`~statebound.errors.DefinitionError` naming ``where`` it came from."""
    if isinstance(value, str) and value.strip().lower() == "free" or (
            isinstance(value, int | float) and not isinstance(value, bool) and value == 0):
        return FREE
    if isinstance(value, str):
        parts: Any = [part.strip() for part in value.split(",")]
    elif isinstance(value, dict):
        parts = [value.get("prompt"), value.get("completion")] if set(value) == {"prompt", "completion"} else []
    else:
        parts = value if isinstance(value, list | tuple) else []
    try:
        prompt, completion = (float(part) for part in parts) if len(parts) == 2 else (None, None)
    except (TypeError, ValueError):
        prompt = completion = None
    if prompt is None or completion is None or not all(
            math.isfinite(n) and n >= 0 for n in (prompt, completion)):
        raise DefinitionError(f"{where}: {value!r} is not a price; {_PRICE_FORM}")
    return Price.per_million(prompt, completion)

