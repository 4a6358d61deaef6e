"""Print what limits the scoped Bash machine: how many gold commands its vocabulary can say, and
how its runs' choices compare with each task's gold command.

    .venv/bin/python benchmarks/bash_scoped_choices.py [RUN_DIR ...]

Without RUN_DIR it reads the record's ``benchmarks/records/extensions/bash-scoped/stateflow-scoped``
and ``stateflow-scoped-random``. It prints:

- reach: the gold commands every stage of which is a template of the leave-one-out vocabulary
  (``stage_template`` of each stage in ``bundled_vocabulary(leave_out=task)``), so that the
  machine could build them with the right choices and slot values; and with a find head composed
  a clause at a time (``stateflow-scoped-compose``: the head's clauses, in any order, at most
  ``MAX_CLAUSES``, all among the vocabulary's);
- for each run, from its store (``run.sqlite``): the episodes where the gold command's first
  stage was among the ``head`` candidates (compared as the shell splits them, quoting aside), and
  picked; where the gold program was among the ``program`` candidates, picked, and picked by
  chance in expectation (1/k per episode); the first ``more`` choice (does a ``|`` follow the
  head?) against the gold command's having one; and the first command run whose first stage is
  the gold command's (a find's clauses in any order).
"""

from __future__ import annotations

import argparse
import shlex
from pathlib import Path
from typing import Any

from statebound.agents.bash.scoped import MAX_CLAUSES, PIPE
from statebound.agents.bash.vocabulary import (
    PATH,
    bundled_vocabulary,
    find_clauses,
    program_of,
    split_pipeline,
    stage_template,
)
from statebound.bench.store import RunStore
from statebound.envs.bash.testbed import BashTask, load_tasks

RECORD = Path("benchmarks/records/extensions/bash-scoped")


def reachable(task: BashTask, *, compose: bool = False) -> bool:
    """Every stage of the gold command is a template of the vocabulary without this task
    (``compose``: a find head may also be clauses of the vocabulary's find heads)."""
    stages = split_pipeline(task.gold)
    if not stages:
        return False
    vocabulary = bundled_vocabulary(leave_out=task.id)
    for index, stage in enumerate(stages):
        template = stage_template(stage.strip(), task.query, head=index == 0)
        if template is None:
            return False
        if template in (vocabulary.pipes if index else vocabulary.heads):
            continue
        clauses = find_clauses(template) if compose and index == 0 else None
        if clauses is None or len(clauses) > MAX_CLAUSES or not set(clauses) <= set(vocabulary.clauses):
            return False
    return True


def same_stage(built: str, gold: str) -> bool:
    """Two stages alike as the shell splits them; two finds alike with their clauses in any order."""
    built_words, gold_words = words(built), words(gold)
    if built_words[:1] == gold_words[:1] == ("find",) and built_words[1:2] == gold_words[1:2]:
        def clauses(found: tuple[str, ...]) -> list[str]:
            return sorted(find_clauses(" ".join(("find", PATH, *(shlex.quote(w) for w in found[2:])))) or [])
        return clauses(built_words) == clauses(gold_words)
    return built_words == gold_words


def first_choice(events: list[dict[str, Any]], name: str) -> dict[str, Any] | None:
    for event in events:
        data = event.get("data")
        if isinstance(data, dict) and isinstance(data.get("choice"), dict) and data["choice"]["name"] == name:
            return data["choice"]
    return None


def picked(choice: dict[str, Any]) -> str | None:
    return None if choice["picked"] is None else str(choice["candidates"][choice["picked"]]).strip()


def words(command: str) -> tuple[str, ...]:
    """A command as the shell splits it, so that quoting aside ('*.php' or "*.php") it compares."""
    try:
        return tuple(shlex.split(command))
    except ValueError:
        return tuple(command.split())


def summarize(run: Path, tasks: dict[str, BashTask]) -> None:
    head_offered = head_picked = program_offered = program_picked = more_right = more_seen = first_built = 0
    program_chance = 0.0
    with RunStore(run, create=False, read_only=True) as store:
        episodes = list(store.iter_trajectories())
    for episode in episodes:
        task = tasks[episode.task]
        stages = split_pipeline(task.gold) or [task.gold]
        first = stages[0].strip()
        if (head := first_choice(episode.events, "head")) is not None:
            if words(first) in {words(str(c)) for c in head["candidates"]}:
                head_offered += 1
                head_picked += words(picked(head) or "") == words(first)
        if (program := first_choice(episode.events, "program")) is not None:
            candidates = [str(c).strip() for c in program["candidates"]]
            if first and program_of(first) in candidates:
                program_offered += 1
                program_picked += picked(program) == program_of(first)
                program_chance += 1 / len(candidates)
        ran = next((e["data"]["command"] for e in episode.events if isinstance(e.get("data"), dict)
                    and "command" in e["data"]), None)  # the Run tool's data names its command
        if ran is not None:
            first_built += same_stage((split_pipeline(ran) or [ran])[0], first)
        if (more := first_choice(episode.events, "more")) is not None and more["picked"] is not None:
            more_seen += 1
            more_right += (more["candidates"][more["picked"]] == PIPE) == (len(stages) > 1)
    print(f"{run} ({len(episodes)} episodes):")
    print(f"  gold first stage among the head candidates in {head_offered}, picked in {head_picked}")
    print(f"  gold program offered in {program_offered}, picked in {program_picked} "
          f"({program_chance:.0f} expected by chance)")
    print(f"  first 'more' choice right (a pipe follows or not, as in the gold) in {more_right} of {more_seen}")
    print(f"  first command run starts with the gold first stage in {first_built}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("runs", nargs="*", type=Path,
                        default=[RECORD / "stateflow-scoped", RECORD / "stateflow-scoped-random"])
    args = parser.parse_args()
    tasks = {task.id: task for task in load_tasks()}
    print(f"reach: {sum(reachable(t) for t in tasks.values())} of {len(tasks)} gold commands can be built "
          f"from the leave-one-out vocabulary, {sum(reachable(t, compose=True) for t in tasks.values())} with "
          "find heads composed a clause at a time")
    for run in args.runs:
        summarize(run, tasks)


if __name__ == "__main__":
    main()
