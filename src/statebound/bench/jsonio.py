"""JSON as the run store and the exports write it: UTF-8 text, sorted keys, dataclasses as
objects and anything else unknown as its ``str``.

:func:`dumps` is the standard library's (exact: NaN stays NaN); :func:`dumps_log` uses orjson,
several times faster, for the bulky trajectories and events of every stored episode (there a NaN,
which no trajectory should hold, would become ``null``)."""

from __future__ import annotations

import json
from dataclasses import asdict, is_dataclass
from typing import Any

import orjson

__all__ = ["dumps", "dumps_log"]

_LOG_OPTIONS = orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS


def _fallback(value: Any) -> Any:
    if is_dataclass(value) and not isinstance(value, type):
        return asdict(value)
    return str(value)


def dumps(value: Any, *, indent: int | None = None) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True, indent=indent, default=_fallback)


def dumps_log(value: Any) -> str:
    return orjson.dumps(value, default=str, option=_LOG_OPTIONS).decode()
