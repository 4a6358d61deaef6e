"""The report columns and breakdown orders the registered benchmarks declare
(:class:`~statebound.contract.columns.MetaColumn` s in their ``report_columns``, their
``breakdown_order``), looked up by name in the harness's registry.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable
from typing import Any

from statebound.bench.registry import benchmark_class, benchmark_names
from statebound.contract.columns import MetaColumn, merge_columns
from statebound.errors import DefinitionError

__all__ = ["breakdown_orders", "report_columns"]


def _declared(names: Iterable[str], attribute: str) -> list[tuple[str, Any]]:
    """``(name, value of attribute)`` of each registered benchmark among ``names``, once each.

    A benchmark that cannot be loaded is skipped with a warning: the report still renders."""
    found = []
    registered = set(benchmark_names())
    for name in dict.fromkeys(names):
        if name not in registered:  # a benchmark of another installation, or made by hand
            continue
        try:
            found.append((name, getattr(benchmark_class(name), attribute)))
        except DefinitionError as exc:
            warnings.warn(f"no {attribute} for {name}: {exc}", stacklevel=3)
    return found


def report_columns(names: Iterable[str]) -> tuple[MetaColumn, ...]:
    """The extra report columns of the benchmarks ``names`` (merged, each key once)."""
    found = []
    for name, columns in _declared(names, "report_columns"):
        if not all(isinstance(column, MetaColumn) for column in columns):
            raise DefinitionError(f"benchmark {name!r}: report_columns must be a tuple of MetaColumn")
        found.append(columns)
    return merge_columns(found)


def breakdown_orders(names: Iterable[str]) -> dict[str, tuple[str, ...]]:
    """The order in which the benchmarks ``names`` list the values of their breakdown keys
    (``hardness``: easy, medium, hard, extra); the first benchmark to declare a key wins."""
    orders: dict[str, tuple[str, ...]] = {}
    for _, declared in _declared(names, "breakdown_order"):
        for key, values in declared.items():
            orders.setdefault(key, tuple(values))
    return orders
