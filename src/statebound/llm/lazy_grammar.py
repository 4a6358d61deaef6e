"""Greedy decoding under a grammar, checking the grammar only where it matters.

llama-cpp-python applies a GBNF grammar to the whole vocabulary (49k tokens for SmolLM2) before
every greedy pick, which costs about as much as the model's own forward pass on these small
models. Under greedy decoding the result is the same if the model's first choice is checked
first: when the grammar accepts it, it is also the best token the grammar allows. When it is refused
the grammar is applied to the ``SHORTLIST`` best candidates, and the best of those it allows is
taken if it beats every candidate left out; only otherwise does the grammar see the whole
vocabulary. Ties go to the lowest token id, as in llama.cpp's greedy sampler.

:func:`lazy_grammar_sampling` installs this sampler on a ``Llama`` for one generation.
"""

from __future__ import annotations

import ctypes
import math
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from llama_cpp import Llama, LlamaGrammar

__all__ = ["SHORTLIST", "LazyGrammarGreedy", "lazy_grammar_sampling"]

SHORTLIST = 64  # candidates checked when the first choice is refused


class LazyGrammarGreedy:
    """Stands in for llama-cpp-python's sampler chain (``sample(ctx, idx)``) for greedy decoding
    under ``grammar``."""

    def __init__(self, llama: Llama, grammar: LlamaGrammar) -> None:
        import llama_cpp
        import numpy as np

        self._lib = llama_cpp
        self._np = np
        self._n_vocab = llama.n_vocab()
        self._grammar = llama_cpp.llama_sampler_init_grammar(
            llama._model.vocab, grammar._grammar.encode("utf-8"), grammar._root.encode("utf-8")
        )
        if not self._grammar:
            raise ValueError("llama.cpp could not build the grammar sampler")
        self._one = (llama_cpp.llama_token_data * 1)()
        self._few = (llama_cpp.llama_token_data * SHORTLIST)()
        self._few_view: Any = np.ctypeslib.as_array(self._few)
        self._all = (llama_cpp.llama_token_data * self._n_vocab)()
        self._all_view: Any = np.ctypeslib.as_array(self._all)
        self._all_view["id"] = np.arange(self._n_vocab, dtype=np.int32)

    def _logits(self, ctx: Any, idx: int) -> Any:
        pointer = self._lib.llama_get_logits_ith(ctx.ctx, idx)
        return self._np.ctypeslib.as_array(pointer, shape=(self._n_vocab,))

    def _apply(self, data: Any, size: int) -> None:
        array = self._lib.llama_token_data_array(data=data, size=size, selected=-1, sorted=False)
        self._lib.llama_sampler_apply(self._grammar, ctypes.byref(array))

    def sample(self, ctx: Any, idx: int) -> int:
        logits = self._logits(ctx, idx)
        token = int(self._np.argmax(logits))
        first: Any = self._one[0]
        first.id, first.logit, first.p = token, float(logits[token]), 0.0
        self._apply(self._one, 1)
        if math.isinf(first.logit):  # refused: the best token the grammar allows
            shortlisted = self._best_of_shortlist(logits)
            token = self._best_of_all(logits) if shortlisted is None else shortlisted
        self._lib.llama_sampler_accept(self._grammar, token)
        return token

    def _best_of_shortlist(self, logits: Any) -> int | None:
        np = self._np
        top = np.argpartition(-logits, SHORTLIST)[: SHORTLIST + 1]  # the best SHORTLIST + 1, unordered
        top = top[np.lexsort((top, -logits[top]))]  # by logit, then token id
        shortlist, left_out_best = top[:SHORTLIST], logits[top[SHORTLIST]]
        self._few_view["id"], self._few_view["logit"], self._few_view["p"] = shortlist, logits[shortlist], 0.0
        self._apply(self._few, SHORTLIST)
        allowed = np.flatnonzero(~np.isinf(self._few_view["logit"]))
        if allowed.size and logits[shortlist[allowed[0]]] > left_out_best:
            return int(shortlist[allowed[0]])
        return None  # nothing allowed in the shortlist, or a tie with a candidate left out

    def _best_of_all(self, logits: Any) -> int:
        self._all_view["logit"] = logits
        self._all_view["p"] = 0.0
        self._apply(self._all, self._n_vocab)
        return int(self._np.argmax(self._all_view["logit"]))

    def close(self) -> None:
        if self._grammar:
            self._lib.llama_sampler_free(self._grammar)
            self._grammar = None

    def __del__(self) -> None:
        self.close()


@contextmanager
def lazy_grammar_sampling(llama: Llama) -> Iterator[None]:
    """While inside, greedy generations on ``llama`` that carry a grammar use
    :class:`LazyGrammarGreedy`; any other generation is sampled as usual. Not thread-safe: hold
    the model's lock."""
    original = llama._init_sampler

    def init_sampler(**settings: Any) -> Any:
        grammar = settings.get("grammar")
        simple = settings.get("temp") == 0.0 and settings.get("logits_processor") is None
        plain = settings.get("repeat_penalty", 1.0) == 1.0 and not settings.get("frequency_penalty") \
            and not settings.get("presence_penalty")
        if grammar is not None and simple and plain:
            return LazyGrammarGreedy(llama, grammar)
        return original(**settings)

    llama._init_sampler = init_sampler  # type: ignore[method-assign,assignment]
    try:
        yield
    finally:
        del llama._init_sampler  # the class's method again
