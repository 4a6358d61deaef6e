"""Flow variables: a run's typed state, beside its message history.

A flow may declare a type for what its run knows so far (``Flow(vars=Ticket)``): a frozen
dataclass or a pydantic model. Its fields may be of any type that round-trips through JSON:
text, numbers, booleans, None, enums, ``Literal``, dates and times, pydantic models, dataclasses,
and lists, tuples, dicts, sets and frozensets of them, optional or in unions. The run starts from
the type's defaults (or an instance: ``Flow(vars=Ticket(queue="billing"))``, or
``flow.run(task, vars=...)``); output functions write fields (``Pick(into="team")``,
``ToolResult(update={...})``, ``Update(fn)``), each write a new value of the type; transitions
read ``ctx.vars``.

Each field has one conversion, a pydantic ``TypeAdapter`` of its annotation: a written value is
checked against it, stored as the JSON it dumps to, and read back through it in strict mode, so
what a run sees after a write is exactly what a resumed run, a fork or a stored result sees (a
``dict`` written to a dataclass field becomes that dataclass at once, not only after a resume).
Checkpoints store what changed (the changed fields' JSON, one small delta per step that changed
any). What cannot round-trip is refused when the flow is built (a field whose type has no JSON
form, named) or when it is written (the output function and the field named); a stored thread
whose variables no longer fit the type is refused on resume, naming the field, never coerced.
"""

from __future__ import annotations

import dataclasses
import dis
import functools
import re
import types
from collections.abc import Iterable, Mapping, Sequence
from typing import Annotated, Any, Protocol, TypeVar, get_type_hints

from statebound.errors import DefinitionError
from statebound.flow.json_data import json_problem

__all__ = ["StateParts", "VarsSpec", "VarsT", "fields_read"]

VarsT = TypeVar("VarsT")  # a flow's variables type: Flow[VarsT], RunContext[VarsT], RunResult[VarsT]


class Writer(Protocol):
    """What the variables' checks read of an output function: its name and what it writes."""

    @property
    def label(self) -> str: ...

    @property
    def writes(self) -> Sequence[str]: ...


class StateParts(Protocol):
    """What the variables' checks read of a state: its name and its output functions."""

    @property
    def name(self) -> str: ...

    @property
    def outputs(self) -> Sequence[Writer]: ...


def _hint(name: str, known: Iterable[str]) -> str:
    import difflib

    close = difflib.get_close_matches(name, list(known), n=1)
    return f"; did you mean {close[0]!r}?" if close else ""


def _is_model(kind: Any) -> bool:
    """A pydantic model class (pydantic is a core dependency, imported only when asked)."""
    if not isinstance(kind, type):
        return False
    from pydantic import BaseModel

    return issubclass(kind, BaseModel)


def _field_types(kind: type) -> dict[str, Any]:
    """Each field's annotation, with its constraints (``Annotated``, ``Field(ge=0)``) kept."""
    if _is_model(kind):
        fields = kind.model_fields  # type: ignore[attr-defined]
        return {name: Annotated[(field.annotation, *field.metadata)] if field.metadata else field.annotation
                for name, field in fields.items()}
    try:
        hints = get_type_hints(kind, include_extras=True)
    except NameError as error:  # a string annotation naming a type local to a function
        raise DefinitionError(f"Flow(vars={kind.__name__}): its field types cannot be resolved ({error}); define "
                              "the types they name at module level") from None
    return {f.name: hints.get(f.name, Any) for f in dataclasses.fields(kind)}


def _type_name(hint: Any) -> str:
    """``Report | None``, ``list[Item]``: a type as written, without its modules."""
    return hint.__name__ if isinstance(hint, type) else re.sub(r"\b(?:\w+\.)+(\w+)", r"\1", str(hint))


@functools.cache
def _adapters(kind: type) -> dict[str, Any]:
    """One ``TypeAdapter`` per field of ``kind`` (made once per type), or a DefinitionError
    naming the first field whose type has no JSON form."""
    from pydantic import PydanticSchemaGenerationError, TypeAdapter
    from pydantic.errors import PydanticInvalidForJsonSchema

    adapters = {}
    for name, hint in _field_types(kind).items():
        problem = None
        if hint is object:
            problem = "object says nothing of its JSON form (use Any for any JSON value)"
        else:
            try:
                adapters[name] = TypeAdapter(hint)
                adapters[name].json_schema()
            except (PydanticSchemaGenerationError, PydanticInvalidForJsonSchema, TypeError) as error:
                problem = f"{_type_name(hint)} has no JSON form ({str(error).splitlines()[0].split('. ')[0]})"
        if problem is not None:
            raise DefinitionError(f"Flow(vars={kind.__name__}): field {name!r} cannot be checkpointed: {problem}; "
                                  "use JSON values, enums, dates, dataclasses or pydantic models, and lists, "
                                  "tuples, dicts or sets of them")
    return adapters


@functools.cache
def _schema(kind: type) -> dict[str, Any]:
    from pydantic import TypeAdapter

    return TypeAdapter(kind).json_schema(mode="serialization")


class VarsSpec:
    """What a flow declared as its variables: the type, its fields (and their conversions) and
    the initial value."""

    __slots__ = ("adapters", "fields", "initial", "initial_data", "kind")

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
        self.adapters: dict[str, Any] = _adapters(kind)
        if isinstance(declared, type):
            try:
                declared = kind()
            except (TypeError, ValueError) as error:
                raise DefinitionError(f"Flow(vars={kind.__name__}): it has fields without defaults ({error}); give "
                                      f"them defaults, or pass an instance: Flow(vars={kind.__name__}(...))") from None
        by = f"Flow(vars={kind.__name__})"
        converted = {name: self._convert(name, getattr(declared, name), by=by) for name in self.fields}
        self.initial: Any = self._build({name: typed for name, (typed, _) in converted.items()}, by=by)
        self.initial_data: dict[str, Any] = {name: data for name, (_, data) in converted.items()}

    def __repr__(self) -> str:
        return f"VarsSpec({self.kind.__name__}, fields={list(self.fields)})"

    def expected(self, name: str) -> str:
        """The declared type of field ``name``, for messages."""
        return _type_name(self.fields[name])

    def check_writers(self, states: Iterable[StateParts]) -> None:
        """Refuse, when the flow is built, an output that declares a field the type does not have
        (``Pick(into=)``, ``Update(writes=)``, ``CallTool(writes=)``, a model-called tool's writes)."""
        for state in states:
            for output in state.outputs:
                for name in output.writes:
                    if name not in self.fields:
                        raise DefinitionError(
                            f"state {state.name!r}: {output.label} writes {name!r}, which {self.kind.__name__} has "
                            f"no field for (fields: {', '.join(self.fields)}){_hint(name, self.fields)}")

    def start(self, value: Any, *, by: str) -> tuple[Any, dict[str, Any]]:
        """A run's starting variables from ``value`` (an instance of the type, or a mapping of some
        of its fields, the others keeping their defaults), checked as writes are; and their data."""
        if isinstance(value, self.kind):
            given = {name: getattr(value, name) for name in self.fields}
        elif isinstance(value, Mapping):
            self._refuse_unknown(value, by=by)
            given = {**{name: getattr(self.initial, name) for name in self.fields}, **value}
        else:
            raise DefinitionError(f"{by}: give a {self.kind.__name__} or a mapping of its fields, "
                                  f"not {type(value).__name__}")
        converted = {name: self._convert(name, written, by=by) for name, written in given.items()}
        typed = self._build({name: pair[0] for name, pair in converted.items()}, by=by)
        return typed, {name: pair[1] for name, pair in converted.items()}

    def update(self, value: Any, changes: Mapping[str, Any], *, by: str) -> tuple[Any, dict[str, Any]]:
        """``value`` with ``changes`` written (by the output function ``by``), each converted to
        its field's type as a resumed run would read it; and the written fields as JSON-ready data
        (what a checkpoint stores)."""
        self._refuse_unknown(changes, by=by)
        converted = {name: self._convert(name, written, by=by) for name, written in changes.items()}
        typed = {name: pair[0] for name, pair in converted.items()}
        current = {name: getattr(value, name) for name in self.fields}
        return self._build({**current, **typed}, by=by), {name: pair[1] for name, pair in converted.items()}

    def dump(self, value: Any) -> dict[str, Any]:
        """The value as JSON-ready fields."""
        return {name: self.adapters[name].dump_python(getattr(value, name), mode="json") for name in self.fields}

    def load(self, stored: Mapping[str, Any]) -> Any:
        """A value of the type from stored fields, each read strictly by its field's type; refused,
        naming the field and what it expects, when they do not fit (never coerced)."""
        missing = sorted(set(self.fields) - set(stored))
        extra = sorted(set(stored) - set(self.fields))
        if extra:
            raise DefinitionError(f"the stored variables do not fit {self.kind.__name__}: stored fields it does not "
                                  f"have: {', '.join(extra)}" + (f"; fields not stored: {', '.join(missing)}" if missing else ""))
        fields = {**self.initial_data, **stored}
        typed = {}
        for name in self.fields:
            problem, typed[name] = self._read(name, fields[name])
            if problem is not None:
                raise DefinitionError(f"the stored variables do not fit {self.kind.__name__}: field {name!r} "
                                      f"(expected {self.expected(name)}): {problem}")
        return self._build(typed, by=f"the stored {self.kind.__name__}")

    def check_data(self, name: str, data: Any) -> str | None:
        """Why JSON ``data`` is not a value of field ``name`` (None: it is), as on resume."""
        return self._read(name, data)[0]

    def schema(self) -> dict[str, Any]:
        """The JSON schema of the stored fields (what a fork's ``--set`` is checked against)."""
        return _schema(self.kind)

    def data(self, changes: Mapping[str, Any], *, by: str) -> dict[str, Any]:
        """``changes`` (field -> value of its type) as the JSON a checkpoint stores, each checked
        as a write is (``by`` names who asks, for errors)."""
        self._refuse_unknown(changes, by=by)
        return {name: self._convert(name, value, by=by)[1] for name, value in changes.items()}

    # ---- conversions ------------------------------------------------------------------------
    def _refuse_unknown(self, changes: Mapping[str, Any], *, by: str) -> None:
        unknown = [name for name in changes if name not in self.fields]
        if unknown:
            raise DefinitionError(f"{by} writes {unknown[0]!r}, which {self.kind.__name__} has no field for "
                                  f"(fields: {', '.join(self.fields)})")

    def _read(self, name: str, data: Any) -> tuple[str | None, Any]:
        """Field ``name`` read strictly from its JSON ``data``: (why not, None) or (None, value)."""
        import orjson
        from pydantic import ValidationError

        try:
            return None, self.adapters[name].validate_json(orjson.dumps(data), strict=True)
        except ValidationError as error:
            return _first_problem(error), None
        except orjson.JSONEncodeError as error:
            return str(error), None

    def _convert(self, name: str, written: Any, *, by: str) -> tuple[Any, Any]:
        """``written`` as field ``name``'s type, read back from its JSON (what a resumed run
        sees), and that JSON: refused, naming ``by`` and the field, when it does not round-trip."""
        import orjson
        from pydantic import ValidationError
        from pydantic_core import PydanticSerializationError

        adapter = self.adapters[name]
        try:
            data = orjson.loads(adapter.dump_json(adapter.validate_python(written)))
        except ValidationError as error:
            raise DefinitionError(f"{by} writes {name!r} = {_short(written)}, which is not a {self.expected(name)}: "
                                  f"{_first_problem(error)}") from None
        except (PydanticSerializationError, orjson.JSONDecodeError) as error:
            raise DefinitionError(f"{by} writes {name!r} = {_short(written)}, which cannot be checkpointed "
                                  f"({str(error).splitlines()[0]})") from None
        problem = json_problem(data, name)
        if problem is None:
            problem, typed = self._read(name, data)
        if problem is not None:
            raise DefinitionError(f"{by} writes {name!r} = {_short(written)}, which does not come back from a "
                                  f"checkpoint as it went in ({problem})")
        return typed, data

    def _build(self, fields: Mapping[str, Any], *, by: str) -> Any:
        try:
            if _is_model(self.kind):
                return self.kind.model_validate(dict(fields))  # type: ignore[attr-defined]
            return self.kind(**fields)
        except (TypeError, ValueError) as error:  # a model's own validators
            raise DefinitionError(f"{by}: the variables do not fit {self.kind.__name__}: "
                                  f"{str(error).splitlines()[0]}") from None


def _first_problem(error: Any) -> str:
    """A pydantic ValidationError's first problem, where it is and what it says."""
    first = error.errors()[0]
    where = "/".join(str(part) for part in first["loc"])
    return f"{where + ': ' if where else ''}{first['msg']}"


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else f"{text[:77]}..."


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


