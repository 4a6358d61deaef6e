"""LLM-decided transitions on the embedded model: how often each method leads to the right state.

Twenty cases, each a reply and the state it should lead to among three (``Answer``: the reply
holds the answer; ``Search``: it says more information is needed; ``Fix``: it reports an error).
For every method (``text``: the paper's free answer, parsed strictly, with its fallback;
``score``, ``label``, ``grammar``: the choosers) the script counts right decisions and, for
``text``, the fallbacks (answers that named no state). Prints one table; takes about a minute.

    .venv/bin/python benchmarks/transition_choices.py [--model smollm2]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import time

from statebound.flow import Flow, State, TransitionTaken, llm_choice
from statebound.llm.registry import open_model

CASES: tuple[tuple[str, str], ...] = (
    ("The capital of France is Paris.", "Answer"),
    ("The answer is 42.", "Answer"),
    ("Water boils at 100 degrees Celsius at sea level.", "Answer"),
    ("So the total cost is $15.", "Answer"),
    ("Final answer: Leonardo da Vinci painted the Mona Lisa.", "Answer"),
    ("There are 7 days in a week.", "Answer"),
    ("The result of the query is 12 singers.", "Answer"),
    ("I do not know who wrote this book yet; I need to look it up.", "Search"),
    ("I need more information about the population of Lyon.", "Search"),
    ("Let me search for the director of the film first.", "Search"),
    ("I am not sure. I should look up when the bridge was built.", "Search"),
    ("I have to find the birth date of the author before answering.", "Search"),
    ("The question needs facts I do not have; searching the encyclopedia.", "Search"),
    ("Error: no such table: singers", "Fix"),
    ("Traceback (most recent call last): ZeroDivisionError: division by zero", "Fix"),
    ("bash: lss: command not found", "Fix"),
    ("The query failed with a syntax error near FROM.", "Fix"),
    ("Error 1054: Unknown column 'age' in 'field list'", "Fix"),
    ("The command exited with status 2: file not found.", "Fix"),
    ("SyntaxError: invalid syntax in line 3", "Fix"),
)
STATES = {"Answer": "the reply gives the final answer", "Search": "more information must be looked up first",
          "Fix": "the reply reports an error that must be fixed"}
METHODS = ("text", "score", "label", "grammar")


async def decide(llm, method: str, reply: str) -> tuple[str, bool]:
    """The state the model's decision leads to after ``reply``, and whether ``text`` fell back."""
    flow = Flow(name="route", initial="Reply", max_turns=2, states=[
        State("Reply", transitions=[llm_choice(list(STATES), fallback="Answer", method=method)]),  # type: ignore[arg-type]
        *(State(name, description=what, final=True) for name, what in STATES.items()),
    ])
    result = await flow.run(f"The assistant replied: {reply}", llm=llm, record_events=True)
    taken = next(e for e in result.events if isinstance(e, TransitionTaken))
    return taken.target, "fallback" in taken.reason


async def main(model: str) -> None:
    llm = open_model(model)
    print(f"{len(CASES)} cases, model {model}")
    print("| method | right | fallbacks | s |")
    print("|---|---|---|---|")
    for method in METHODS:
        started = time.perf_counter()
        right = fallbacks = 0
        for reply, expected in CASES:
            target, fell_back = await decide(llm, method, reply)
            right += target == expected
            fallbacks += fell_back
        shown = str(fallbacks) if method == "text" else "-"
        print(f"| {method} | {right} of {len(CASES)} | {shown} | {time.perf_counter() - started:.1f} |")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="smollm2")
    os.environ.setdefault("STATEBOUND_THREADS", "1")
    asyncio.run(main(parser.parse_args().model))
