"""LLM backends behind one small async protocol, a model registry, prices and usage metering.

``open_model("smollm2")`` (embedded default), ``open_model("openai:gpt-4o-mini")``, ...; see
``docs/models.md``. Backends import their heavy libraries (llama_cpp, openai) only when opened.
``FunctionLLM(respond)`` makes a backend of a plain function, ``ScriptedLLM(replies)`` replays
replies; a hand-written backend is checked against the protocol by :func:`check_llm` (a run does).
"""

from __future__ import annotations

from statebound.llm.base import (
    LLM,
    Capabilities,
    Choice,
    Completion,
    LLMWrapper,
    Message,
    Request,
    TokenLogprob,
    Usage,
    chat,
    complete_sync,
)
from statebound.llm.conformance import BackendProtocolError, check_llm
from statebound.llm.pricing import Price, cost, is_priced, price_for
from statebound.llm.registry import ModelInfo, list_models, open_model
from statebound.llm.testing import FunctionLLM, ScriptedLLM
from statebound.llm.usage import MeteredLLM, UsageMeter, UsageRecord

__all__ = [
    "LLM",
    "BackendProtocolError",
    "Capabilities",
    "Choice",
    "Completion",
    "FunctionLLM",
    "LLMWrapper",
    "Message",
    "MeteredLLM",
    "ModelInfo",
    "Price",
    "Request",
    "ScriptedLLM",
    "TokenLogprob",
    "Usage",
    "UsageMeter",
    "UsageRecord",
    "chat",
    "check_llm",
    "complete_sync",
    "cost",
    "is_priced",
    "list_models",
    "open_model",
    "price_for",
]
