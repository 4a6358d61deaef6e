"""How a model chooses among named options, on whatever backend it runs: the choosers.

Every decision among a known set of texts (a :class:`~statebound.flow.choice.Pick`'s candidates)
is made by one of these kinds, recorded with the choice:

- ``"score"``: the log-probability of each candidate as the continuation of the prompt
  (``capabilities.scoring``; chat-message prompts also need ``capabilities.chat_scoring``);
- ``"label"``: the candidates listed as lettered options (A, B, C...), one token generated, the
  options' log-probabilities read from the token's most likely alternatives
  (``capabilities.top_logprobs``: OpenAI-compatible servers, llama.cpp's among them, vLLM,
  Ollama, OpenAI; the embedded model). More options than the backend reports alternatives are
  chosen in rounds: the winners of groups meet in the next round;
- ``"grammar"``: generation held to the candidates (a GBNF choice grammar where the backend takes
  one, else, for chat prompts, a JSON-schema enum where it takes ``response_format``: a server's
  ``/completions`` takes none, llama-cpp-python's ignores it);
- ``"random"``: a seeded draw, no model: the control.

``"auto"`` takes the first the backend can do in the order score, label, grammar, and never
falls back to ``random`` on its own. :func:`resolve` turns a method into the kind that runs (or
says, in one line, which capability is missing and which method would work).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Literal, get_args

from statebound.errors import DefinitionError, UnsupportedFeature
from statebound.llm.base import Capabilities, Message, TokenLogprob

__all__ = [
    "ChoiceMethod",
    "ChooserKind",
    "LABELS",
    "METHODS",
    "check_method",
    "label_group_size",
    "label_messages",
    "label_prompt",
    "label_scores",
    "missing_capability",
    "resolve",
    "usable",
]

ChooserKind = Literal["score", "label", "grammar", "random"]
ChoiceMethod = Literal["auto", "score", "label", "grammar", "random"]
METHODS: tuple[str, ...] = get_args(ChoiceMethod)
AUTO_ORDER: tuple[ChooserKind, ...] = ("score", "label", "grammar")
LABELS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
LABEL_ASK = "Reply with the letter of the best option only."


def check_method(method: str, *, where: str = "Pick") -> None:
    """Refuse a method name that is none of :data:`METHODS`."""
    if method not in METHODS:
        raise DefinitionError(f"{where} method {method!r} is unknown: use {', '.join(map(repr, METHODS))}")


def missing_capability(kind: ChooserKind, capabilities: Capabilities, *, chat: bool) -> str | None:
    """What the backend lacks to run ``kind`` (None: it can run it). ``chat``: the prompt is chat
    messages."""
    if kind == "score":
        if not capabilities.scoring:
            return "log-probabilities of given text (scoring)"
        if chat and not capabilities.chat_scoring:
            return "log-probabilities of given text after chat messages (chat scoring)"
    elif kind == "label":
        if capabilities.top_logprobs < 2:
            return "the most likely tokens' log-probabilities (top_logprobs)"
        if not (capabilities.chat if chat else capabilities.completion):
            return "chat replies" if chat else "plain-text completion"
    elif kind == "grammar":
        if chat and not (capabilities.grammar or capabilities.schema):
            return "generation held to a grammar or a JSON schema"
        if not chat and not capabilities.grammar:  # /completions takes no response_format (llama-cpp-python ignores it)
            return "generation held to a grammar (a JSON schema holds chat replies only)"
    return None


def usable(capabilities: Capabilities, *, chat: bool) -> tuple[ChooserKind, ...]:
    """The model-backed kinds the backend can run, in ``auto``'s order."""
    return tuple(kind for kind in AUTO_ORDER if missing_capability(kind, capabilities, chat=chat) is None)


def resolve(method: ChoiceMethod, capabilities: Capabilities, *, chat: bool, model: str,
            spelled: str = "method=") -> ChooserKind:
    """The kind ``method`` runs as on this backend; :class:`UnsupportedFeature` when it cannot,
    naming what is missing and which method would work (written as ``spelled`` + its name)."""
    if method == "random":
        return "random"
    if method == "auto":
        kinds = usable(capabilities, chat=chat)
        if kinds:
            return kinds[0]
        raise UnsupportedFeature(
            f"{model} can run no chooser (score, label or grammar): it returns no log-probabilities "
            f"of text or of its most likely tokens and takes no grammar or JSON schema; use {spelled}random "
            "(the control) or another model (docs/models.md, capability table)")
    missing = missing_capability(method, capabilities, chat=chat)
    if missing is None:
        return method
    others = [kind for kind in usable(capabilities, chat=chat) if kind != method]
    hint = f"{spelled}{others[0]} works with it" if others else f"no chooser works with it but {spelled}random"
    raise UnsupportedFeature(f"{model} cannot run {spelled}{method}: it lacks {missing}; {hint}")


# -- label: lettered options ------------------------------------------------------------------
def label_group_size(capabilities: Capabilities) -> int:
    """How many lettered options one round shows: as many as the backend reports alternatives
    for, at most 26."""
    return max(2, min(capabilities.top_logprobs, len(LABELS)))


def _options(candidates: Sequence[str]) -> str:
    return "\n".join(f"{LABELS[i]}. {candidate}" for i, candidate in enumerate(candidates))


def label_prompt(prompt: str, candidates: Sequence[str]) -> str:
    """A text prompt turned into a lettered question: what follows it is one of the options."""
    return f"{prompt.rstrip()}\n\nOptions:\n{_options(candidates)}\n{LABEL_ASK}\nLetter:"


def label_messages(messages: Sequence[Message], candidates: Sequence[str]) -> tuple[Message, ...]:
    """Chat messages turned into a lettered question. The options are added to the last user
    message; a trailing assistant message (a reply the options would continue) is quoted there."""
    messages = list(messages)
    started = messages.pop().content if messages and messages[-1].role == "assistant" else ""
    continues = f"\n\nThe reply so far: {started}\nWhich option continues it?" if started else ""
    listing = f"{continues}\n\nOptions:\n{_options(candidates)}\n{LABEL_ASK}"
    if messages and messages[-1].role == "user":
        last = messages.pop()
        return (*messages, Message("user", last.content.rstrip() + listing))
    return (*messages, Message("user", listing.lstrip()))


def label_scores(token: TokenLogprob | None, count: int, *, floor: bool = False) -> tuple[float, ...]:
    """Each of the first ``count`` letters' log-probability at the generated position: the sum
    over the alternatives that spell it (``"A"``, ``" A"``: a lowercase ``a`` is a word, not an
    option). A letter that is not among them gets ``-inf``, or with ``floor`` the least likely
    reported alternative's value (a bound from above: what a calibration baseline subtracts)."""
    scores = [-math.inf] * count
    if token is None:
        return tuple(scores)
    alternatives = token.top or ((token.token, token.logprob),)
    for text, logprob in alternatives:
        letter = text.strip()
        if len(letter) == 1 and letter in LABELS[:count] and math.isfinite(logprob):
            index = LABELS.index(letter)
            scores[index] = _log_add(scores[index], logprob)
    if floor:
        lowest = min((lp for _, lp in alternatives if math.isfinite(lp)), default=0.0)
        scores = [lowest if s == -math.inf else s for s in scores]
    return tuple(scores)


def _log_add(a: float, b: float) -> float:
    if a == -math.inf:
        return b
    high, low = max(a, b), min(a, b)
    return high + math.log1p(math.exp(low - high))
