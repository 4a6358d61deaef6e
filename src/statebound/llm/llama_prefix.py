"""What the embedded model has read, kept for the next request: reuse of the longest common prefix.

Where a token's cells lie in llama.cpp's KV cache changes its numbers. Attention sums over the
cells in cell order and, without flash attention, in SIMD lanes chosen by cell index; a Q4 model
quantizes every activation again, so the last bits of such a sum move log-probabilities by tenths
of a nat. Reuse therefore never changes the layout: sequence 0, the one evaluated and generated on,
always lies in cells ``0..n-1`` in position order, as when llama-cpp-python runs alone. Earlier
requests are kept out of the cache, as snapshots of sequence 0 (``llama_state_seq_get_data``, about
23 KB a token on SmolLM2), and a scoring request writes a snapshot back into the emptied cache from
cell 0 when it shares a longer prefix with the request than sequence 0 does: a calibrated pick's
prompt and its blind baseline, read in turn, both find their prefix again. A snapshot gives back
only cells evaluated as a prompt (a generated token's cell comes from a one-token batch, other
kernels), so what it restores is what evaluating those tokens again would give. Generation reuses
what sequence 0 holds and nothing else, as llama-cpp-python alone (its records stay as they were).
Sequence ids from :data:`FIRST_FREE_SEQ` on are free for the candidates of one scoring batch
(:mod:`statebound.llm.llama_batch`), whose cells follow sequence 0's and are dropped after it.
"""

from __future__ import annotations

import ctypes
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from statebound.llm.llama_scoring import common_length

if TYPE_CHECKING:
    from llama_cpp import Llama

__all__ = ["FIRST_FREE_SEQ", "N_SEQ_MAX", "SLOTS", "PrefixCache", "out_of_cells", "share_prefixes"]

SLOTS = 3  # snapshots of earlier requests kept besides sequence 0
FIRST_FREE_SEQ = 1
N_SEQ_MAX = 64  # llama.cpp's limit (llama_max_parallel_sequences)


def out_of_cells(error: BaseException) -> bool:
    """``error`` is llama-cpp-python's report that the batch found no room in the KV cache."""
    return isinstance(error, RuntimeError) and str(error) == "llama_decode returned 1"


@dataclass(frozen=True, slots=True, eq=False)
class _Snapshot:
    tokens: tuple[int, ...]  # the tokens whose cells it gives back (evaluated as a prompt)
    state: Any  # a ctypes byte array: sequence 0's cells as llama_state_seq_get_data wrote them
    size: int


class PrefixCache:
    """Snapshots of what sequence 0 of ``llama``'s KV cache held for earlier requests (the least
    recently used is dropped first). Not thread-safe: hold the model's lock."""

    def __init__(self, llama: Llama) -> None:
        self.llama = llama
        self._kept: list[_Snapshot] = []  # least recently used first
        self._generated_from: int | None = None  # sequence 0's cells from here on were generated
        self.reused: list[int] = []  # what each request since the last clear() reused, in order

    def _memory(self) -> Any:
        import llama_cpp

        return llama_cpp.llama_get_memory(self.llama._ctx.ctx)

    def remove(self, seq: int, start: int = -1) -> None:
        """Drop sequence ``seq``'s cells from position ``start`` on (-1: all of them)."""
        import llama_cpp

        llama_cpp.llama_memory_seq_rm(self._memory(), seq, start, -1)

    def working(self) -> list[int]:
        """The tokens sequence 0 holds."""
        return self.llama.input_ids[: self.llama.n_tokens].tolist()

    def reuse(self, tokens: Sequence[int], *, keep_before: int) -> int:
        """Make sequence 0 hold the longest prefix of ``tokens`` shorter than ``keep_before`` that
        it or a snapshot holds, and nothing after it; its length. What sequence 0 held is kept as a
        snapshot first when part of it would be dropped."""
        limit = max(0, min(keep_before, len(tokens)))
        working = self.working()
        best = common_length(working, tokens, limit)
        shared, source = max(((common_length(kept.tokens, tokens, limit), kept) for kept in self._kept),
                             key=lambda pair: pair[0], default=(0, None))
        if best < len(working):
            self._keep(working[: self._generated_from])
        if source is not None and shared > best:
            self._restore(source)
            best = shared
        self.remove(0, best)
        self.llama.n_tokens = best
        if self._generated_from is not None and self._generated_from >= best:
            self._generated_from = None
        self.count(best)
        return best

    def count(self, reused: int) -> None:
        """Note that a request reused ``reused`` tokens (the last 100 requests are kept)."""
        del self.reused[:-99]
        self.reused.append(reused)

    def generated_after(self, prompt: int) -> None:
        """Sequence 0's cells after its first ``prompt`` were generated (one token at a time)."""
        self._generated_from = prompt if self.llama.n_tokens > prompt else None

    def _keep(self, tokens: list[int]) -> None:
        """Snapshot sequence 0 (its first ``tokens``), replacing the snapshots it extends, unless
        one holds it already."""
        held = tuple(tokens)
        if not held or any(kept.tokens[: len(held)] == held for kept in self._kept):
            return
        import llama_cpp

        ctx = self.llama._ctx.ctx
        size = llama_cpp.llama_state_seq_get_size(ctx, 0)
        buffer = (ctypes.c_uint8 * size)()  # the one copy: llama.cpp writes the cells into it
        written = llama_cpp.llama_state_seq_get_data(ctx, buffer, size, 0)
        self._kept = [kept for kept in self._kept if held[: len(kept.tokens)] != kept.tokens]  # not extended
        self._kept.append(_Snapshot(held, buffer, written))
        del self._kept[:-SLOTS]

    def _restore(self, snapshot: _Snapshot) -> None:
        """Empty the cache and write ``snapshot`` back into sequence 0, from cell 0."""
        import llama_cpp

        llama_cpp.llama_memory_clear(self._memory(), False)
        if not llama_cpp.llama_state_seq_set_data(self.llama._ctx.ctx, snapshot.state, snapshot.size, 0):
            raise RuntimeError("llama.cpp could not restore a kept prefix into sequence 0")
        self.remove(0, len(snapshot.tokens))  # cells generated after them, if any
        self.llama.input_ids[: len(snapshot.tokens)] = snapshot.tokens
        self._generated_from = None
        if snapshot in self._kept:  # (keeping sequence 0 first may have dropped it)
            self._kept.remove(snapshot)
        self._kept.append(snapshot)  # most recently used
        del self._kept[:-SLOTS]


def share_prefixes(llama: Llama) -> PrefixCache:
    """Reopen ``llama``'s context for :data:`N_SEQ_MAX` sequences sharing one KV cache (a pick's
    candidates each on its own sequence over the prompt's cells); its generation counts what it
    reuses and marks the cells it generates."""
    from llama_cpp._internals import LlamaContext
    from llama_cpp._utils import suppress_stdout_stderr

    cache = PrefixCache(llama)
    params = llama.context_params
    params.n_seq_max = N_SEQ_MAX
    params.kv_unified = True  # one pool of cells: sequences share the cells of their common prefix
    replaced = llama._ctx
    with suppress_stdout_stderr(disable=llama.verbose):  # llama.cpp's notes on the new context, as Llama's own
        llama._ctx = LlamaContext(model=llama._model, params=params, verbose=llama.verbose)
    replaced.close()
    llama._stack.callback(llama._ctx.close)  # runs before the model is freed
    llama.n_tokens = 0
    generate: Callable[..., Any] = llama.generate

    def generate_counted(tokens: Sequence[int], *args: Any, **kwargs: Any) -> Any:
        # llama-cpp-python reuses sequence 0's prefix shared with all but the last token by itself
        cache.count(common_length(cache.working(), tokens, len(tokens) - 1))
        try:
            yield from generate(tokens, *args, **kwargs)
        finally:
            cache.generated_after(len(tokens))

    llama.generate = generate_counted  # type: ignore[method-assign]
    return cache
