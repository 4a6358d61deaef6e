"""Models named by plain data, so any process (a Ray worker too) can open them."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from statebound.llm.base import LLM

__all__ = ["ModelSpec", "open_llm"]


@dataclass(frozen=True, slots=True)
class ModelSpec:
    """``ModelSpec("smollm2", {"mode": "chat"})``; ``name`` is what results and reports show."""

    name: str
    options: Mapping[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """Safe to store or print: secrets as fingerprints (:mod:`statebound.llm.model_options`)."""
        from statebound.llm.model_options import redacted

        return {"name": self.name, "options": redacted(self.options)}


def open_llm(spec: ModelSpec) -> LLM:
    """Open the model ``spec`` names, in this process (:func:`statebound.llm.registry.open_model`)."""
    from statebound.llm.registry import open_model

    return open_model(spec.name, **dict(spec.options))
