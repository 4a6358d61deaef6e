"""The one small contract every LLM backend implements.

A backend takes a :class:`Request` (a plain prompt or a list of chat messages, plus decoding
options) and returns a :class:`Completion` (one :class:`Choice` per sample, token usage, and the
model name). Backends are async; :func:`complete_sync` is the thin synchronous wrapper.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

import msgspec

from statebound.llm.reply_size import bound_reply
from statebound.quick_init import quick_init

Role = Literal["system", "user", "assistant", "tool"]


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """A function the model may call: its ``name``, what it does, and the JSON schema of its
    arguments (an object schema)."""

    name: str
    description: str
    parameters: Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class ToolCall:
    """A call the model asked for: ``arguments`` is the JSON text it wrote (not yet checked)."""

    id: str
    name: str
    arguments: str


class Message(msgspec.Struct, frozen=True):
    """One chat message. An assistant message may carry the ``tool_calls`` the model asked for; a
    ``tool`` message answers one of them (``tool_call_id``). Backends without a tool API of their
    own read them as text (:func:`flatten_tool_messages`). Frozen, as requests and history entries
    are (a copy with changes: ``msgspec.structs.replace``)."""

    role: Role
    content: str
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None


@dataclass(frozen=True, slots=True)
class TokenLogprob:
    """A generated token and its log-probability under the model; ``top`` holds the most likely
    tokens at that position with theirs (most likely first) when the request asked for
    ``top_logprobs``."""

    token: str
    logprob: float
    top: tuple[tuple[str, float], ...] = ()


@quick_init
@dataclass(frozen=True, slots=True)
class Usage:
    """Token and call counts; adds up with ``+``. ``cached_tokens``: how many of the
    ``prompt_tokens`` were not evaluated again, reused from what the model had already read."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    calls: int = 0
    cached_tokens: int = 0

    def __repr__(self) -> str:  # cached_tokens only when some were reused
        cached = f", cached_tokens={self.cached_tokens}" if self.cached_tokens else ""
        return (f"Usage(prompt_tokens={self.prompt_tokens}, completion_tokens={self.completion_tokens}, "
                f"calls={self.calls}{cached})")

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.prompt_tokens + other.prompt_tokens,
            self.completion_tokens + other.completion_tokens,
            self.calls + other.calls,
            self.cached_tokens + other.cached_tokens,
        )


@dataclass(frozen=True, slots=True)
class Choice:
    """One sampled continuation; ``tool_calls`` the calls it asked for (requests with tools).

    A ``text`` over :data:`~statebound.llm.reply_size.MAX_REPLY_BYTES` is cut there, with a note:
    every backend's reply is bounded before anything keeps it."""

    text: str
    finish_reason: str = "stop"  # "stop" (stop sequence or end of text) or "length" (max_tokens)
    logprobs: tuple[TokenLogprob, ...] | None = None
    tool_calls: tuple[ToolCall, ...] = ()

    def __post_init__(self) -> None:
        if isinstance(self.text, str):  # a backend's slip is check_completion's to name
            object.__setattr__(self, "text", bound_reply(self.text))


@dataclass(frozen=True, slots=True)
class Completion:
    """What a backend returns for one request."""

    choices: tuple[Choice, ...]
    usage: Usage
    model: str

    @property
    def text(self) -> str:
        return self.choices[0].text

    @property
    def finish_reason(self) -> str:
        return self.choices[0].finish_reason


class Request(msgspec.Struct, frozen=True, kw_only=True):
    """A completion request: exactly one of ``prompt`` (plain completion) or ``messages`` (chat).

    ``grammar`` is a GBNF grammar; only backends that can constrain decoding accept it (others
    raise :class:`~statebound.errors.UnsupportedFeature`). ``tools`` offers functions to call
    (``tool_choice``: ``"auto"``, ``"required"`` or one tool's name); the calls come back in
    ``Choice.tool_calls``. ``score`` asks for nothing to be generated: the reply is ``score`` itself with the log-probability of each of its tokens as a
    continuation of the prompt (backends with ``capabilities.scoring``). A tuple of texts is
    scored each on its own as a continuation of the same prompt, one choice per text, in order;
    the usage counts the prompt once plus every text's tokens (what a backend that reuses the
    prompt's evaluation computes). Chat ``messages`` are continued as the assistant's reply.
    """

    prompt: str | None = None
    messages: tuple[Message, ...] | None = None
    stop: tuple[str, ...] = ()
    max_tokens: int = 256
    temperature: float = 0.0
    n: int = 1
    logprobs: bool = False
    grammar: str | None = None
    seed: int | None = None
    score: str | tuple[str, ...] | None = None
    top_logprobs: int = 0
    schema: Mapping[str, Any] | None = None
    tools: tuple[ToolSpec, ...] = ()
    tool_choice: str = "auto"  # "auto" (a call or text), "required" (a call), or a tool's name

    def __post_init__(self) -> None:
        if (self.prompt is None) == (self.messages is None):
            raise ValueError("a Request needs exactly one of prompt= or messages=")
        if self.score is not None and (self.n != 1 or self.grammar is not None):
            raise ValueError("a score= request continues the prompt once, without a grammar")
        if isinstance(self.score, tuple) and (not self.score or not all(isinstance(t, str) for t in self.score)):
            raise ValueError("score= takes a text or a non-empty tuple of texts")
        if self.n < 1:
            raise ValueError("n must be at least 1")
        if self.max_tokens < 1:
            raise ValueError("max_tokens must be at least 1")
        if self.top_logprobs < 0:
            raise ValueError("top_logprobs must be 0 or more")
        if self.schema is not None and self.grammar is not None:
            raise ValueError("a Request takes a grammar= or a schema=, not both")
        if self.tools and (self.schema is not None or self.grammar is not None or self.score is not None):
            raise ValueError("a Request with tools= takes no grammar=, schema= or score=")
        if self.tools and self.tool_choice not in ("auto", "required", *(t.name for t in self.tools)):
            raise ValueError(f"tool_choice is 'auto', 'required' or a tool's name, not {self.tool_choice!r}")

    @property
    def scored_texts(self) -> tuple[str, ...]:
        """The texts a ``score=`` request asks about, as a tuple (empty for other requests)."""
        if self.score is None:
            return ()
        return (self.score,) if isinstance(self.score, str) else self.score


@dataclass(frozen=True, slots=True)
class Capabilities:
    """What a backend can do beyond plain chat."""

    completion: bool = False  # accepts Request.prompt (can continue arbitrary text)
    chat: bool = True  # accepts Request.messages
    logprobs: bool = False
    grammar: bool = False
    scoring: bool = False  # takes Request(prompt=..., score=...): log-probabilities of a given text
    chat_scoring: bool = False  # takes Request(messages=..., score=...) too
    top_logprobs: int = 0  # the most Request.top_logprobs it reports per generated token
    schema: bool = False  # holds replies to a JSON schema (Request.schema)
    tools: bool = False  # takes Request.tools and returns the calls in Choice.tool_calls
    extras: frozenset[str] = field(default_factory=frozenset)


@runtime_checkable
class LLM(Protocol):
    """An LLM backend. ``model`` names the model for usage, cost and reports."""

    @property
    def model(self) -> str: ...

    @property
    def capabilities(self) -> Capabilities: ...

    async def complete(self, request: Request) -> Completion: ...


class LLMWrapper:
    """Base of an LLM that adds behaviour around another (metering, budgets, caching): ``model``
    and ``capabilities`` are those of :meth:`wrapped`."""

    def wrapped(self) -> LLM:
        raise NotImplementedError

    @property
    def model(self) -> str:
        return self.wrapped().model

    @property
    def capabilities(self) -> Capabilities:
        return self.wrapped().capabilities


def chat(*messages: tuple[Role, str] | Message, **options: object) -> Request:
    """Build a chat request: ``chat(("system", "..."), ("user", "..."), max_tokens=64)``."""
    built = tuple(m if isinstance(m, Message) else Message(m[0], m[1]) for m in messages)
    return Request(messages=built, **options)  # type: ignore[arg-type]


def complete_sync(llm: LLM, request: Request) -> Completion:
    """Run ``llm.complete`` from synchronous code, inside or outside a running event loop."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(llm.complete(request))
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, llm.complete(request)).result()


def flatten_tool_messages(messages: Sequence[Message]) -> tuple[Message, ...]:
    """``messages`` as a backend without a tool API reads them: a tool result as the user's
    message, an assistant's calls as its text (which the flow writes when the reply has none);
    consecutive messages of one role merged, as :func:`as_messages` does."""
    if not any(m.tool_calls or m.role == "tool" for m in messages):
        return tuple(messages)
    return as_messages([Message("user" if m.role == "tool" else m.role, m.content) for m in messages])


def as_messages(history: Sequence[Message]) -> tuple[Message, ...]:
    """Merge consecutive messages of the same role (some chat templates require alternation)."""
    merged: list[Message] = []
    for message in history:
        if merged and merged[-1].role == message.role and not (message.tool_calls or message.tool_call_id
                                                               or merged[-1].tool_calls):
            merged[-1] = Message(message.role, merged[-1].content + "\n\n" + message.content)
        else:
            merged.append(message)
    return tuple(merged)
