"""JSON as the run store and the exports write it: UTF-8 text, sorted keys, dataclasses as
objects and anything else unknown as its ``str``."""

from __future__ import annotations

import json
from dataclasses import asdict, is_dataclass
from typing import Any

__all__ = ["dumps"]


def _fallback(value: Any) -> Any:
    if is_dataclass(value) and not isinstance(value, type):
        return asdict(value)
    return str(value)


def dumps(value: Any, *, indent: int | None = None) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True, indent=indent, default=_fallback)
