"""The bundled model backends, registered under the entry-point group ``statebound.models``.

Each opener takes the model's full name and its options and returns an :class:`~statebound.llm.base.LLM`;
:func:`statebound.llm.registry.open_model` picks the opener by the name (or the part before its
first colon). A package adds a backend the same way::

    [project.entry-points."statebound.models"]
    mymodel = "mypackage.models:open_mymodel"   # open_mymodel(name, options) -> LLM

An opener marked with :func:`takes` declares its option names, so a run can check them without
opening the model (:func:`statebound.llm.registry.check_model`, used before a Ray run).
"""

from __future__ import annotations

import difflib
import importlib
from collections.abc import Callable
from typing import Any

from statebound.errors import DefinitionError, ModelUnavailable
from statebound.llm.base import LLM, Capabilities
from statebound.llm.model_files import gemma3_270m_path, gguf_path, llama_cpp_missing, smollm2_path

__all__ = [
    "EVERY_MODEL_OPTIONS",
    "GEMMA_CONTEXT",
    "GGUF_CONTEXT",
    "SMOLLM2_CONTEXT",
    "check_options",
    "import_object",
    "open_function",
    "open_gemma",
    "open_gguf",
    "open_openai",
    "open_scripted",
    "open_smollm2",
    "takes",
]

_LOCAL_OPTIONS = frozenset({"mode", "n_ctx", "n_threads", "n_batch", "chat_format", "flash_attn"})
_OPENAI_OPTIONS = frozenset(
    {"base_url", "api_key", "timeout", "attempts", "transport", "completions", "grammar_field", "scoring",
     "retry", "top_logprobs", "response_format", "tool_calls", "profile", "chat_template"}
)
SMOLLM2_CONTEXT = 8192  # SmolLM2 was trained with 8k context
GEMMA_CONTEXT = 8192  # Gemma 3 270M allows 32k; 8k keeps memory small
GGUF_CONTEXT = 8192  # for any other file; pass n_ctx= to change it
FUNCTION_PREFIX = "function:"
Opener = Callable[[str, dict[str, Any]], LLM]


def takes(options: frozenset[str]) -> Callable[[Opener], Opener]:
    """Declare the option names an opener accepts (read by :func:`~statebound.llm.registry.check_model`)."""

    def mark(opener: Opener) -> Opener:
        opener.options = options  # type: ignore[attr-defined]
        return opener

    return mark


EVERY_MODEL_OPTIONS = frozenset({"cache", "price"})  # open_model takes them whatever the backend


def check_options(name: str, options: dict[str, Any], allowed: frozenset[str]) -> None:
    """Refuse options the backend does not take, naming the ones it does (with those every model
    takes, :data:`EVERY_MODEL_OPTIONS`)."""
    known = sorted(allowed | EVERY_MODEL_OPTIONS)
    unknown = sorted(set(options) - set(known))
    if unknown:
        close = difflib.get_close_matches(unknown[0], known, n=1)
        hint = f" (did you mean {close[0]}?)" if close else ""
        raise DefinitionError(
            f"open_model({name!r}) got unknown option(s) {', '.join(unknown)}{hint}; it takes {', '.join(known)}"
        )


def _open_local(name: str, path_of: Callable[[], Any], default_mode: str, n_ctx: int,
                options: dict[str, Any]) -> LLM:
    check_options(name, options, _LOCAL_OPTIONS)
    if reason := llama_cpp_missing():
        raise ModelUnavailable(f"{name}: {reason}")
    from statebound.llm.llamacpp import LlamaCppLLM, LlamaOptions

    mode = options.pop("mode", default_mode)
    load = LlamaOptions(**{"n_ctx": n_ctx, **options})
    return LlamaCppLLM(path_of(), model=name, mode=mode, options=load)


@takes(_LOCAL_OPTIONS)
def open_smollm2(name: str, options: dict[str, Any]) -> LLM:
    """``smollm2``: SmolLM2-135M-Instruct, the embedded default (chat)."""
    return _open_local(name, smollm2_path, "chat", SMOLLM2_CONTEXT, options)


@takes(_LOCAL_OPTIONS)
def open_gemma(name: str, options: dict[str, Any]) -> LLM:
    """``gemma3-270m``: a base model, so plain completion unless asked otherwise."""
    return _open_local(name, gemma3_270m_path, "completion", GEMMA_CONTEXT, options)


@takes(_LOCAL_OPTIONS)
def open_gguf(name: str, options: dict[str, Any]) -> LLM:
    """``gguf:PATH``: any GGUF file on disk (chat)."""
    file = name.removeprefix("gguf:")
    return _open_local(name, lambda: gguf_path(file), "chat", GGUF_CONTEXT, options)


@takes(_OPENAI_OPTIONS)
def open_openai(name: str, options: dict[str, Any]) -> LLM:
    """``openai:MODEL`` (or ``openai`` with the model from the environment or config file)."""
    model = name.removeprefix("openai").removeprefix(":")
    check_options(f"openai:{model}", options, _OPENAI_OPTIONS)
    from statebound.llm.config import resolve_openai_settings
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


@takes(frozenset({"replies"}))
def open_scripted(name: str, options: dict[str, Any]) -> LLM:
    """``scripted``: the test double that replays ``replies``."""
    check_options(name, options, frozenset({"replies"}))
    from statebound.llm.testing import ScriptedLLM

    replies = options.get("replies", ())
    if isinstance(replies, str) or not all(isinstance(reply, str) for reply in replies):
        raise DefinitionError(f"scripted's replies must be a list of strings, got {replies!r}: "
                              "--model-option 'replies=[\"first reply\", \"second\"]'")
    return ScriptedLLM(replies=replies)


@takes(frozenset({"grammar", "tools"}))
def open_function(name: str, options: dict[str, Any]) -> LLM:
    """``function:package.module:responder``: replies computed by an importable responder (the test
    double the harness uses, or a model-free baseline); ``grammar=true`` says it reads grammars,
    ``tools=true`` that it may answer with tool calls (a ``Choice`` with ``tool_calls``)."""
    from statebound.llm.testing import FunctionLLM

    check_options(name, options, frozenset({"grammar", "tools"}))
    responder = import_object(name.removeprefix(FUNCTION_PREFIX))
    if not callable(responder):
        raise DefinitionError(f"{name!r} does not name a callable responder")
    def flag(key: str) -> bool:
        return options.get(key) in (True, "true", "1", 1)

    capabilities = Capabilities(completion=True, chat=True, logprobs=True, grammar=flag("grammar"), tools=flag("tools"))
    return FunctionLLM(respond=responder, model=name, capabilities=capabilities)


def import_object(path: str) -> Any:
    """Import ``"package.module:attribute"`` (dots after the colon walk attributes)."""
    module_name, sep, attribute = path.partition(":")
    if not sep or not module_name or not attribute:
        raise DefinitionError(f"{path!r} is not an import path; write it as 'package.module:name'")
    try:
        target: Any = importlib.import_module(module_name)
    except ImportError as exc:
        raise DefinitionError(f"cannot import {module_name!r} (from {path!r}): {exc}") from exc
    for part in attribute.split("."):
        try:
            target = getattr(target, part)
        except AttributeError:
            raise DefinitionError(f"{module_name!r} has no attribute {attribute!r} (from {path!r})") from None
    return target
