"""A faster ``__init__`` for frozen, slotted dataclasses built often (``Usage``, on every call and
every sum of calls).

``dataclass(frozen=True)`` sets each field with ``object.__setattr__`` looked up per field; the
``__init__`` made here sets them through the slots' own descriptors, bound once, with the same
signature (defaults, keyword-only fields, default factories) and ``__post_init__``. The records a
run builds on every step (requests, messages, history entries, events, call records) are
``msgspec`` structs instead, several times faster still (``benchmarks/flow_overhead.py``); this
serves a record that must stay a dataclass (``Usage`` is stored with ``dataclasses.asdict``)."""

from __future__ import annotations

import dataclasses
from typing import Any, TypeVar

__all__ = ["quick_init"]

C = TypeVar("C", bound=type)


def quick_init(cls: C) -> C:
    """Replace ``cls.__init__`` (a frozen, slotted dataclass without ``InitVar`` s) by one that
    sets its fields through their slot descriptors."""
    fields = sorted((f for f in dataclasses.fields(cls) if f.init), key=lambda f: bool(f.kw_only))  # as dataclasses orders them
    names: dict[str, Any] = {"MISSING": dataclasses.MISSING}
    params, sets = [], []
    keyword_only = False
    for index, field in enumerate(fields):
        names[f"set_{index}"] = cls.__dict__[field.name].__set__
        if field.kw_only and not keyword_only:
            params.append("*")
            keyword_only = True
        if field.default is not dataclasses.MISSING:
            names[f"default_{index}"] = field.default
            params.append(f"{field.name}=default_{index}")
            sets.append(f"set_{index}(self, {field.name})")
        elif field.default_factory is not dataclasses.MISSING:
            names[f"factory_{index}"] = field.default_factory
            params.append(f"{field.name}=MISSING")
            sets.append(f"set_{index}(self, factory_{index}() if {field.name} is MISSING else {field.name})")
        else:
            params.append(field.name)
            sets.append(f"set_{index}(self, {field.name})")
    if hasattr(cls, "__post_init__"):
        sets.append("self.__post_init__()")
    source = f"def __init__(self, {', '.join(params)}):\n    " + "\n    ".join(sets or ["pass"]) + "\n"
    exec(source, names)  # noqa: S102 - the source is made here from the class's own field names
    init = names["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    init.__doc__ = vars(cls)["__init__"].__doc__
    cls.__init__ = init  # type: ignore[misc]
    return cls
