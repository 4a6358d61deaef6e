"""Print what the scoped SQL machine's runs did with joins, by the shape of each task's gold query.

    .venv/bin/python benchmarks/sql_scoped_joins.py RUN_DIR [RUN_DIR ...]

RUN_DIR is a run directory made by ``statebound eval intercode-sql`` (its store, ``run.sqlite``), e.g.
``benchmarks/records/extensions/sql-scoped/stateflow-scoped``. For each agent found it prints
tasks and successes by gold shape (one table; two tables joined; three or more; nested;
``EXCEPT``/``INTERSECT``/``UNION``), then for the two-table gold joins how often the machine
joined at all, joined the gold pair of tables, and chose the gold key (compared by column names,
case aside), and how many of its joins were on tasks whose gold query has none.
"""

from __future__ import annotations

import argparse
import re
from collections import Counter
from pathlib import Path
from typing import Any

from statebound.bench.store import RunStore
from statebound.envs.sql import load_tasks

SHAPES = ("one table", "two tables", "three or more", "nested", "set operation")
_JOIN = re.compile(r"FROM\s+(\w+)(?:\s+AS\s+(\w+))?\s+JOIN\s+(\w+)(?:\s+AS\s+(\w+))?\s+ON\s+([\w.]+)\s*=\s*([\w.]+)",
                   re.IGNORECASE)


def shape(gold: str) -> str:
    text = gold.upper()
    if re.search(r"\b(?:EXCEPT|INTERSECT|UNION)\b", text):
        return "set operation"
    if text.count("SELECT") > 1:
        return "nested"
    joins = len(re.findall(r"\bJOIN\b", text))
    return ("one table", "two tables")[joins] if joins < 2 else "three or more"


def gold_join(gold: str) -> tuple[frozenset[str], frozenset[str]] | None:
    """The gold query's two tables and its key's two columns (lower case), or None."""
    match = _JOIN.search(gold)
    if match is None:
        return None
    first, first_alias, second, second_alias, left, right = match.groups()
    aliases = {(first_alias or first).lower(): first.lower(), (second_alias or second).lower(): second.lower()}

    def column(ref: str) -> str:
        table, _, name = ref.rpartition(".")
        return f"{aliases.get(table.lower(), table.lower())}.{name.lower()}"

    return frozenset({first.lower(), second.lower()}), frozenset({column(left), column(right)})


def joins_built(events: list[dict[str, Any]]) -> list[tuple[frozenset[str], frozenset[str]]]:
    """The (tables, key columns) of every key the episode chose, lower case."""
    built = []
    for event in events:
        choice = (event.get("data") or {}).get("choice") if isinstance(event.get("data"), dict) else None
        if not choice or choice["name"] != "key" or choice["picked"] is None:
            continue
        key = choice["candidates"][choice["picked"]].lower()
        left, right = (side.strip() for side in key.split("="))
        built.append((frozenset({left.split(".")[0], right.split(".")[0]}), frozenset({left, right})))
    return built


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("runs", nargs="+", type=Path)
    args = parser.parse_args()
    gold = {task.id: task.gold for task in load_tasks()}
    for run in args.runs:
        with RunStore(run, create=False, read_only=True) as store:
            episodes = list(store.iter_trajectories())
        for agent in sorted({episode.agent for episode in episodes}):
            tasks: Counter[str] = Counter()
            solved: Counter[str] = Counter()
            joined = pair = key = spurious = two_tables = 0
            for episode in (e for e in episodes if e.agent == agent):
                built = joins_built(episode.events)
                kind = shape(gold[episode.task])
                tasks[kind] += 1
                solved[kind] += episode.success
                if kind == "two tables" and (expected := gold_join(gold[episode.task])) is not None:
                    two_tables += 1
                    joined += bool(built)
                    pair += any(tables == expected[0] for tables, _ in built)
                    key += any(columns == expected[1] for _, columns in built)
                elif kind == "one table":
                    spurious += bool(built)
            print(f"{run} ({agent}): solved / tasks by gold shape")
            for kind in SHAPES:
                if tasks[kind]:
                    print(f"  {kind:14} {solved[kind]:3} / {tasks[kind]}")
            print(f"  two-table gold joins: {joined} joined, {pair} the gold tables, {key} on the gold key, "
                  f"of {two_tables}; joins on one-table tasks: {spurious} of {tasks['one table']}")


if __name__ == "__main__":
    main()
