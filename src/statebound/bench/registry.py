"""Benchmark names -> lazy factories, so ``statebound eval NAME`` imports only what it runs.

Each entry is ``"package.module:factory"``; the factory takes keyword options (the CLI's
``--option key=value`` pairs and a few common flags) and returns a
:class:`~statebound.bench.types.Benchmark`. Add your benchmark with one line in ``BENCHMARKS``.

``REPORT_COLUMNS`` names, per benchmark, a tuple of
:class:`~statebound.bench.columns.MetaColumn` that reports add after the generic columns; it is
read by benchmark name alone (``statebound report`` never builds the benchmark).
"""

from __future__ import annotations

import importlib
import warnings
from collections.abc import Iterable
from typing import Any

from statebound.bench.columns import MetaColumn, merge_columns
from statebound.bench.types import Benchmark
from statebound.errors import DefinitionError

__all__ = ["BENCHMARKS", "REPORT_COLUMNS", "load_benchmark", "report_columns", "resolve_factory"]

BENCHMARKS: dict[str, str] = {
    "toy": "statebound.bench.toy:ToyBenchmark",
    "intercode-sql": "statebound.agents.sql.benchmark:make_benchmark",
    "intercode-bash": "statebound.agents.bash.benchmark:make_benchmark",
    "gsm8k": "statebound.agents.qa.benchmark:make_gsm8k",
    "hotpotqa": "statebound.agents.qa.benchmark:make_hotpotqa",
    "alfworld": "statebound.agents.alfworld.benchmark:make_benchmark",
}

REPORT_COLUMNS: dict[str, str] = {
    "gsm8k": "statebound.agents.qa.benchmark:GSM8K_COLUMNS",
    "hotpotqa": "statebound.agents.qa.benchmark:HOTPOTQA_COLUMNS",
    "alfworld": "statebound.agents.alfworld.benchmark:REPORT_COLUMNS",
}


def resolve_factory(path: str) -> Any:
    """Import ``"package.module:attribute"`` (dots after the colon walk attributes)."""
    module_name, sep, attribute = path.partition(":")
    if not sep or not module_name or not attribute:
        raise DefinitionError(f"{path!r} is not an import path; write it as 'package.module:name'")
    try:
        target: Any = importlib.import_module(module_name)
    except ImportError as exc:
        raise DefinitionError(f"cannot import {module_name!r} (from {path!r}): {exc}") from exc
    for part in attribute.split("."):
        try:
            target = getattr(target, part)
        except AttributeError:
            raise DefinitionError(f"{module_name!r} has no attribute {attribute!r} (from {path!r})") from None
    return target


def load_benchmark(name: str, **options: Any) -> Benchmark:
    """Build the benchmark registered as ``name`` (or given directly as ``module:factory``)."""
    path = BENCHMARKS.get(name) or (name if ":" in name else None)
    if path is None:
        known = ", ".join(sorted(BENCHMARKS))
        raise DefinitionError(f"unknown benchmark {name!r}; known: {known} (or give 'module:factory')")
    benchmark = resolve_factory(path)(**options)
    if not isinstance(benchmark, Benchmark):
        raise DefinitionError(f"{path!r} returned {type(benchmark).__name__}, not a Benchmark")
    return benchmark


def report_columns(names: Iterable[str]) -> tuple[MetaColumn, ...]:
    """The extra report columns of the benchmarks ``names`` (merged, each key once).

    A declaration that cannot be imported is skipped with a warning: the report still renders."""
    found = []
    for name in dict.fromkeys(names):
        path = REPORT_COLUMNS.get(name)
        if path is None:
            continue
        try:
            columns = resolve_factory(path)
        except DefinitionError as exc:
            warnings.warn(f"no extra report columns for {name}: {exc}", stacklevel=2)
            continue
        if not all(isinstance(column, MetaColumn) for column in columns):
            raise DefinitionError(f"{path!r} must be a tuple of MetaColumn")
        found.append(columns)
    return merge_columns(found)
