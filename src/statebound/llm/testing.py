"""Test doubles that ship with the package: a scripted LLM and a function LLM.

Both implement the :class:`~statebound.llm.base.LLM` protocol with honest usage counts (tokens are
whitespace-separated words), so code under test sees the same shapes as with a real backend.
Given a ``scorer(context, text) -> log-probabilities`` (one per word of ``text``), either answers
scoring requests (``Request(score=...)``, what :class:`~statebound.flow.Pick` sends) with it, apart
from its replies: a flow that generates and picks is tested with one script for each.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace

from statebound.errors import UnsupportedFeature
from statebound.llm.base import Capabilities, Choice, Completion, Request, TokenLogprob, Usage
from statebound.llm.streaming import token_sink

Reply = str | Choice
Scorer = Callable[[str, str], Sequence[float]]


def count_tokens(text: str) -> int:
    """A deterministic stand-in for a tokenizer: one token per whitespace-separated word."""
    return len(text.split())


def request_text(request: Request) -> str:
    """The prompt of a request as one string (chat messages joined by newlines)."""
    if request.prompt is not None:
        return request.prompt
    return "\n".join(m.content for m in request.messages or ())


def apply_stop(text: str, stop: Iterable[str]) -> tuple[str, str]:
    """Cut ``text`` at the earliest stop sequence, as a real backend would."""
    cut = min((i for s in stop if (i := text.find(s)) >= 0), default=-1)
    return (text[:cut], "stop") if cut >= 0 else (text, "stop")


def refuse_unsupported(request: Request, capabilities: Capabilities) -> None:
    """Raise :class:`UnsupportedFeature` for a scoring (JSON-schema, tools) request to a double that
    does not score (take schemas, take tools), as a real backend would."""
    if request.score is not None and not capabilities.scoring:
        raise UnsupportedFeature("this test double does not score text (give it capabilities with scoring=True)")
    if request.tools and not capabilities.tools:
        raise UnsupportedFeature("this test double takes no tools (give it capabilities with tools=True)")
    if request.schema is not None and not capabilities.schema:
        raise UnsupportedFeature("this test double holds no reply to a JSON schema (give it capabilities with "
                                 "schema=True)")


def scored_completion(request: Request, scorer: Scorer, model: str) -> Completion:
    """Answer a scoring request with ``scorer``: one choice per text, one log-probability per word;
    the usage counts the prompt once and each text's words, as a scoring backend does."""
    context = request_text(request)
    choices = []
    for text in request.scored_texts:
        words, values = text.split(), list(scorer(context, text))
        if len(values) != len(words):
            raise ValueError(f"the scorer gave {len(values)} log-probabilities for the {len(words)} "
                             f"words of {text!r}; give one per word")
        choices.append(Choice(text=text, logprobs=tuple(TokenLogprob(w, v) for w, v in zip(words, values))))
    prompt = count_tokens(context) + sum(count_tokens(text) for text in request.scored_texts)
    return Completion(choices=tuple(choices), usage=Usage(prompt_tokens=prompt, calls=1), model=model)


def scoring_capabilities(capabilities: Capabilities, scorer: Scorer | None) -> Capabilities:
    """A double with a scorer scores text (after a prompt or chat messages alike), whatever else
    its capabilities say."""
    return capabilities if scorer is None else replace(capabilities, scoring=True, chat_scoring=True)


def _choice(reply: Reply, request: Request) -> Choice:
    if isinstance(reply, Choice):
        return reply
    text, reason = apply_stop(reply, request.stop)
    words = text.split()
    if len(words) > request.max_tokens:
        text, reason = " ".join(words[: request.max_tokens]), "length"
    logprobs = tuple(TokenLogprob(w, -1.0) for w in text.split()) if request.logprobs else None
    return Choice(text=text, finish_reason=reason, logprobs=logprobs)


def _completion(choices: list[Choice], request: Request, model: str) -> Completion:
    usage = Usage(
        prompt_tokens=count_tokens(request_text(request)),
        completion_tokens=sum(count_tokens(c.text) for c in choices),
        calls=1,
    )
    return Completion(choices=tuple(choices), usage=usage, model=model)


@dataclass
class ScriptedLLM:
    """Replays queued replies in order; raises when the script runs out.

    ``ScriptedLLM(["Thought: ...", "Action: submit"])``; every request is kept in ``requests``
    for assertions. Stop sequences and ``max_tokens`` (in words) are applied to each reply; a
    reply asked for while a token sink listens (:mod:`statebound.llm.streaming`) streams word by word.
    Scoring requests go to ``scorer`` (module docstring) and take no reply from the queue.
    """

    replies: Iterable[Reply] = ()
    model: str = "scripted"
    capabilities: Capabilities = Capabilities(completion=True, chat=True, logprobs=True)
    requests: list[Request] = field(default_factory=list)
    scorer: Scorer | None = None

    def __post_init__(self) -> None:
        self._queue: deque[Reply] = deque(self.replies)
        self.capabilities = scoring_capabilities(self.capabilities, self.scorer)

    def enqueue(self, *replies: Reply) -> None:
        self._queue.extend(replies)

    @property
    def remaining(self) -> int:
        return len(self._queue)

    async def complete(self, request: Request) -> Completion:
        refuse_unsupported(request, self.capabilities)
        self.requests.append(request)
        if request.score is not None and self.scorer is not None:
            return scored_completion(request, self.scorer, self.model)
        if len(self._queue) < request.n:
            raise LookupError(
                f"ScriptedLLM ran out of replies after {len(self.requests) - 1} requests; "
                "enqueue more or check the flow"
            )
        choices = [_choice(self._queue.popleft(), request) for _ in range(request.n)]
        if (sink := token_sink()) is not None and request.n == 1:  # streamed word by word, as a server would
            for piece in re.findall(r"\s*\S+", choices[0].text):
                sink(piece)
        return _completion(choices, request, self.model)


Responder = Callable[[Request], Reply | list[Reply] | Awaitable[Reply | list[Reply]]]


@dataclass
class FunctionLLM:
    """Computes each reply with ``respond(request)``; may return one reply or ``request.n`` replies.
    Scoring requests go to ``scorer`` when it is given (module docstring), else to ``respond``."""

    respond: Responder
    model: str = "function"
    capabilities: Capabilities = Capabilities(completion=True, chat=True, logprobs=True)
    requests: list[Request] = field(default_factory=list)
    scorer: Scorer | None = None

    def __post_init__(self) -> None:
        self.capabilities = scoring_capabilities(self.capabilities, self.scorer)

    async def complete(self, request: Request) -> Completion:
        refuse_unsupported(request, self.capabilities)
        self.requests.append(request)
        if request.score is not None and self.scorer is not None:
            return scored_completion(request, self.scorer, self.model)
        result = self.respond(request)
        if isinstance(result, Awaitable):
            result = await result
        replies = result if isinstance(result, list) else [result] * request.n
        return _completion([_choice(r, request) for r in replies], request, self.model)
