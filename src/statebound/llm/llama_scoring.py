"""Log-probabilities of a given text under a llama.cpp model, in one batched evaluation.

Scoring ``text`` as a continuation of ``context`` evaluates ``context + text`` once and reads each
text token's log-probability from the logits at the position before it; llama.cpp is asked for
logits at those positions only. Forcing the text through the sampler with a grammar gives the same
numbers one decoding step per token, tens of times slower, and lets the sampler split the text into
whatever tokens it prefers; here ``context`` and ``text`` are tokenized separately, so the text's
tokens are those it has on its own. The evaluation runs on the same model instance as generation,
so a prompt just used for generating (PASS scores continuations of its own prompt) is a cached
prefix and costs nothing again.
"""

from __future__ import annotations

import ctypes
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from statebound.llm.base import TokenLogprob

if TYPE_CHECKING:
    from llama_cpp import Llama

__all__ = ["check_fits", "common_length", "evaluate", "log_softmax_at", "pieces", "score_text", "tokenize_pair"]


def common_length(first: Sequence[int], second: Sequence[int], limit: int) -> int:
    """How many of their first ``limit`` tokens ``first`` and ``second`` share."""
    length = 0
    for a, b in zip(first[:limit], second[:limit]):
        if a != b:
            break
        length += 1
    return length


def _reuse_prefix(llama: Llama, tokens: list[int], keep_before: int) -> int:
    """Keep the longest evaluated prefix of ``tokens`` that ends before position ``keep_before``
    (whose logits are needed, so it is evaluated again); return its length."""
    kept = common_length(llama.input_ids[: min(llama.n_tokens, keep_before)].tolist(), tokens, keep_before)
    llama.n_tokens = kept
    return kept


def evaluate(llama: Llama, tokens: list[int], start: int, wanted_from: int, *, seq: int = -1) -> dict[int, Any]:
    """Evaluate ``tokens[start:]`` after the kept prefix; the logits at every position from
    ``wanted_from`` on, by position, as float64 rows. What the cache holds from ``start`` on is
    dropped first: in sequence ``seq`` only when other sequences keep cells (-1: all of them)."""
    import llama_cpp
    import numpy as np

    llama._ctx.kv_cache_seq_rm(seq, start, -1)
    n_vocab = llama.n_vocab()
    rows: dict[int, Any] = {}
    for first in range(start, len(tokens), llama.n_batch):
        chunk = tokens[first : first + llama.n_batch]
        llama._batch.set_batch(batch=chunk, n_past=first, logits_all=False)
        for i in range(len(chunk)):
            llama._batch.batch.logits[i] = first + i >= wanted_from
        llama._ctx.decode(llama._batch)
        llama.input_ids[first : first + len(chunk)] = chunk
        llama.n_tokens = first + len(chunk)
        for i in range(len(chunk)):
            if first + i >= wanted_from:
                pointer = llama_cpp.llama_get_logits_ith(llama._ctx.ctx, ctypes.c_int32(i))
                rows[first + i] = np.ctypeslib.as_array(pointer, shape=(n_vocab,)).astype(np.float64)
    return rows


def tokenize_pair(llama: Llama, context: str, text: str, *, add_bos: bool = True) -> tuple[list[int], list[int]]:
    """``context`` and ``text`` tokenized apart (the text's tokens are those it has on its own)."""
    context_tokens = llama.tokenize(context.encode("utf-8"), add_bos=add_bos, special=True)
    if not context_tokens:
        raise ValueError("scoring needs a context of at least one token")
    return context_tokens, llama.tokenize(text.encode("utf-8"), add_bos=False, special=False)


def check_fits(llama: Llama, tokens: int) -> None:
    if tokens > llama.n_ctx():
        raise ValueError(f"Requested tokens ({tokens}) exceed context window of {llama.n_ctx()}")


def log_softmax_at(rows: Any, tokens: list[int]) -> list[float]:
    """The log-probability of ``tokens[i]`` under the logits ``rows[i]`` (float64 arithmetic)."""
    import numpy as np

    if not tokens:
        return []
    rows = np.asarray(rows, dtype=np.float64)
    top = rows.max(axis=1, keepdims=True)
    totals = np.log(np.exp(rows - top).sum(axis=1)) + top[:, 0]
    return [float(rows[i, token] - totals[i]) for i, token in enumerate(tokens)]


def pieces(llama: Llama, tokens: list[int], logprobs: list[float]) -> tuple[TokenLogprob, ...]:
    """Each token's text with its log-probability."""
    texts = [llama.detokenize([t]).decode("utf-8", errors="replace") for t in tokens]
    return tuple(TokenLogprob(p, v) for p, v in zip(texts, logprobs))


def score_text(llama: Llama, context: str, text: str, *,
               add_bos: bool = True) -> tuple[tuple[TokenLogprob, ...], int, int]:
    """Each token of ``text`` with its log-probability after ``context``; also how many tokens
    were scored in all (context and text, the way a prompt is counted) and how many of them were
    reused from the previous evaluation. ``add_bos=False`` for a context that already holds the
    model's special tokens (a rendered chat template)."""
    context_tokens, text_tokens = tokenize_pair(llama, context, text, add_bos=add_bos)
    tokens = context_tokens + text_tokens
    check_fits(llama, len(tokens))
    wanted_from = len(context_tokens) - 1  # the logits there predict the text's first token
    kept = _reuse_prefix(llama, tokens, keep_before=wanted_from)
    rows = evaluate(llama, tokens, kept, wanted_from)
    logprobs = log_softmax_at([rows[wanted_from + i] for i in range(len(text_tokens))], text_tokens)
    return pieces(llama, text_tokens, logprobs), len(tokens), kept
