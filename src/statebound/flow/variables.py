"""Flow variables: a run's typed state, beside its message history.

A flow may declare a type for what its run knows so far (``Flow(vars=Ticket)``): a frozen
dataclass or a pydantic model whose fields are JSON values (text, numbers, booleans, None, and
lists, tuples, dicts, dataclasses or models of them). The run starts from the type's defaults (or
an instance: ``Flow(vars=Ticket(queue="billing"))``, or ``flow.run(task, vars=...)``); output
functions write fields (``Pick(into="team")``, ``ToolResult(update={...})``, ``Update(fn)``), each
write a new value of the type; transitions read ``ctx.vars``.

Checkpoints store what changed (the changed fields' JSON, one small delta per step that changed
any), so the bytes per transition stay those of the change; resuming folds the deltas back into a
value of the type. What cannot round-trip is refused when the flow is built (a field whose type is
not JSON, named) or when it is written (the output function and the field named); a stored thread
whose variables no longer fit the type is refused on resume, saying what differs.
"""

from __future__ import annotations

import dataclasses
import dis
import json
import types
from collections.abc import Iterable, Mapping
from typing import Any, Literal, TypeVar, Union, get_args, get_origin, get_type_hints

from statebound.errors import DefinitionError

__all__ = ["VarsSpec", "VarsT", "fields_read", "written_by"]

VarsT = TypeVar("VarsT")  # a flow's variables type: Flow[VarsT], RunContext[VarsT], RunResult[VarsT]

_PLAIN = (str, int, float, bool, type(None))
_CONTAINERS = (list, tuple, dict, set, frozenset)


def _is_model(kind: Any) -> bool:
    """A pydantic model class (pydantic is a core dependency, imported only when asked)."""
    if not isinstance(kind, type):
        return False
    from pydantic import BaseModel

    return issubclass(kind, BaseModel)


def _field_types(kind: type) -> dict[str, Any]:
    if _is_model(kind):
        return {name: field.annotation for name, field in kind.model_fields.items()}  # type: ignore[attr-defined]
    hints = get_type_hints(kind)
    return {f.name: hints.get(f.name, Any) for f in dataclasses.fields(kind)}


def _json_problem(hint: Any) -> str | None:
    """Why a value of type ``hint`` would not survive a checkpoint (None: it would)."""
    if hint is Any or hint in _PLAIN:
        return None
    origin = get_origin(hint)
    if origin is Literal:
        return None if all(isinstance(a, _PLAIN) for a in get_args(hint)) else f"{hint} holds a value that is not JSON"
    if origin in (Union, types.UnionType) or origin in _CONTAINERS:
        if origin in (set, frozenset):
            return f"{hint} is a set (JSON has lists, and a set's order is not kept)"
        for arg in get_args(hint):
            if arg is not Ellipsis and (problem := _json_problem(arg)) is not None:
                return problem
        return None
    if isinstance(hint, type) and (dataclasses.is_dataclass(hint) or _is_model(hint)):
        for name, inner in _field_types(hint).items():
            if (problem := _json_problem(inner)) is not None:
                return f"{hint.__name__}.{name}: {problem}"
        return None
    return f"{getattr(hint, '__name__', hint)} is not a JSON value"


class VarsSpec:
    """What a flow declared as its variables: the type, its fields and the initial value."""

    __slots__ = ("fields", "initial", "kind")

    def __init__(self, declared: Any) -> None:
        kind = declared if isinstance(declared, type) else type(declared)
        if not (dataclasses.is_dataclass(kind) or _is_model(kind)):
            raise DefinitionError(
                f"Flow(vars=...) takes a frozen dataclass or a pydantic model (the class or an instance), "
                f"not {kind.__name__}")
        if dataclasses.is_dataclass(kind) and not kind.__dataclass_params__.frozen:  # type: ignore[attr-defined]
            raise DefinitionError(f"Flow(vars={kind.__name__}): make it @dataclass(frozen=True), so only the "
                                  "run's writes change it")
        self.kind: type = kind
        self.fields: dict[str, Any] = _field_types(kind)
        for name, hint in self.fields.items():
            if (problem := _json_problem(hint)) is not None:
                raise DefinitionError(f"Flow(vars={kind.__name__}): field {name!r} cannot be checkpointed: "
                                      f"{problem}; use JSON values (str, int, float, bool, None, lists, dicts)")
        if isinstance(declared, type):
            try:
                declared = kind()
            except (TypeError, ValueError) as error:
                raise DefinitionError(f"Flow(vars={kind.__name__}): it has fields without defaults ({error}); give "
                                      f"them defaults, or pass an instance: Flow(vars={kind.__name__}(...))") from None
        self.initial: Any = declared

    def __repr__(self) -> str:
        return f"VarsSpec({self.kind.__name__}, fields={list(self.fields)})"

    def check_writers(self, states: Iterable[Any]) -> None:
        """Refuse, when the flow is built, an output that names a field the type does not have
        (``Pick(into=)``, ``Update(writes=)``, ``CallTool(writes=)``)."""
        for state in states:
            for output in state.outputs:
                for name in written_by(output):
                    if name not in self.fields:
                        raise DefinitionError(
                            f"state {state.name!r}: {getattr(output, 'label', type(output).__name__)} writes "
                            f"{name!r}, which {self.kind.__name__} has no field for (fields: {', '.join(self.fields)})")

    def update(self, value: Any, changes: Mapping[str, Any], *, by: str) -> tuple[Any, dict[str, Any]]:
        """``value`` with ``changes`` written (by the output function ``by``), checked; and the
        written fields as JSON-ready data (what a checkpoint stores)."""
        unknown = [name for name in changes if name not in self.fields]
        if unknown:
            raise DefinitionError(f"{by} writes {unknown[0]!r}, which {self.kind.__name__} has no field for "
                                  f"(fields: {', '.join(self.fields)})")
        plain = {name: _plain(written) for name, written in changes.items()}
        for name, data in plain.items():
            try:
                json.dumps(data, allow_nan=False)
            except (TypeError, ValueError) as error:
                raise DefinitionError(f"{by} writes {name!r} = {changes[name]!r}, which cannot be checkpointed "
                                      f"({error})") from None
        if _is_model(self.kind):
            return self.kind.model_validate({**value.model_dump(), **changes}), plain  # type: ignore[attr-defined]
        return dataclasses.replace(value, **changes), plain

    def dump(self, value: Any) -> dict[str, Any]:
        """The value as JSON-ready fields."""
        return {name: _plain(getattr(value, name)) for name in self.fields}

    def load(self, stored: Mapping[str, Any]) -> Any:
        """A value of the type from stored fields; refused, saying what differs, when they do not fit."""
        missing = sorted(set(self.fields) - set(stored))
        extra = sorted(set(stored) - set(self.fields))
        if extra:
            raise DefinitionError(f"the stored variables do not fit {self.kind.__name__}: stored fields it does not "
                                  f"have: {', '.join(extra)}" + (f"; fields not stored: {', '.join(missing)}" if missing else ""))
        fields = {**self.dump(self.initial), **stored}
        try:
            if _is_model(self.kind):
                return self.kind.model_validate(fields)  # type: ignore[attr-defined]
            return self.kind(**{name: _typed(self.fields[name], fields[name]) for name in self.fields})
        except (TypeError, ValueError) as error:
            raise DefinitionError(f"the stored variables do not fit {self.kind.__name__}: {error}") from None


def written_by(output: Any) -> tuple[str, ...]:
    """The flow variables an output function declares it writes."""
    into = getattr(output, "into", None)
    return (*((into,) if isinstance(into, str) else ()), *getattr(output, "writes", ()))


def fields_read(fn: Any, *, depth: int = 0) -> set[str]:
    """The flow variables a condition reads (``<anything>.vars.<field>`` in its code, in the
    functions it closes over, and in nested functions), found in its bytecode."""
    code = getattr(fn, "__code__", None)
    if code is None or depth > 4:
        return set()
    found: set[str] = set()
    codes = [code]
    while codes:
        current = codes.pop()
        codes.extend(const for const in current.co_consts if isinstance(const, types.CodeType))
        previous = None
        for instruction in dis.get_instructions(current):
            if instruction.opname in ("LOAD_ATTR", "LOAD_METHOD") and previous == "vars":
                found.add(instruction.argval)
            previous = instruction.argval if instruction.opname in ("LOAD_ATTR", "LOAD_METHOD") else None
    for cell in getattr(fn, "__closure__", None) or ():
        inner = cell.cell_contents
        found |= fields_read(getattr(inner, "test", inner), depth=depth + 1)
    return found


def _plain(value: Any) -> Any:
    """A field's value as JSON-ready data (dataclasses and models as dicts, tuples as lists)."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if _is_model(type(value)):
        return value.model_dump(mode="json")
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value


def _typed(hint: Any, stored: Any) -> Any:
    """A stored field back in its declared shape (tuples, nested dataclasses)."""
    origin = get_origin(hint)
    if origin is tuple and isinstance(stored, list):
        return tuple(stored)
    if isinstance(hint, type) and dataclasses.is_dataclass(hint) and isinstance(stored, dict):
        inner = _field_types(hint)
        return hint(**{k: _typed(inner.get(k, Any), v) for k, v in stored.items()})
    if origin in (Union, types.UnionType):
        for arg in get_args(hint):
            if isinstance(arg, type) and dataclasses.is_dataclass(arg) and isinstance(stored, dict):
                return _typed(arg, stored)
    return stored

