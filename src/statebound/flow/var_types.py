"""What the build-time checks of sub-machines and merges know of flow-variable types: whether a
value of one declared type fits a field of another, and what a list field holds.

Only what the annotations show is compared (``str`` fits ``str | None``, ``list[str]`` fits
``list[str]``, anything fits ``Any``); a value that passes is still checked by its field's
conversion when it is written (:mod:`statebound.flow.variables`).
"""

from __future__ import annotations

import collections.abc
import types
from typing import Annotated, Any, Union, get_args, get_origin

__all__ = ["element_type", "fits", "members", "type_name"]

_SEQUENCES = (list, tuple, collections.abc.Sequence, collections.abc.MutableSequence)


def _bare(hint: Any) -> Any:
    """``hint`` without ``Annotated`` constraints."""
    return get_args(hint)[0] if get_origin(hint) is Annotated else hint


def members(hint: Any) -> tuple[Any, ...]:
    """The types of a union (``str | None`` -> ``(str, NoneType)``), or ``(hint,)``."""
    hint = _bare(hint)
    if get_origin(hint) in (Union, types.UnionType):
        return tuple(_bare(member) for member in get_args(hint))
    return (hint,)


def fits(source: Any, target: Any) -> bool:
    """Whether every value of type ``source`` is one of type ``target`` as far as the annotations
    show: the same type, a target of ``Any``, or each member of ``source`` a member of ``target``."""
    target_members = members(target)
    if Any in target_members:
        return True
    return all(member in target_members or (member is int and float in target_members)
               for member in members(source))


def element_type(hint: Any) -> Any | None:
    """What a list-like field holds (``list[str]`` -> ``str``, ``tuple[int, ...]`` -> ``int``,
    ``list`` -> ``Any``), or None when the field is not a list (``None`` in a union is ignored)."""
    found = [member for member in members(hint) if member is not type(None)]
    if len(found) != 1:
        return None
    kind, origin = found[0], get_origin(found[0])
    if kind in (list, tuple) or origin in _SEQUENCES:
        args = get_args(kind)
        if origin is tuple and not (len(args) == 2 and args[1] is Ellipsis):
            return None  # a fixed-length tuple is a record, not a list
        return args[0] if args else Any
    return None


def type_name(hint: Any) -> str:
    """``list[str]``, ``int | None``: a type as written, without its modules."""
    text = hint.__name__ if isinstance(hint, type) else str(hint)
    return text.replace("typing.", "")
