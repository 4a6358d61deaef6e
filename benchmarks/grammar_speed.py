"""Print greedy decoding speed of the embedded model without a grammar, with llama-cpp-python's
grammar sampling (the grammar applied to the whole vocabulary at every token) and with
statebound's lazy grammar check (only the model's first choice, unless the grammar refuses it).

    .venv/bin/python benchmarks/grammar_speed.py [--tokens 120] [--repeat 3]

Every generation starts from an empty KV cache and runs on one thread; the script also checks that
the two grammar samplers wrote the same text. Figures depend on how busy the cores are.
"""

from __future__ import annotations

import argparse
import statistics
import time
from contextlib import nullcontext

from llama_cpp import Llama, LlamaGrammar

from statebound.agents.response_format import thought_action_grammar
from statebound.llm.lazy_grammar import lazy_grammar_sampling
from statebound.llm.model_files import smollm2_path

PROMPTS = (
    "List the tables of the database about concerts and singers, then count the singers.",
    "How many files in /testbed are larger than 1 kB? Use find.",
    "Count the heads of departments older than 56.",
)


def generate(llama: Llama, prompt: str, grammar: str | None, lazy: bool, tokens: int) -> tuple[str, int, float]:
    llama.reset()
    parsed = LlamaGrammar.from_string(grammar, verbose=False) if grammar else None
    messages = [{"role": "user", "content": prompt}]
    with lazy_grammar_sampling(llama) if lazy else nullcontext():
        started = time.perf_counter()
        reply = llama.create_chat_completion(messages=messages, max_tokens=tokens, temperature=0, grammar=parsed)
        elapsed = time.perf_counter() - started
    return reply["choices"][0]["message"]["content"], reply["usage"]["completion_tokens"], elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokens", type=int, default=120)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    llama = Llama(model_path=str(smollm2_path()), n_ctx=2048, n_threads=1, verbose=False)
    grammar = thought_action_grammar()
    variants = {"no grammar": (None, False), "grammar, full": (grammar, False), "grammar, lazy": (grammar, True)}
    speeds: dict[str, list[float]] = {name: [] for name in variants}
    texts: dict[str, list[str]] = {name: [] for name in variants}
    for _ in range(args.repeat):
        for prompt in PROMPTS:
            for name, (text_grammar, lazy) in variants.items():
                text, generated, elapsed = generate(llama, prompt, text_grammar, lazy, args.tokens)
                speeds[name].append(generated / elapsed)
                texts[name].append(text)
    for name, values in speeds.items():
        print(f"{name:14} median {statistics.median(values):5.1f} tok/s (incl. the prompt; {len(values)} runs)")
    same = sum(a == b for a, b in zip(texts["grammar, full"], texts["grammar, lazy"]))
    print(f"lazy and full grammar sampling wrote the same text in {same} of {len(texts['grammar, lazy'])} runs")
    llama.close()


if __name__ == "__main__":
    main()
