"""The log-probabilities of given text after a prompt, read from a model server (``score`` requests).

The prompt arrives as text (a text prompt as is, chat messages rendered by the model's chat
template, :mod:`statebound.llm.chat_template`), and the texts' tokens are the server's own
(its tokenize endpoint). Three transports (:mod:`statebound.llm.server_profiles`):

- :class:`NextTokenScorer` (llama.cpp's servers): each token of a text is forced as the next token
  after the prompt and the text's tokens before it, by a ``logit_bias``; the server reports the
  forced token's log-probability from the raw logits. llama.cpp evaluates a batch of one token with
  other kernels than a batch of several, and the embedded model reads every position in a batch of
  several: the texts are read position by position in turn (each prompt then leaves the server's
  cells where the previous one differs), and where the server would still read one token alone a
  *spoiler* prompt goes first (the prompt cut two tokens or more before its end, then a NUL), so
  it reads the last tokens again together, in cells in order: the numbers are then the embedded
  model's (``tests/llm/test_server_scoring.py`` compares them).
  This holds while one client at a time scores on the server; other requests in between move only
  floating-point sums. llama-cpp-python's ``echo`` would give the same numbers for prompts that
  start with the BOS token (and misaligned ones for others, in 0.3.16), at about 40 ms of Python
  per prompt token on the server (measured): seconds per candidate, against 0.2 s per token here.
- :class:`EchoScorer` (``/completions`` with ``echo`` and ``logprobs``): the prompt's own tokens,
  one request per text, after a one-request self-check that the echo is aligned (the generated
  token comes after every prompt token, with the top log-probability of its position).
- :class:`PromptLogprobsScorer` (vLLM): the prompt and each text as token ids, every text of a
  choice in one request, ``prompt_logprobs`` read back.

A server whose replies fail a transport's self-check is refused for ``score`` with a message that
names it and the check (:class:`~statebound.errors.UnsupportedFeature`).
"""

from __future__ import annotations

import asyncio
import math
import weakref
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from statebound.errors import UnsupportedFeature
from statebound.llm.base import Message, TokenLogprob, Usage
from statebound.llm.llama_scoring import common_length
from statebound.llm.server_profiles import Tokenizer

__all__ = ["EchoScorer", "NextTokenScorer", "Post", "PromptLogprobsScorer", "Scorer", "ServerTokens", "forced_logprob"]

Post = Callable[[str, dict[str, Any]], Awaitable[dict[str, Any]]]  # URL or /v1 path, JSON body -> JSON reply
Scored = tuple[list[tuple[TokenLogprob, ...]], Usage]
JUNK = "\x00"  # never in a prompt: a spoiler's last token is never one a real prompt keeps
FORCE = 100.0  # a logit_bias that makes the forced token the greedy choice
SELF_CHECK_PROMPT = "The capital of France is"


class Scorer(Protocol):
    async def score(self, prompt: str | tuple[Message, ...], texts: tuple[str, ...]) -> Scored: ...


@dataclass
class ServerTokens:
    """A server's tokenize and detokenize endpoints (``kind``: whose they are)."""

    post: Post
    root: str
    kind: Tokenizer
    model: str

    async def tokenize(self, text: str, *, special: bool = True) -> list[int]:
        """``text``'s tokens as the server reads a prompt (a BOS first when the model adds one)."""
        if self.kind == "llama-cpp-python":
            reply = await self.post(f"{self.root}/extras/tokenize", {"input": text})
        elif self.kind == "llama-server":
            reply = await self.post(f"{self.root}/tokenize", {"content": text, "add_special": special,
                                                               "parse_special": True})
        else:
            reply = await self.post(f"{self.root}/tokenize", {"model": self.model, "prompt": text,
                                                               "add_special_tokens": special})
        return _ids(reply.get("tokens"), f"{self.kind} tokenize")

    async def tokenize_chat(self, messages: tuple[Message, ...]) -> list[int]:
        """The tokens of ``messages`` rendered by the server's own chat template, up to where the
        assistant's reply begins (a trailing assistant message continued): vLLM's tokenize."""
        started = bool(messages) and messages[-1].role == "assistant"
        reply = await self.post(f"{self.root}/tokenize", {
            "model": self.model, "messages": [{"role": m.role, "content": m.content} for m in messages],
            "add_generation_prompt": not started, "continue_final_message": started})
        return _ids(reply.get("tokens"), "vLLM tokenize (chat)")

    async def detokenize(self, tokens: Sequence[int]) -> str:
        if not tokens:
            return ""
        path = "/extras/detokenize" if self.kind == "llama-cpp-python" else "/detokenize"
        body: dict[str, Any] = {"tokens": list(tokens)}
        if self.kind == "vllm":
            body["model"] = self.model
        reply = await self.post(f"{self.root}{path}", body)
        text = reply.get("text", reply.get("prompt", reply.get("content")))
        if not isinstance(text, str):
            raise UnsupportedFeature(f"{self.kind} detokenize returned no text")
        return text


def _ids(value: object, where: str) -> list[int]:
    if not isinstance(value, list) or not all(isinstance(t, int) for t in value):
        raise UnsupportedFeature(f"{where} returned no list of token ids")
    return value


def forced_logprob(reply: dict[str, Any]) -> tuple[str, float, float]:
    """The generated token's text and log-probability, and the best alternative's, from a
    one-token completion's ``logprobs`` (OpenAI's completion shape, or llama-server's ``content``)."""
    choice = (reply.get("choices") or [{}])[0]
    raw = choice.get("logprobs") if isinstance(choice, dict) else None
    if isinstance(raw, dict) and isinstance(raw.get("content"), list) and raw["content"]:
        first = raw["content"][0]
        top = [a.get("logprob") for a in first.get("top_logprobs") or ()]
        token, value = first.get("token"), first.get("logprob")
    elif isinstance(raw, dict) and raw.get("token_logprobs"):
        token, value = (raw.get("tokens") or [None])[0], raw["token_logprobs"][0]
        top = list(((raw.get("top_logprobs") or [None])[0] or {}).values())
    else:
        raise UnsupportedFeature("the server returned no log-probability for the generated token")
    best = max((t for t in top if isinstance(t, int | float)), default=value)
    if not isinstance(token, str) or not isinstance(value, int | float):
        raise UnsupportedFeature("the server's log-probability of the generated token is unreadable")
    return token, float(value), float(best if isinstance(best, int | float) else value)


class _LoopLocks:
    """One asyncio lock per event loop: a scorer's requests must not interleave with each other."""

    def __init__(self) -> None:
        self._locks: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Lock] = weakref.WeakKeyDictionary()

    def get(self) -> asyncio.Lock:
        loop = asyncio.get_running_loop()
        if loop not in self._locks:
            self._locks[loop] = asyncio.Lock()
        return self._locks[loop]


@dataclass(frozen=True, slots=True)
class _Step:
    """One forced token of a text: the tokens before it, that prompt as sent, the token."""

    before: list[int]
    asked: str | list[int]
    token: int
    text: str


@dataclass
class NextTokenScorer:
    """Scoring by forced next tokens on llama.cpp's servers (the module docstring). ``render``
    turns chat messages into the prompt text (the chat template); ``token_prompts``: the server
    takes a prompt as token ids (llama-server), else as text (llama-cpp-python).

    The texts' tokens are read position by position, every text in turn (after one text's token,
    another's prompt leaves the server's cells where the two differ, so its last tokens are read
    together again); a spoiler is sent only where the server would otherwise read a single token
    (``_state`` follows what it holds: the tokens of the last prompt sent)."""

    tokens: ServerTokens
    render: Callable[[tuple[Message, ...]], str]
    where: str
    token_prompts: bool = False
    _spoilers: OrderedDict[str, tuple[str | list[int], list[int]]] = field(default_factory=OrderedDict)
    _locks: _LoopLocks = field(default_factory=_LoopLocks)
    _checked: bool = False
    _state: list[int] | None = None

    async def score(self, prompt: str | tuple[Message, ...], texts: tuple[str, ...]) -> Scored:
        context = prompt if isinstance(prompt, str) else self.render(prompt)
        async with self._locks.get():
            if not self._checked:
                await self._self_check()
            head = await self.tokens.tokenize(context)
            if not head:
                raise UnsupportedFeature("scoring needs a prompt of at least one token")
            spoiler = await self._spoiler(context, head)
            plans = [await self._plan(context, head, text) for text in texts]
            found: list[list[TokenLogprob]] = [[] for _ in plans]
            try:
                for depth in range(max((len(plan) for plan in plans), default=0)):
                    for plan, values in zip(plans, found):
                        if depth < len(plan):
                            values.append(await self._read(plan[depth], spoiler))
            except BaseException:
                self._state = None  # what the server holds is unknown now
                raise
        usage = Usage(prompt_tokens=len(head) + sum(len(values) for values in found), calls=1)
        return [tuple(values) for values in found], usage

    async def _plan(self, context: str, head: list[int], text: str) -> list[_Step]:
        """Each token of ``text`` as the server reads ``context + text`` (a token across their
        boundary counts as the text's), with the prompt before it."""
        joint = await self.tokens.tokenize(context + text)
        common = common_length(joint, head, len(head))
        base = context
        if common < len(head):  # the context's last token merges with the text's first
            tail = await self.tokens.detokenize(head[common:])
            if not context.endswith(tail):
                raise UnsupportedFeature(f"{self.where}: the text {text[:40]!r} joins the prompt's last "
                                         "token in a way its tokens cannot be read back from")
            base = context[: len(context) - len(tail)]
        steps = []
        for position in range(common, len(joint)):
            asked: str | list[int] = joint[:position]
            if not self.token_prompts:
                asked = base + (await self.tokens.detokenize(joint[common:position]) if position > common else "")
            steps.append(_Step(joint[:position], asked, joint[position], text))
        return steps

    async def _read(self, step: _Step, spoiler: tuple[str | list[int], list[int]]) -> TokenLogprob:
        """The forced token's log-probability; the spoiler first when the server would read only
        the prompt's last token (it keeps what the last prompt shares with this one, all but the
        last token at most)."""
        kept = 0 if self._state is None else common_length(self._state, step.before, len(step.before) - 1)
        if self._state is None or len(step.before) - kept < 2:
            await self._complete(spoiler[0], max_tokens=1)
            self._state = spoiler[1]
        reply = await self._complete(step.asked, max_tokens=1, logprobs=1, logit_bias={str(step.token): FORCE})
        self._state = step.before
        piece, value, _ = forced_logprob(reply)
        counted = (reply.get("usage") or {}).get("prompt_tokens")
        if isinstance(counted, int) and counted != len(step.before):
            raise UnsupportedFeature(
                f"{self.where}: a prompt before a token of {step.text[:40]!r} was read as {counted} tokens, not "
                f"{len(step.before)}: the text splits a character, or the server tokenizes it otherwise than "
                "its tokenize endpoint")
        return TokenLogprob(piece, value)

    async def _complete(self, prompt: str | list[int], **options: Any) -> dict[str, Any]:
        return await self.tokens.post("/completions", {"model": self.tokens.model, "prompt": prompt,
                                                       "temperature": 0.0, **options})

    async def _spoiler(self, context: str, head: list[int]) -> tuple[str | list[int], list[int]]:
        """A prompt (and its tokens) that leaves ``head`` two tokens or more before its end, at a
        token no real prompt has (NUL): the next real request then reads its last tokens again
        together."""
        if context in self._spoilers:
            self._spoilers.move_to_end(context)
            return self._spoilers[context]
        junk = await self.tokens.tokenize(JUNK, special=False)
        if self.token_prompts:
            spoiled = [*head[: max(len(head) - 2, 0)], *junk]
            found: tuple[str | list[int], list[int]] = (spoiled, spoiled)
        else:
            cut = 1
            while True:
                text = context[: max(len(context) - cut, 0)] + JUNK
                spoiled = await self.tokens.tokenize(text)
                if cut >= len(context) or common_length(spoiled, head, len(head)) <= len(head) - 2:
                    break
                cut *= 2
            found = (text, spoiled)
        self._spoilers[context] = found
        if len(self._spoilers) > 16:
            self._spoilers.popitem(last=False)
        return found

    async def _self_check(self) -> None:
        """One request: a token forced after a short prompt comes back with the model's own
        log-probability (below the best alternative's), not one the bias raised."""
        forced = (await self.tokens.tokenize(" and", special=False))[-1]
        asked: str | list[int] = SELF_CHECK_PROMPT
        if self.token_prompts:
            asked = await self.tokens.tokenize(SELF_CHECK_PROMPT)
        reply = await self._complete(asked, max_tokens=1, logprobs=2, logit_bias={str(forced): FORCE})
        try:
            piece, value, best = forced_logprob(reply)
        except UnsupportedFeature as error:
            raise UnsupportedFeature(f"{self.where} cannot score text: the self-check ({error})") from None
        if piece.strip() != "and" or not value < best or not math.isfinite(value):
            raise UnsupportedFeature(
                f"{self.where} cannot score text: the self-check forced ' and' after {SELF_CHECK_PROMPT!r} and "
                f"got {piece!r} with log-probability {value:.3f} (best alternative {best:.3f}); the server must "
                "report the forced token's log-probability from the model's logits")
        self._checked = True


@dataclass
class EchoScorer:
    """Scoring by the echoed prompt's log-probabilities (``/completions`` with ``echo`` and
    ``logprobs``), one request per text, after a self-check of the alignment."""

    post: Post
    model: str
    render: Callable[[tuple[Message, ...]], str]
    where: str
    _checked: bool = False

    async def score(self, prompt: str | tuple[Message, ...], texts: tuple[str, ...]) -> Scored:
        context = prompt if isinstance(prompt, str) else self.render(prompt)
        if not self._checked:
            await self._self_check()
        found: list[tuple[TokenLogprob, ...]] = []
        counted = 0
        for text in texts:
            reply = await self._echo(context + text)
            values = echoed_span(reply, start=len(context), end=len(context) + len(text))
            if values is None:
                raise UnsupportedFeature(f"{self.where} returned no log-probabilities for the prompt's own tokens "
                                         "(echo with logprobs)")
            found.append(values)
            if not counted:  # the prompt once (as the server counted it with the first text), then each text
                counted = (reply.get("usage") or {}).get("prompt_tokens") or 0
            else:
                counted += len(values)
        return found, Usage(prompt_tokens=counted if isinstance(counted, int) else 0, calls=1)

    async def _echo(self, prompt: str) -> dict[str, Any]:
        return await self.post("/completions", {"model": self.model, "prompt": prompt, "echo": True, "logprobs": 1,
                                                "max_tokens": 1, "temperature": 0.0})

    async def _self_check(self) -> None:
        """One request: the echo of a short prompt that does not start with the BOS token holds
        every prompt token and then the generated one, greedy, so with the top log-probability
        of its position (llama-cpp-python 0.3.16 shifts the rows of such prompts by one and
        drops the generated token)."""
        reply = await self._echo(SELF_CHECK_PROMPT)
        choice = (reply.get("choices") or [{}])[0]
        raw = choice.get("logprobs") or {}
        tokens, values, tops = raw.get("tokens") or [], raw.get("token_logprobs") or [], raw.get("top_logprobs") or []
        generated = str(choice.get("text", ""))[len(SELF_CHECK_PROMPT):]
        aligned = (bool(generated) and len(tokens) == len(values) == len(tops) and "".join(tokens).endswith(generated)
                   and isinstance(values[-1], int | float) and isinstance(tops[-1], dict)
                   and math.isclose(values[-1], max(tops[-1].values()), abs_tol=1e-6))
        if not aligned:
            raise UnsupportedFeature(
                f"{self.where} cannot score text by echo: the self-check echoed {SELF_CHECK_PROMPT!r} without the "
                "generated token after the prompt's with its top log-probability, so the echoed numbers are "
                "not aligned with the tokens (llama-cpp-python 0.3.16 shifts them when a prompt does not start "
                "with the BOS token); use the server's profile (--model-option profile=llama-cpp-python scores by "
                "forced next tokens)")
        self._checked = True


def echoed_span(reply: dict[str, Any], *, start: int, end: int) -> tuple[TokenLogprob, ...] | None:
    """The echoed tokens that overlap characters ``start:end`` of the prompt (a token across the
    boundary counts as the text's); None unless the echo reaches ``end`` with a value for each."""
    choice = (reply.get("choices") or [None])[0]
    raw = choice.get("logprobs") if isinstance(choice, dict) else None
    if not isinstance(raw, dict):
        return None
    tokens, values = raw.get("tokens"), raw.get("token_logprobs")
    if not isinstance(tokens, list) or not isinstance(values, list) or len(tokens) != len(values):
        return None
    texts = [str(token) for token in tokens]
    offsets = raw.get("text_offset")
    if not isinstance(offsets, list) or len(offsets) != len(texts) or not all(isinstance(o, int) for o in offsets):
        offsets = [sum(len(t) for t in texts[:i]) for i in range(len(texts))]
    span = [(t, v) for t, o, v in zip(texts, offsets, values) if o < end and o + len(t) > start]
    reach = max((o + len(t) for t, o in zip(texts, offsets)), default=0)
    if not span or reach < end or any(not isinstance(v, int | float) for _, v in span):
        return None
    return tuple(TokenLogprob(t, float(v)) for t, v in span)


@dataclass
class PromptLogprobsScorer:
    """vLLM: the prompt's tokens (a chat rendered by the server's own template, its tokenize
    endpoint) and each text's tokens, sent as token ids in one request, ``prompt_logprobs`` read."""

    tokens: ServerTokens
    where: str

    async def score(self, prompt: str | tuple[Message, ...], texts: tuple[str, ...]) -> Scored:
        head = await (self.tokens.tokenize(prompt) if isinstance(prompt, str) else self.tokens.tokenize_chat(prompt))
        bodies = [await self.tokens.tokenize(text, special=False) for text in texts]
        reply = await self.tokens.post("/completions", {
            "model": self.tokens.model, "prompt": [head + body for body in bodies], "max_tokens": 1,
            "temperature": 0.0, "prompt_logprobs": 0})
        choices = sorted(reply.get("choices") or [], key=lambda c: c.get("index", 0) if isinstance(c, dict) else 0)
        if len(choices) != len(texts):
            raise UnsupportedFeature(f"{self.where} answered {len(choices)} choices for {len(texts)} prompts")
        found = [_prompt_tail(choice.get("prompt_logprobs") if isinstance(choice, dict) else None, body, self.where)
                 for choice, body in zip(choices, bodies)]
        return found, Usage(prompt_tokens=len(head) + sum(map(len, bodies)), calls=1)


def _prompt_tail(raw: object, body: list[int], where: str) -> tuple[TokenLogprob, ...]:
    """The log-probabilities of the last ``len(body)`` prompt tokens from vLLM's ``prompt_logprobs``
    (per position null or ``{token id: {logprob, rank, decoded_token}}``)."""
    if not isinstance(raw, list) or len(raw) < len(body):
        raise UnsupportedFeature(f"{where} returned no prompt_logprobs for the scored tokens")
    found = []
    for token, entry in zip(body, raw[len(raw) - len(body):]):
        value = entry.get(str(token)) if isinstance(entry, dict) else None
        if not isinstance(value, dict) or not isinstance(value.get("logprob"), int | float):
            raise UnsupportedFeature(f"{where} returned prompt_logprobs without token {token}'s")
        found.append(TokenLogprob(str(value.get("decoded_token", "")), float(value["logprob"])))
    return tuple(found)
