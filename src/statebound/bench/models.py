"""Models named by plain data, so any process (a Ray worker too) can open them.

A :class:`ModelSpec` is a name plus keyword options. ``function:package.module:responder`` opens a
:class:`~statebound.llm.testing.FunctionLLM` around an importable responder (the test double the
harness uses, or a model-free baseline; option ``grammar=true`` says it reads ``request.grammar``);
every other name goes to :func:`statebound.llm.registry.open_model`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from statebound.bench.registry import resolve_factory
from statebound.errors import DefinitionError
from statebound.llm.base import LLM

__all__ = ["ModelSpec", "open_llm", "parse_options"]

FUNCTION_PREFIX = "function:"


@dataclass(frozen=True, slots=True)
class ModelSpec:
    """``ModelSpec("smollm2", {"mode": "chat"})``; ``name`` is what results and reports show."""

    name: str
    options: Mapping[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "options": dict(self.options)}


def open_llm(spec: ModelSpec) -> LLM:
    """Open the model ``spec`` names, in this process."""
    if spec.name.startswith(FUNCTION_PREFIX):
        from statebound.llm.base import Capabilities
        from statebound.llm.testing import FunctionLLM

        responder = resolve_factory(spec.name[len(FUNCTION_PREFIX) :])
        if not callable(responder):
            raise DefinitionError(f"{spec.name!r} does not name a callable responder")
        unknown = set(spec.options) - {"grammar"}
        if unknown:
            raise DefinitionError(f"function models take only the option grammar=true, not {sorted(unknown)}")
        # grammar=true: the responder reads request.grammar, so agents that need grammars accept it
        capabilities = Capabilities(completion=True, chat=True, logprobs=True,
                                    grammar=spec.options.get("grammar") in (True, "true", "1", 1))
        return FunctionLLM(respond=responder, model=spec.name, capabilities=capabilities)
    try:
        from statebound.llm.registry import open_model
    except ImportError as exc:  # the registry is optional until the LLM backends land
        raise DefinitionError(
            f"cannot open model {spec.name!r}: statebound.llm.registry is unavailable ({exc}); "
            "use a 'function:module:responder' model for tests"
        ) from exc
    return open_model(spec.name, **dict(spec.options))


def parse_options(pairs: list[str] | tuple[str, ...], *, flag: str = "--option") -> dict[str, Any]:
    """``["db=sqlite", "count=5"]`` -> ``{"db": "sqlite", "count": 5}`` (values parsed as JSON if they can be)."""
    options: dict[str, Any] = {}
    for pair in pairs:
        key, sep, raw = pair.partition("=")
        if not sep or not key.strip():
            raise DefinitionError(f"{flag} {pair!r} is not key=value (e.g. {flag} db=sqlite)")
        try:
            value: Any = json.loads(raw)
        except json.JSONDecodeError:
            value = raw
        options[key.strip().replace("-", "_")] = value
    return options
