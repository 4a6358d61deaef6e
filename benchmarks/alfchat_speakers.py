"""How often ALFChat's model-made speaker choices name no role, from stored runs.

    .venv/bin/python benchmarks/alfchat_speakers.py RUN_DIR [RUN_DIR ...]

For each run of ``alfchat-3agents`` made with ``-O speaker=`` other than ``rules``: the speaker
choices the model made after an executor turn (``SpeakerSelected`` events of kind ``auto``, and
``fallback`` where a free answer named no role), how many fell back, the roles chosen, and the
games won. Made for issue #40's before-and-after (``speaker=text``, AutoGen's free answer, against
``speaker=auto``, the best chooser the model can run):

    statebound eval alfworld -a alfchat-3agents -m smollm2 -O speaker=text --limit 20 --max-turns 10 --out DIR
"""

from __future__ import annotations

import argparse
from collections import Counter
from pathlib import Path

from statebound.bench.store import RunStore


def summarize(run_dir: Path) -> str:
    with RunStore(run_dir, create=False, read_only=True) as store:
        config = store.config
        results = [r for r in store.results(with_trajectories=True) if r.agent == "alfchat-3agents"]
    picks = [e for r in results for e in r.events
             if e.get("kind") == "speaker_selected" and e.get("how") in ("auto", "fallback")]
    fell_back = sum(e["how"] == "fallback" for e in picks)
    roles = Counter(e["role"] for e in picks)
    speaker = (config.benchmark_options.get("speaker") if config is not None else None) or "?"
    rate = f"{100 * fell_back / len(picks):.1f} %" if picks else "-"
    return (f"{run_dir}: speaker={speaker}, {len(results)} games, {sum(r.success for r in results)} won; "
            f"{len(picks)} speaker choices by the model, {fell_back} named no role ({rate}); "
            f"chosen: {dict(roles)}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", nargs="+", type=Path)
    for run in parser.parse_args().runs:
        print(summarize(run))
