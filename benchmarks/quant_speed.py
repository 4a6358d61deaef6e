"""Prompt-processing and generation speed of the embedded SmolLM2 in other quantizations.

The bundled file is Q4_1. llama.cpp re-quantizes it here (into a temporary directory) to the types
asked for, then each file is timed on the same 400-token prompt and 32 greedy tokens, one thread,
in rounds (the best round is printed, since other jobs on a shared machine slow single rounds).

    .venv/bin/python benchmarks/quant_speed.py [--types q4_0 q8_0 f16] [--rounds 3] [--threads 1]

Re-quantizing from Q4_1 to Q8_0 or F16 loses next to nothing (every Q4_1 weight is representable
almost exactly); Q4_0 is a second lossy rounding. Whether a faster type changes the agents'
behaviour is for a benchmark record to show, not this script.
"""

from __future__ import annotations

import argparse
import ctypes
import tempfile
import time
from pathlib import Path

import llama_cpp

from statebound.llm.model_files import smollm2_path

TYPES = {"q4_0": llama_cpp.LLAMA_FTYPE_MOSTLY_Q4_0, "q8_0": llama_cpp.LLAMA_FTYPE_MOSTLY_Q8_0,
         "f16": llama_cpp.LLAMA_FTYPE_MOSTLY_F16}


def requantize(source: Path, kind: str, out_dir: Path) -> Path:
    target = out_dir / f"smollm2-{kind}.gguf"
    params = llama_cpp.llama_model_quantize_default_params()
    params.ftype, params.allow_requantize, params.nthread = TYPES[kind], True, 1
    if llama_cpp.llama_model_quantize(str(source).encode(), str(target).encode(), ctypes.byref(params)) != 0:
        raise SystemExit(f"llama.cpp could not quantize {source} to {kind}")
    return target


def speeds(model: llama_cpp.Llama) -> tuple[float, float]:
    """(prompt tokens/s, generated tokens/s)."""
    tokens = model.tokenize(("The quick brown fox jumps over the lazy dog. " * 60).encode())[:400]
    model.reset()
    started = time.perf_counter()
    model.eval(tokens)
    prompt = len(tokens) / (time.perf_counter() - started)
    model.reset()
    started = time.perf_counter()
    reply = model.create_completion("Once upon a time", max_tokens=32, temperature=0)
    generated = reply["usage"]["completion_tokens"] / (time.perf_counter() - started)
    return prompt, generated


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--types", nargs="+", choices=sorted(TYPES), default=["q4_0", "q8_0", "f16"])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    source = smollm2_path()
    with tempfile.TemporaryDirectory() as tmp:
        files = {"q4_1 (bundled)": source} | {kind: requantize(source, kind, Path(tmp)) for kind in args.types}
        models = {name: llama_cpp.Llama(str(path), n_ctx=2048, n_threads=args.threads, verbose=False)
                  for name, path in files.items()}
        best: dict[str, tuple[float, float]] = {}
        for _ in range(args.rounds):
            for name, model in models.items():
                prompt, generated = speeds(model)
                old = best.get(name, (0.0, 0.0))
                best[name] = (max(old[0], prompt), max(old[1], generated))
        base_prompt, base_generated = best["q4_1 (bundled)"]
        print(f"{'type':16} {'size MB':>8} {'prompt tok/s':>12} {'x':>5} {'gen tok/s':>9} {'x':>5}")
        for name, (prompt, generated) in best.items():
            size = files[name].stat().st_size / 1e6
            print(f"{name:16} {size:8.0f} {prompt:12.0f} {prompt / base_prompt:5.2f} "
                  f"{generated:9.1f} {generated / base_generated:5.2f}")


if __name__ == "__main__":
    main()
