"""Print what one choice over k candidates costs on the embedded model (Pick's ``score`` method).

    .venv/bin/python benchmarks/choice_cost.py [--model smollm2] [--threads 1] [--repeats 5] [--sql]

For k = 2, 5, 10, 20 candidates (column names) after a shared prompt of about 300 tokens (a
schema and a question), it measures one scoring request (what ``Pick`` sends: the prompt evaluated
once, then each candidate's tokens) against k separate requests that each evaluate the whole
prompt, and against evaluating the prompt alone. Each measurement starts from a prompt the model
has not seen (its first line changes), so no earlier evaluation is reused. Figures depend on how
busy the machine's cores are.

Then, for k = 2, 5, 10, 20, 50 candidates of 1-16 tokens (SQL fragments), the pick's time as a
ratio to the prompt alone, one candidate after another (``STATEBOUND_LLAMA_SHARING=0``) and with
sharing on (the default: the prompt once, then each candidate in a batch of its own; in one batch
for all with ``--flash-attn``), next to the one-batch limit: (prompt + candidate tokens) / prompt
tokens. ``--sql`` also runs the scoped SQL machine on the demo's 8 tasks with both off and on, in
this process, and prints seconds per episode, prompt tokens evaluated and reused, and whether
every pick and result is the same task by task. ``--flash-attn`` runs everything with llama.cpp's
flash attention (``STATEBOUND_LLAMA_FLASH_ATTN=1``).
"""

from __future__ import annotations

import argparse
import functools
import statistics
import time
from collections.abc import Callable
from itertools import count

from statebound.llm import Request, complete_sync, open_model
from statebound.llm.base import LLM

COLUMNS = ("singer_id", "name", "country", "song_name", "song_release_year", "age", "is_male",
           "stadium_id", "location", "capacity", "highest", "lowest", "average", "concert_id",
           "concert_name", "theme", "year", "ticket_price", "attendance", "organiser")
SCHEMA = "\n".join(f"Table {t}: " + ", ".join(COLUMNS) for t in ("singer", "stadium", "concert", "tour"))
_fresh = count()


def prompt() -> str:
    """The shared prompt, opening with a number no earlier measurement used (so nothing is cached:
    the model reuses only a common prefix)."""
    return f"Database {next(_fresh)}\n{SCHEMA}\nQuestion: what is the average age of all singers from France?\nColumn:"


def timed(action: Callable[[], int], repeats: int) -> tuple[float, int]:
    """Median seconds of ``action`` over ``repeats`` runs, and the prompt tokens it reported."""
    seconds, tokens = [], 0
    for _ in range(repeats):
        started = time.perf_counter()
        tokens = action()
        seconds.append(time.perf_counter() - started)
    return statistics.median(seconds), tokens


def one_request(llm: LLM, candidates: tuple[str, ...]) -> int:
    return complete_sync(llm, Request(prompt=prompt(), score=candidates)).usage.prompt_tokens


def separate_requests(llm: LLM, candidates: tuple[str, ...]) -> int:
    total = 0
    for candidate in candidates:  # a fresh prompt each time: what k independent calls cost
        total += complete_sync(llm, Request(prompt=prompt(), score=candidate)).usage.prompt_tokens
    return total


def fragments(k: int) -> tuple[str, ...]:
    """k SQL fragments of 1 to 16 tokens (lengths cycling through that range)."""
    words = [f" {c}" for c in COLUMNS] + [" WHERE", " >", " 30", " AND", " =", " 'France'"]
    return tuple("".join(words[(i + j) % len(words)] for j in range(1 + (i * 5) % 16)) + f" -- {i}"
                 for i in range(k))


def ratio_table(args: argparse.Namespace) -> None:
    from statebound.llm.llamacpp import LlamaCppLLM, LlamaOptions

    base = open_model(args.model, mode="completion", n_threads=args.threads)
    assert isinstance(base, LlamaCppLLM)
    llms = {sharing: LlamaCppLLM(base.path, model=base.model, mode="completion",
                                 options=LlamaOptions(n_ctx=base.options.n_ctx, n_threads=args.threads, sharing=sharing,
                                                      flash_attn=args.flash_attn))
            for sharing in (False, True)}
    print(f"\n k | candidate tokens | one at a time: x prompt | {'one batch' if args.flash_attn else 'sharing on'}: "
          "x prompt | limit: x prompt")
    for llm in llms.values():
        complete_sync(llm, Request(prompt="warm up", score=" x"))
    alone = {sharing: timed(functools.partial(one_request, llm, (" x",)), args.repeats)
             for sharing, llm in llms.items()}
    for k in (2, 5, 10, 20, 50):
        candidates = fragments(k)
        extra = sum(len(base_tokens(llms[True], c)) for c in candidates)
        prompt_tokens = alone[True][1] - 1
        ratios = [timed(functools.partial(one_request, llms[sharing], candidates), args.repeats)[0] / alone[sharing][0]
                  for sharing in (False, True)]
        print(f"{k:2} | {extra:5} | {ratios[0]:6.2f} | {ratios[1]:6.2f} | {(prompt_tokens + extra) / prompt_tokens:6.2f}")


def base_tokens(llm: LLM, text: str) -> list[int]:
    from statebound.llm.llamacpp import LlamaCppLLM, _load

    assert isinstance(llm, LlamaCppLLM)
    return _load(llm.path, llm.options, False).llama.tokenize(text.encode(), add_bos=False)


def sql_machine(args: argparse.Namespace) -> None:
    """The scoped SQL machine on the demo tasks, sharing off then on, in this process."""
    import os
    import tempfile
    from pathlib import Path

    from statebound.bench.store import RunStore
    from statebound.cli.app import app
    from statebound.llm.base import Usage
    from statebound.llm.llamacpp import LlamaCppLLM

    totals: dict[str, Usage] = {}
    blocking = LlamaCppLLM.complete_blocking

    def counted(self: LlamaCppLLM, request: Request, **kwargs: object) -> object:
        completion = blocking(self, request, **kwargs)  # type: ignore[arg-type]
        totals[phase] = totals.get(phase, Usage()) + completion.usage
        return completion

    LlamaCppLLM.complete_blocking = counted  # type: ignore[assignment,method-assign]
    runs = {}
    phases = [(f"{name} {r + 1}", sharing) for r in range(args.rounds) for name, sharing in (("before", "0"), ("after", "1"))]
    for phase, sharing in phases:
        os.environ["STATEBOUND_LLAMA_SHARING"] = sharing
        out = Path(tempfile.mkdtemp(prefix=f"choice-cost-{phase.replace(' ', '')}-"))
        try:
            app(["eval", "intercode-sql", "--agent", "stateflow-scoped", "--model", args.model, "--tasks", DEMO_TASKS,
                 "--max-turns", "10", "--concurrency", "1", "--out", str(out)], standalone_mode=False)
        except SystemExit:
            pass
        with RunStore(out, create=False, read_only=True) as store:
            runs[phase] = {r.task: r for r in store.results(with_trajectories=True)}
    print("\nscoped SQL machine, demo tasks | s per episode | prompt tokens per episode: evaluated, reused")
    for phase, results in runs.items():
        used, n = totals.get(phase, Usage()), max(1, len(results))
        seconds = sum(r.wall_seconds for r in results.values()) / n
        print(f"{phase:6} | {seconds:6.1f} | {(used.prompt_tokens - used.cached_tokens) / n:8.0f}, "
              f"{used.cached_tokens / n:8.0f}")
    for task in sorted(runs["before 1"]):
        before = runs["before 1"][task]
        same = all((before.reward, _picks(before)) == (r[task].reward, _picks(r[task])) for r in runs.values() if task in r)
        print(f"task {task}: reward {before.reward:.2f}, picks {_picks(before)}, "
              f"{'the same in every run' if same else 'PICKS OR RESULTS DIFFER'}")


def _picks(result: object) -> list[object]:
    events = getattr(result, "events", []) or []
    return [(e.get("data") or {}).get("choice", {}).get("picked") for e in events
            if isinstance(e.get("data"), dict) and "choice" in e["data"]]


DEMO_TASKS = "3,123,255,404,575,652,796,918"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="smollm2")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--sql", action="store_true", help="also run the scoped SQL machine on the demo tasks")
    parser.add_argument("--rounds", type=int, default=2, help="times the SQL machine runs with sharing off, then on")
    parser.add_argument("--sql-only", action="store_true", help="skip the choice tables")
    parser.add_argument("--flash-attn", action="store_true", help="llama.cpp's flash attention (candidates in one batch)")
    args = parser.parse_args()
    if args.flash_attn:
        import os

        os.environ["STATEBOUND_LLAMA_FLASH_ATTN"] = "1"
    if args.sql_only:
        sql_machine(args)
        return
    llm = open_model(args.model, mode="completion", n_threads=args.threads)
    complete_sync(llm, Request(prompt="warm up", score=" x"))  # load the model
    alone, prompt_tokens = timed(lambda: one_request(llm, (" x",)), args.repeats)
    print(f"{args.model}, {args.threads} thread(s): the prompt alone ({prompt_tokens - 1} tokens + 1) "
          f"{alone * 1000:.0f} ms")
    print(" k | one request: prompt tokens counted, ms | k requests: prompt tokens, ms | ms per candidate "
          "beyond the prompt")
    for k in (2, 5, 10, 20):
        candidates = tuple(f" {c}" for c in COLUMNS[:k])
        together, counted = timed(functools.partial(one_request, llm, candidates), args.repeats)
        apart, counted_apart = timed(functools.partial(separate_requests, llm, candidates),
                                     max(1, args.repeats // 2))
        print(f"{k:2} | {counted:5} tok {together * 1000:6.0f} ms | {counted_apart:5} tok {apart * 1000:6.0f} ms"
              f" | {(together - alone) / k * 1000:5.1f}")
    ratio_table(args)
    if args.sql:
        sql_machine(args)


if __name__ == "__main__":
    main()
