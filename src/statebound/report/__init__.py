"""Reports over run stores: the papers' tables, breakdowns, paired statistics, plots, a self-contained
HTML page, one episode shown state by state (``show``) and the state of running runs (``status``).
Nothing here runs an episode: it reads what :mod:`statebound.bench` stored."""

from __future__ import annotations

import importlib
from typing import Any

__all__ = [
    "build_report",
    "load_runs",
    "mcnemar_exact",
    "paired_bootstrap",
    "print_report",
    "wilson_interval",
    "write_report",
]

_LAZY = {
    "build_report": "tables", "load_runs": "tables", "print_report": "tables", "write_report": "tables",
    "wilson_interval": "stats", "mcnemar_exact": "stats", "paired_bootstrap": "stats",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(f"statebound.report.{_LAZY[name]}"), name)
    raise AttributeError(f"module 'statebound.report' has no attribute {name!r}")
