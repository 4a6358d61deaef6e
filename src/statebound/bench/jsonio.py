"""JSON as the run store and the exports write it: UTF-8 text, sorted keys, dataclasses and
records as objects and anything else unknown as its ``str``.

:func:`dumps` is the standard library's (exact: NaN stays NaN); :func:`dumps_log` uses orjson,
several times faster, for the bulky trajectories and events of every stored episode (there a NaN,
which no trajectory should hold, would become ``null``). A lone surrogate in a string, which no
UTF-8 text can hold, is stored as its escape (``\\ud800``), so what an episode did is kept."""

from __future__ import annotations

import json
import re
from dataclasses import asdict, is_dataclass
from typing import Any

import msgspec
import orjson

__all__ = ["dumps", "dumps_log", "escape_surrogates"]

_LOG_OPTIONS = orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS


def _fallback(value: Any) -> Any:
    if is_dataclass(value) and not isinstance(value, type):
        return asdict(value)
    if isinstance(value, msgspec.Struct):  # a request, message, history entry or event
        return msgspec.structs.asdict(value)
    return str(value)


_SURROGATE = re.compile("[\ud800-\udfff]")


def escape_surrogates(value: Any) -> Any:
    """``value`` with each lone surrogate in its strings (text no UTF-8 file can hold, such as a
    ``"\\ud800"`` escape in a server's JSON) written out as that escape."""
    if isinstance(value, str):
        return _SURROGATE.sub(lambda m: f"\\u{ord(m[0]):04x}", value)
    if isinstance(value, dict):
        return {escape_surrogates(key): escape_surrogates(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [escape_surrogates(item) for item in value]
    return value


def dumps(value: Any, *, indent: int | None = None) -> str:
    text = json.dumps(value, ensure_ascii=False, sort_keys=True, indent=indent, default=_fallback)
    if _SURROGATE.search(text) is None:
        return text
    return json.dumps(escape_surrogates(value), ensure_ascii=False, sort_keys=True, indent=indent, default=_fallback)


def dumps_log(value: Any) -> str:
    try:
        return orjson.dumps(value, default=_fallback, option=_LOG_OPTIONS).decode()
    except TypeError:  # a lone surrogate (anything else falls back to its str)
        return orjson.dumps(escape_surrogates(value), default=_fallback, option=_LOG_OPTIONS).decode()
