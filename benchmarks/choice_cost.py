"""Print what one choice over k candidates costs on the embedded model (Pick's ``score`` method).

    .venv/bin/python benchmarks/choice_cost.py [--model smollm2] [--threads 1] [--repeats 5]

For k = 2, 5, 10, 20 candidates (column names) after a shared prompt of about 300 tokens (a
schema and a question), it measures one scoring request (what ``Pick`` sends: the prompt evaluated
once, then each candidate's tokens) against k separate requests that each evaluate the whole
prompt, and against evaluating the prompt alone. Each measurement starts from a prompt the model
has not seen (the question changes), so no earlier evaluation is reused. Figures depend on how
busy the machine's cores are.
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
    """The shared prompt, with a question no earlier measurement used (so nothing is cached)."""
    return f"{SCHEMA}\nQuestion {next(_fresh)}: what is the average age of all singers from France?\nColumn:"


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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="smollm2")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
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


if __name__ == "__main__":
    main()
