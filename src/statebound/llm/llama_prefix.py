"""What the embedded model has read, kept for the next request: reuse of the longest common prefix.

llama-cpp-python evaluates and generates on sequence 0 of the KV cache and reuses only what that
sequence holds, so two alternating prompts (a calibrated pick's prompt and its blind baseline)
read each other's tails again and again. :func:`share_prefixes` reopens the model's context with a
unified KV cache for several sequences: sequences ``1..SLOTS`` keep earlier requests' tokens
(copying a sequence to another only tags its cells, nothing is evaluated), and each scoring
request first moves the longest prefix any of them has into sequence 0. A generation request drops
the kept sequences and reuses sequence 0's prefix only (seeded samples stay reproducible). Sequence ids
from :data:`FIRST_FREE_SEQ` on are free for the candidates of one scoring batch
(:mod:`statebound.llm.llama_batch`). When the cache runs out of cells, the kept sequences are
dropped and the evaluation is tried again, so keeping them never makes a request fail.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from llama_cpp import Llama

__all__ = ["FIRST_FREE_SEQ", "N_SEQ_MAX", "SLOTS", "PrefixCache", "out_of_cells", "share_prefixes"]

SLOTS = 3  # earlier requests kept besides the working sequence 0
FIRST_FREE_SEQ = SLOTS + 1
N_SEQ_MAX = 64  # llama.cpp's limit (llama_max_parallel_sequences)


def out_of_cells(error: BaseException) -> bool:
    """``error`` is llama-cpp-python's report that the batch found no room in the KV cache."""
    return isinstance(error, RuntimeError) and str(error) == "llama_decode returned 1"


def _common(first: Sequence[int], second: Sequence[int], limit: int) -> int:
    length = 0
    for a, b in zip(first[:limit], second[:limit]):
        if a != b:
            break
        length += 1
    return length


class PrefixCache:
    """The token sequences kept in sequences ``1..SLOTS`` of ``llama``'s KV cache (the least
    recently used is replaced first). Not thread-safe: hold the model's lock."""

    def __init__(self, llama: Llama) -> None:
        self.llama = llama
        self._kept: dict[int, list[int]] = {}  # sequence id -> tokens, least recently used first
        self.reused: list[int] = []  # what each request since the last clear() reused, in order

    def _memory(self) -> Any:
        import llama_cpp

        return llama_cpp.llama_get_memory(self.llama._ctx.ctx)

    def remove(self, seq: int, start: int = -1) -> None:
        """Drop sequence ``seq``'s cells from position ``start`` on (-1: all of them)."""
        import llama_cpp

        llama_cpp.llama_memory_seq_rm(self._memory(), seq, start, -1)

    def _copy(self, source: int, target: int, end: int) -> None:
        import llama_cpp

        llama_cpp.llama_memory_seq_cp(self._memory(), source, target, 0, end)

    def working(self) -> list[int]:
        """The tokens sequence 0 holds."""
        return [int(t) for t in self.llama.input_ids[: self.llama.n_tokens]]

    def reuse(self, tokens: Sequence[int], *, keep_before: int) -> int:
        """Make sequence 0 hold the longest prefix of ``tokens`` shorter than ``keep_before`` that
        any kept sequence holds, and nothing after it; its length. What sequence 0 held is kept
        first when part of it would be dropped. Kept sequences that share less than a quarter of
        ``tokens`` are dropped: every evaluation attends to all cells in use (masked), so cells
        kept for another context would only slow it down."""
        limit = max(0, min(keep_before, len(tokens)))
        related = len(tokens) // 4
        for seq in [seq for seq, kept in self._kept.items() if _common(kept, tokens, len(tokens)) < related]:
            self.remove(seq)
            del self._kept[seq]
        working = self.working()
        source, best = 0, _common(working, tokens, limit)
        for seq, kept in self._kept.items():
            if (length := _common(kept, tokens, limit)) > best:
                source, best = seq, length
        if best < len(working) and _common(working, tokens, len(tokens)) >= related:
            self._keep(working, spare=source)
        if source:
            self.remove(0)
            self._copy(source, 0, best)
            self._kept[source] = self._kept.pop(source)  # most recently used
            self.llama.input_ids[:best] = tokens[:best]
        else:
            self.remove(0, best)
        self.llama.n_tokens = best
        del self.reused[:-99]
        self.reused.append(best)
        return best

    def _keep(self, tokens: list[int], *, spare: int) -> None:
        """Copy sequence 0 (``tokens``) into a kept sequence, unless one holds it already; the one
        it extends, else a free one, else the least recently used other than ``spare``."""
        if not tokens or any(_common(kept, tokens, len(tokens)) == len(tokens) for kept in self._kept.values()):
            return
        extended = [seq for seq, kept in self._kept.items() if _common(kept, tokens, len(kept)) == len(kept)]
        free = [seq for seq in range(1, SLOTS + 1) if seq not in self._kept]
        others = [seq for seq in self._kept if seq != spare]
        target = (extended or free or others or [0])[0]
        if not target:
            return
        self.remove(target)
        self._kept.pop(target, None)
        self._copy(0, target, -1)
        self._kept[target] = tokens

    def forget(self) -> bool:
        """Drop every kept sequence (their cells become free); whether there was any."""
        for seq in self._kept:
            self.remove(seq)
        had = bool(self._kept)
        self._kept.clear()
        return had


def share_prefixes(llama: Llama) -> PrefixCache:
    """Reopen ``llama``'s context for :data:`N_SEQ_MAX` sequences sharing one KV cache; its
    generation drops the kept sequences first (and counts what sequence 0 lets it reuse)."""
    from llama_cpp._internals import LlamaContext
    from llama_cpp._utils import suppress_stdout_stderr

    cache = PrefixCache(llama)

    class SharedContext(LlamaContext):
        def decode(self, batch: Any) -> None:
            try:
                super().decode(batch)
            except RuntimeError as error:
                if not out_of_cells(error) or not cache.forget():
                    raise
                super().decode(batch)  # a failed batch leaves the cache as it was

    params = llama.context_params
    params.n_seq_max = N_SEQ_MAX
    params.kv_unified = True  # one pool of cells: sequences share the cells of their common prefix
    replaced = llama._ctx
    with suppress_stdout_stderr(disable=llama.verbose):  # llama.cpp's notes on the new context, as Llama's own
        llama._ctx = SharedContext(model=llama._model, params=params, verbose=llama.verbose)
    replaced.close()
    llama._stack.callback(llama._ctx.close)  # runs before the model is freed
    llama.n_tokens = 0
    generate: Callable[..., Any] = llama.generate

    def generate_alone(tokens: Sequence[int], *args: Any, **kwargs: Any) -> Any:
        # Kept sequences' cells change the cells a sampled token attends over (masked, yet the
        # arithmetic differs), so seeded samples would depend on what was scored before: generation
        # reuses sequence 0's prefix only, as llama-cpp-python does alone
        cache.forget()
        cache.reused.append(_common(cache.working(), tokens, len(tokens) - 1))
        return generate(tokens, *args, **kwargs)

    llama.generate = generate_alone  # type: ignore[method-assign]
    return cache
