"""Scoring every candidate of a pick over the prompt they share, the prompt evaluated once.

The context is evaluated once on sequence 0 (from the longest prefix the model already holds,
:mod:`statebound.llm.llama_prefix`); its last position's logits score each text's first token.
Each text of two or more tokens then gets a sequence of its own whose cells start as sequence 0's
(a copy tags the prefix's cells, nothing is evaluated again) and its tokens are evaluated after
them. The scores are exactly those of one-at-a-time scoring, bit for bit, because every token is
evaluated at the same position after the same cells in the same cell order:

- without flash attention (llama.cpp's default, the one every record was made with) attention also
  sums in SIMD lanes chosen by cell index, so each text goes alone, in the cells right after the
  prompt's, as one-at-a-time scoring puts it (one ``llama_decode`` per text, the prompt not again);
- with flash attention (``LlamaOptions(flash_attn=True)``) only the order of a sequence's cells
  counts, so the texts go together: one ``llama_decode`` per ``n_batch`` tokens, each text's cells
  after the prompt's. Its numbers differ from those without (another kernel), never between
  batched and one-at-a-time scoring.

A token of a batch attends to every cell the batch uses (other candidates' cells are masked), so a
group's attention grows with the square of its tokens: groups hold at most a quarter of the
prompt's length in tokens (at least 16). A group that does not fit the KV cache is split in halves
(never scored from a partly evaluated batch), and a text that does not fit even alone ends with the
context-window error one-at-a-time scoring raises.
"""

from __future__ import annotations

import ctypes
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from statebound.llm.base import TokenLogprob
from statebound.llm.llama_prefix import FIRST_FREE_SEQ, N_SEQ_MAX, PrefixCache, out_of_cells
from statebound.llm.llama_scoring import check_fits, evaluate, log_softmax_at, pieces, tokenize_pair

if TYPE_CHECKING:
    from llama_cpp import Llama

__all__ = ["BatchScores", "score_batch"]

GROUP = N_SEQ_MAX - FIRST_FREE_SEQ  # texts evaluated together at most
MIN_GROUP_TOKENS = 16


@dataclass(frozen=True, slots=True)
class BatchScores:
    """Each text's tokens with their log-probabilities; the tokens the request covers (the context
    once, then every text's, as a prompt is counted) and how many of them were reused."""

    logprobs: tuple[tuple[TokenLogprob, ...], ...]
    prompt_tokens: int
    cached_tokens: int


def score_batch(llama: Llama, cache: PrefixCache, context: str, texts: Sequence[str], *,
                add_bos: bool = True) -> BatchScores:
    """Score ``texts`` after ``context`` (:func:`statebound.llm.llama_scoring.score_text`'s
    numbers), every text in as few evaluations as fit."""
    pairs = [tokenize_pair(llama, context, text, add_bos=add_bos) for text in texts]
    context_tokens = pairs[0][0] if pairs else tokenize_pair(llama, context, "", add_bos=add_bos)[0]
    text_tokens = [text for _, text in pairs]
    for tokens in text_tokens:
        check_fits(llama, len(context_tokens) + len(tokens))
    last = len(context_tokens) - 1  # its logits predict every text's first token
    kept = cache.reuse(context_tokens, keep_before=last - 1)  # two tokens at least: not a lone one
    first_row = evaluate(llama, context_tokens, kept, last, seq=0)[last]
    logprobs = [log_softmax_at([first_row], tokens[:1]) for tokens in text_tokens]
    longer = [i for i, tokens in enumerate(text_tokens) if len(tokens) > 1]
    budget = max(MIN_GROUP_TOKENS, len(context_tokens) // 4)
    most = GROUP if llama.context_params.flash_attn else 1
    for group in _groups(longer, [len(text_tokens[i]) for i in longer], budget, most=most):
        for i, rest in zip(group, _score_group(llama, cache, len(context_tokens), [text_tokens[i] for i in group])):
            logprobs[i] += rest
    return BatchScores(
        logprobs=tuple(pieces(llama, tokens, values) for tokens, values in zip(text_tokens, logprobs)),
        prompt_tokens=len(context_tokens) + sum(len(tokens) for tokens in text_tokens),
        cached_tokens=kept,
    )


def _groups(indices: list[int], sizes: list[int], budget: int, *, most: int = GROUP) -> list[list[int]]:
    """``indices`` cut in order into runs of at most ``most`` whose ``sizes`` add up to at most
    ``budget`` (a longer one alone)."""
    groups: list[list[int]] = []
    total = budget + 1
    for index, size in zip(indices, sizes):
        if total + size > budget or len(groups[-1]) >= most:
            groups.append([])
            total = 0
        groups[-1].append(index)
        total += size
    return groups


def _score_group(llama: Llama, cache: PrefixCache, prefix: int, texts: list[list[int]]) -> list[list[float]]:
    """The log-probabilities of each text's tokens after its first, the texts evaluated together
    after sequence 0's ``prefix`` cells; halves of the group when it does not fit the KV cache."""
    try:
        return _evaluate_group(llama, cache, prefix, texts)
    except RuntimeError as error:
        if not out_of_cells(error):
            raise
        if len(texts) == 1:
            raise ValueError(f"Requested tokens ({prefix + len(texts[0])}) exceed context window of "
                             f"{llama.n_ctx()} (with the prompt's cells in use)") from None
    middle = len(texts) // 2
    return (_score_group(llama, cache, prefix, texts[:middle])
            + _score_group(llama, cache, prefix, texts[middle:]))


def _evaluate_group(llama: Llama, cache: PrefixCache, prefix: int, texts: list[list[int]]) -> list[list[float]]:
    import llama_cpp
    import numpy as np
    from llama_cpp._internals import LlamaBatch

    # token, position, sequence, the token it predicts (-1: none, no logits). A text's last token
    # predicts nothing and stays out, except the second of two: a batch of one token runs other
    # kernels (up to 0.15 nat off on SmolLM2)
    rows = [(tokens[j], prefix + j, FIRST_FREE_SEQ + i, tokens[j + 1] if j + 1 < len(tokens) else -1)
            for i, tokens in enumerate(texts) for j in range(max(2, len(tokens) - 1))]
    for i in range(len(texts)):
        cache.remove(FIRST_FREE_SEQ + i)
        llama_cpp.llama_memory_seq_cp(llama_cpp.llama_get_memory(llama._ctx.ctx), 0, FIRST_FREE_SEQ + i, 0, prefix)
    values: list[float] = []
    batch = LlamaBatch(n_tokens=llama.n_batch, embd=0, n_seq_max=1, verbose=False)
    try:
        for first in range(0, len(rows), llama.n_batch):
            chunk = rows[first : first + llama.n_batch]
            raw = batch.batch
            raw.n_tokens = len(chunk)
            for k, (token, position, seq, predicted) in enumerate(chunk):
                raw.token[k], raw.pos[k], raw.n_seq_id[k], raw.logits[k] = token, position, 1, predicted >= 0
                raw.seq_id[k][0] = seq
            llama._ctx.decode(batch)
            targets = [row[3] for row in chunk if row[3] >= 0]  # llama.cpp's output rows, in batch order
            pointer = llama_cpp.llama_get_logits(llama._ctx.ctx)
            logits = np.ctypeslib.as_array(ctypes.cast(pointer, ctypes.POINTER(ctypes.c_float)),
                                           shape=(len(targets), llama.n_vocab()))
            for block in range(0, len(targets), 64):  # float64 rows a few MB at a time
                values += log_softmax_at(logits[block : block + 64], targets[block : block + 64])
    finally:
        batch.close()
        for i in range(len(texts)):
            cache.remove(FIRST_FREE_SEQ + i)
    by_text: list[list[float]] = [[] for _ in texts]
    for (_, _, seq, _), value in zip([row for row in rows if row[3] >= 0], values):
        by_text[seq - FIRST_FREE_SEQ].append(value)
    return by_text
