"""The embedded backend: a GGUF model run in-process by llama-cpp-python.

Nothing loads at import. The first request loads the model; one ``Llama`` per (file, options) is
kept per process and shared by every :class:`LlamaCppLLM` on that file. A ``Llama`` is not
thread-safe, so calls on it are serialized with a lock and run in a worker thread, which keeps the
event loop free. When the coroutine awaiting a call is cancelled (a stopped run, a timeout), the
thread stops at its next evaluation step (:mod:`statebound.llm.llama_cancel`) instead of finishing
the call. Log-probabilities need ``logits_all=True`` (slower, more memory), so a second
instance with it is loaded only when a request first asks for log-probabilities.

Greedy requests with a grammar check the grammar against the model's first choice before the
whole vocabulary (:mod:`statebound.llm.lazy_grammar`): the same tokens, 1.2-1.26x faster. A
``Request.schema`` is held by the grammar made from it (:func:`statebound.llm.json_schema.grammar_for`),
and ``Request.tools`` become calls under a grammar (:mod:`statebound.llm.tool_grammar`). Replies
are streamed to a listener set with :func:`statebound.llm.streaming.streaming_to`.

Two modes decide how chat messages are sent:

- ``mode="chat"``: messages go through the model's chat template.
- ``mode="completion"``: messages are written as a plain transcript (``User: ...``/``Assistant:``)
  and continued; a trailing assistant message is continued as is. Use it for base models.

A ``Request(prompt=...)`` is always continued verbatim, in either mode.
"""

from __future__ import annotations

import asyncio
import atexit
import functools
import os
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import msgspec

from statebound.errors import ContextOverflow, DefinitionError, ModelUnavailable, UnsupportedFeature
from statebound.llm.base import (
    Capabilities,
    Choice,
    Completion,
    Message,
    Request,
    TokenLogprob,
    Usage,
    flatten_tool_messages,
)
from statebound.llm.json_schema import GRAMMAR_SCHEMAS, grammar_for
from statebound.llm.lazy_grammar import lazy_grammar_sampling
from statebound.llm.llama_batch import score_batch
from statebound.llm.llama_cancel import cancellable
from statebound.llm.llama_prefix import PrefixCache, share_prefixes
from statebound.llm.llama_scoring import score_text
from statebound.llm.llama_stream import gather_stream
from statebound.llm.model_files import llama_cpp_missing
from statebound.llm.scoring import most_likely
from statebound.llm.streaming import token_sink
from statebound.llm.tool_grammar import tool_call_request, with_tool_calls

if TYPE_CHECKING:
    from llama_cpp import Llama

__all__ = ["LlamaCppLLM", "LlamaOptions", "render_transcript", "unload_models"]

Mode = Literal["chat", "completion"]
PROVIDER = "llama.cpp"
TRANSCRIPT_STOP = "\nUser:"
TOP_LOGPROBS = 20  # alternatives reported per generated token (as OpenAI's API allows at most)
_ROLE_LABELS = {"user": "User", "assistant": "Assistant"}


@dataclass(frozen=True, slots=True, kw_only=True)
class LlamaOptions:
    """How a GGUF file is loaded. Part of the cache key: equal options share one loaded model."""

    n_ctx: int = 8192
    n_threads: int | None = None  # None: $STATEBOUND_THREADS, else every core this process may use
    n_batch: int = 512
    chat_format: str | None = None  # None: the template stored in the GGUF file
    # A pick's prompt read once for all its candidates, and prefixes kept across requests
    # (llama_batch, llama_prefix); the scores are the same either way. None:
    # $STATEBOUND_LLAMA_SHARING ("0" turns both off: one candidate after another, as before), else on.
    sharing: bool | None = None
    # llama.cpp's flash attention: other numbers (another kernel), the same whatever the KV cache
    # holds besides, so a pick's candidates are scored in one batch (llama_batch). None:
    # $STATEBOUND_LLAMA_FLASH_ATTN ("1" turns it on), else off, as every record was made.
    flash_attn: bool | None = None

    def __post_init__(self) -> None:
        for name in ("sharing", "flash_attn"):
            if (value := getattr(self, name)) is not None and not isinstance(value, bool):
                raise DefinitionError(f"{name} must be true or false, not {value!r}")

    def shares(self) -> bool:
        return _switch(self.sharing, "STATEBOUND_LLAMA_SHARING", default=True)

    def flashes(self) -> bool:
        return _switch(self.flash_attn, "STATEBOUND_LLAMA_FLASH_ATTN", default=False)

    def threads(self) -> int:
        if self.n_threads is not None:
            return self.n_threads
        if from_env := os.environ.get("STATEBOUND_THREADS", "").strip():
            if not from_env.isdigit() or int(from_env) < 1:
                raise DefinitionError(f"STATEBOUND_THREADS must be a positive integer, not {from_env!r}")
            return int(from_env)
        return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def _switch(value: bool | None, variable: str, *, default: bool) -> bool:
    """``value``, else the environment ``variable`` ("0" or "1"), else ``default``."""
    if value is not None:
        return value
    from_env = os.environ.get(variable, "1" if default else "0").strip()
    if from_env not in ("0", "1"):
        raise DefinitionError(f"{variable} must be 0 or 1, not {from_env!r}")
    return from_env == "1"


@dataclass(slots=True)
class _Engine:
    llama: Llama
    lock: threading.Lock
    prefixes: PrefixCache | None = None  # None: sharing is off (or logits_all: rows kept per position)


_engines: dict[tuple[str, LlamaOptions, bool, bool, bool], _Engine] = {}
_engines_lock = threading.Lock()


def _load(path: Path, options: LlamaOptions, logits_all: bool) -> _Engine:
    key = (str(path), options, logits_all, options.shares(), options.flashes())
    with _engines_lock:
        if key not in _engines:
            if reason := llama_cpp_missing():
                raise ModelUnavailable(reason)
            from llama_cpp import Llama

            llama = Llama(
                model_path=str(path),
                n_ctx=options.n_ctx,
                # Prompts are evaluated with as many threads as generation; llama-cpp-python would
                # use every core for them, which oversubscribes the machine when several workers
                # each take one (2.6x slower prompts with two one-thread workers on two cores).
                n_threads=options.threads(),
                n_threads_batch=options.threads(),
                n_batch=options.n_batch,
                chat_format=options.chat_format,
                logits_all=logits_all,
                flash_attn=options.flashes(),
                verbose=False,
            )
            if not _engines:  # free models before interpreter teardown, when llama.cpp can still do it
                atexit.register(unload_models)
            prefixes = share_prefixes(llama) if options.shares() and not logits_all else None
            _engines[key] = _Engine(llama, threading.Lock(), prefixes)
        return _engines[key]


def unload_models() -> None:
    """Free every loaded model (the next request loads again)."""
    with _engines_lock:
        for engine in _engines.values():
            with engine.lock:
                engine.llama.close()
        _engines.clear()


def render_transcript(messages: tuple[Message, ...]) -> str:
    """Messages as plain text for a base model; ends ready for the assistant's (next) words."""
    parts = []
    for message in messages:
        if message.role == "system":
            parts.append(message.content)
        else:
            parts.append(f"{_ROLE_LABELS[message.role]}: {message.content}")
    if messages and messages[-1].role == "assistant":
        return "\n\n".join(parts)  # continue the assistant's unfinished turn
    return "\n\n".join([*parts, "Assistant:"])


@functools.lru_cache(maxsize=8)
def _chat_formatter(template: str, eos_token: str, bos_token: str) -> Any:
    """llama-cpp-python's renderer of a GGUF chat template (what chat mode sends), compiled once."""
    from llama_cpp.llama_chat_format import Jinja2ChatFormatter

    return Jinja2ChatFormatter(template=template, eos_token=eos_token, bos_token=bos_token)


def _token_text(llama: Llama, token: int) -> str:
    return llama._model.token_get_text(token) if token != -1 else ""


def _check_grammar(llama: Llama, grammar: str) -> None:
    """Parse ``grammar`` with llama.cpp first: sampling with a broken grammar crashes the process."""
    import llama_cpp

    sampler = llama_cpp.llama_sampler_init_grammar(
        llama._model.vocab, grammar.encode("utf-8"), b"root"
    )
    if not sampler:
        raise DefinitionError(
            "the GBNF grammar does not parse (llama.cpp printed the reason on stderr): it needs a "
            "'root' rule, and every rule it names must be defined"
        )
    llama_cpp.llama_sampler_free(sampler)


def _token_logprobs(raw: dict[str, Any] | None, top: int) -> tuple[TokenLogprob, ...] | None:
    """The reply's tokens with their log-probabilities, and the ``top`` most likely at each
    position (llama-cpp-python's chat or completion shape)."""
    if not raw:
        return None
    if "content" in raw:  # chat shape
        return tuple(
            TokenLogprob(t["token"], float(t["logprob"]),
                         most_likely(((a["token"], a["logprob"]) for a in t.get("top_logprobs") or ()), top))
            for t in raw["content"] or ())
    tops = raw.get("top_logprobs") or [None] * len(raw["tokens"])
    return tuple(
        TokenLogprob(token, float(logprob), most_likely((alternatives or {}).items(), top))
        for token, logprob, alternatives in zip(raw["tokens"], raw["token_logprobs"], tops)
    )


class LlamaCppLLM:
    """A GGUF model run in-process. ``LlamaCppLLM(path, model="smollm2", mode="chat")``."""

    def __init__(
        self,
        path: str | Path,
        *,
        model: str | None = None,
        mode: Mode = "chat",
        options: LlamaOptions = LlamaOptions(),
    ) -> None:
        if mode not in ("chat", "completion"):
            raise DefinitionError(f"mode must be 'chat' or 'completion', not {mode!r}")
        self.path = Path(path)
        self.mode: Mode = mode
        self.options = options
        self._model = model or f"gguf:{self.path}"

    def __repr__(self) -> str:
        return f"LlamaCppLLM({self._model!r}, mode={self.mode!r}, n_ctx={self.options.n_ctx})"

    @property
    def model(self) -> str:
        return self._model

    @property
    def cache_identity(self) -> str:
        """The model file and how messages are sent (what a response cache must tell apart)."""
        return f"llama.cpp|{self._model}|{self.path.name}|{self.mode}|{self.options.chat_format}"

    @property
    def capabilities(self) -> Capabilities:
        return Capabilities(
            completion=True, chat=True, logprobs=True, grammar=True, scoring=True, chat_scoring=True,
            top_logprobs=TOP_LOGPROBS, schema=True, tools=True, extras=frozenset({"seed", GRAMMAR_SCHEMAS}),
        )

    async def complete(self, request: Request) -> Completion:
        cancel = threading.Event()
        try:
            return await asyncio.to_thread(self.complete_blocking, request, cancel=cancel)
        except asyncio.CancelledError:
            cancel.set()  # the worker thread cannot be interrupted: it stops at its next step
            raise

    def complete_blocking(self, request: Request, *, cancel: threading.Event | None = None) -> Completion:
        """The same as :meth:`complete`, in the calling thread (blocks it). Once ``cancel`` is set,
        the call raises ``asyncio.CancelledError`` at its next evaluation step."""
        if request.messages is not None:  # no tool API here: calls and results are read as text
            request = msgspec.structs.replace(request, messages=flatten_tool_messages(request.messages))
        if request.score is not None:
            return self._score(request, cancel)
        if request.schema is not None:  # held to the schema by the grammar made from it
            request = msgspec.structs.replace(request, schema=None, grammar=grammar_for(request.schema, backend=self._model))
        if request.tools:  # described to the model, each reply held to a call by a grammar
            completion = self.complete_blocking(tool_call_request(request, backend=self._model), cancel=cancel)
            return with_tool_calls(completion, request.tools)
        engine = _load(self.path, self.options, request.logprobs or request.top_logprobs > 0)
        with engine.lock, cancellable(engine.llama, cancel), lazy_grammar_sampling(engine.llama):
            if request.grammar is not None:
                _check_grammar(engine.llama, request.grammar)
            if engine.prefixes is not None:
                engine.prefixes.reused.clear()
            raws = [self._sample(engine.llama, request, i) for i in range(request.n)]
        choices = tuple(self._choice(raw["choices"][0], request.top_logprobs) for raw in raws)
        usage = Usage(
            prompt_tokens=raws[0]["usage"]["prompt_tokens"],  # the prompt is read once, as with n
            completion_tokens=sum(raw["usage"]["completion_tokens"] for raw in raws),
            calls=1,
            # the first sample's prompt tokens read before (without sharing: not counted)
            cached_tokens=engine.prefixes.reused[0] if engine.prefixes and engine.prefixes.reused else 0,
        )
        return Completion(choices=choices, usage=usage, model=self._model)

    def _score(self, request: Request, cancel: threading.Event | None) -> Completion:
        """Each text of a ``score=`` request after the same context: the context is evaluated
        once, then the texts' tokens (with sharing off, the context's last token again with each)."""
        engine = _load(self.path, self.options, False)  # logits only where asked: no logits_all
        with engine.lock, cancellable(engine.llama, cancel):
            if request.messages is not None:
                context, add_bos = self._chat_context(engine.llama, request.messages)
            else:
                context, add_bos = request.prompt or "", True
            try:
                if engine.prefixes is not None:
                    scored = score_batch(engine.llama, engine.prefixes, context, request.scored_texts,
                                         add_bos=add_bos)
                    logprobs, usage = scored.logprobs, Usage(scored.prompt_tokens, 0, 1, scored.cached_tokens)
                else:
                    logprobs, usage = self._score_one_by_one(engine.llama, context, request.scored_texts, add_bos)
            except ValueError as error:
                if "context window" not in str(error):
                    raise
                raise ContextOverflow(f"{error}; shorten the text or open the model with a larger "
                                      f"n_ctx (now {self.options.n_ctx})", provider=PROVIDER) from None
        choices = tuple(Choice(text=text, finish_reason="stop", logprobs=values)
                        for text, values in zip(request.scored_texts, logprobs))
        return Completion(choices=choices, usage=usage, model=self._model)

    @staticmethod
    def _score_one_by_one(llama: Llama, context: str, texts: tuple[str, ...], add_bos: bool) -> tuple[
            tuple[tuple[TokenLogprob, ...], ...], Usage]:
        """Each text evaluated after the context on its own, the context's cells kept between."""
        logprobs: list[tuple[TokenLogprob, ...]] = []
        usage = Usage(calls=1)
        for text in texts:
            values, tokens, kept = score_text(llama, context, text, add_bos=add_bos)
            if not logprobs:  # the context counts once
                usage = Usage(tokens, 0, 1, kept)
            else:
                usage += Usage(len(values))
            logprobs.append(values)
        return tuple(logprobs), usage

    def _chat_context(self, llama: Llama, messages: tuple[Message, ...]) -> tuple[str, bool]:
        """The text chat mode would continue for ``messages`` (ending where the assistant's reply
        begins; a trailing assistant message is the start of that reply, continued as is), and
        whether a BOS token still has to be added before it."""
        if self.mode == "completion":
            return render_transcript(messages), True
        started = ""
        if messages and messages[-1].role == "assistant":
            messages, started = messages[:-1], messages[-1].content
        template = llama.metadata.get("tokenizer.chat_template")
        if self.options.chat_format is not None or not template:
            raise UnsupportedFeature(
                f"{self._model}: scoring chat messages uses the chat template stored in the GGUF file, "
                f"and {'chat_format is set' if template else 'the file has none'}; score a prompt string "
                "instead (Request(prompt=...), or Pick(prompt=...))")
        formatter = _chat_formatter(template, _token_text(llama, llama.token_eos()),
                                    _token_text(llama, llama.token_bos()))
        rendered = formatter(messages=[{"role": m.role, "content": m.content} for m in messages])
        return rendered.prompt + started, not rendered.added_special

    def _sample(self, llama: Llama, request: Request, index: int) -> dict[str, Any]:
        from llama_cpp import LlamaGrammar

        common: dict[str, Any] = {
            "max_tokens": request.max_tokens,
            "temperature": request.temperature,
            "stop": list(request.stop),
            "seed": None if request.seed is None else request.seed + index,
            "grammar": LlamaGrammar.from_string(request.grammar, verbose=False)
            if request.grammar is not None
            else None,
        }
        # streamed when someone listens, for one sample without log-probabilities
        sink = token_sink() if request.n == 1 and not (request.logprobs or request.top_logprobs) else None
        chat = request.messages is not None and self.mode == "chat"
        raw: Any
        try:
            if chat:
                messages: Any = [{"role": m.role, "content": m.content} for m in request.messages or ()]
                raw = llama.create_chat_completion(
                    messages=messages,
                    logprobs=request.logprobs or request.top_logprobs > 0,
                    top_logprobs=max(1, request.top_logprobs) if request.logprobs or request.top_logprobs else None,
                    stream=sink is not None,
                    **common,
                )
            else:
                if request.messages is not None:
                    prompt = render_transcript(request.messages)
                    common["stop"].append(TRANSCRIPT_STOP)
                else:
                    prompt = request.prompt or ""
                raw = llama.create_completion(
                    prompt=prompt, logprobs=max(1, request.top_logprobs) if request.logprobs or request.top_logprobs
                    else None, stream=sink is not None, **common
                )
            if sink is not None:
                return gather_stream(llama, raw, sink, chat=chat)
            return raw  # type: ignore[no-any-return]
        except ValueError as error:
            if "context window" not in str(error):
                raise
            raise ContextOverflow(  # the prompt does not fit: say how to make it fit
                f"{error}; shorten the prompt or open the model with a larger n_ctx "
                f"(now {self.options.n_ctx})",
                provider=PROVIDER,
            ) from None

    @staticmethod
    def _choice(raw: dict[str, Any], top: int) -> Choice:
        text = (raw["message"]["content"] or "") if "message" in raw else raw["text"]
        return Choice(
            text=text,
            finish_reason=raw.get("finish_reason") or "stop",
            logprobs=_token_logprobs(raw.get("logprobs"), top),
        )
