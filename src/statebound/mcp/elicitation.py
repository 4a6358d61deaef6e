"""A server's elicitation (a question for the user during a tool call) as the flow's pause for a
person, and the person's answer as the elicitation's result.

The answer is text, as every pause's is: ``decline`` or ``cancel``; for a form, a JSON object of
its fields, or, when the form has one field, just the value; for a URL, ``accept`` once it was
visited. Fields left out take the defaults the form gives (SEP-1034); a value is checked against
the field's type and choices.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import mcp_types as types

__all__ = ["answer", "question"]

_TYPES = {"string": "a string", "integer": "an integer", "number": "a number", "boolean": "true or false"}


def question(params: types.ElicitRequestParams) -> str:
    """What the server asks, and how to answer, as one pending question."""
    if params.mode == "url":
        return (f"{params.message} Open {params.url}, then answer 'accept' when done (or 'decline', "  # type: ignore[union-attr]
                "'cancel').")
    fields = _fields(params)
    if len(fields) == 1:
        name, field = next(iter(fields.items()))
        return f"{params.message} (answer with {name}: {_describe(field)}; or 'decline', 'cancel')"
    listed = "; ".join(f"{name}: {_describe(field)}" for name, field in fields.items())
    return f"{params.message} (answer with a JSON object of {listed}; or 'decline', 'cancel')"


def answer(params: types.ElicitRequestParams, reply: str) -> types.ElicitResult | str:
    """The elicitation's result for a person's ``reply``, or what is wrong with the reply."""
    import mcp_types as types

    text = reply.strip()
    if text.lower() in ("decline", "cancel"):
        return types.ElicitResult(action=text.lower())  # type: ignore[arg-type]
    if params.mode == "url":
        if text.lower() != "accept":
            return "answer 'accept', 'decline' or 'cancel'"
        return types.ElicitResult(action="accept")
    fields = _fields(params)
    try:
        given = json.loads(text)
    except json.JSONDecodeError:
        given = None
    if not isinstance(given, dict):
        if len(fields) != 1:
            return f"answer with a JSON object of the fields {', '.join(fields)}"
        given = {next(iter(fields)): text}
    content: dict[str, Any] = {name: field["default"] for name, field in fields.items() if "default" in field}
    for name, value in given.items():
        if name not in fields:
            return f"there is no field {name!r}; the fields are {', '.join(fields)}"
        checked = _value(value, fields[name])
        if isinstance(checked, _Misfit):
            return f"{name}: {checked.reason}"
        content[name] = checked
    required = params.requested_schema.get("required") or []  # type: ignore[union-attr]
    if missing := [name for name in required if name not in content]:
        return f"give {', '.join(missing)}"
    return types.ElicitResult(action="accept", content=content)


class _Misfit:
    def __init__(self, reason: str) -> None:
        self.reason = reason


def _fields(params: types.ElicitRequestParams) -> dict[str, dict[str, Any]]:
    schema = params.requested_schema  # type: ignore[union-attr]
    return dict(schema.get("properties") or {})


def _choices(field: dict[str, Any]) -> list[Any]:
    """The values a field (or, for a list, each of its items) may take (none: any of its type)."""
    return list(field.get("enum") or [option.get("const") for option in field.get("oneOf", field.get("anyOf", ()))
                                      if "const" in option])


def _describe(field: dict[str, Any]) -> str:
    choices = _choices(field)
    if field.get("type") == "array":
        items = _choices(field.get("items") or {})
        kind = f"a list of {', '.join(map(str, items))}" if items else "a list of strings"
    else:
        kind = f"one of {', '.join(map(str, choices))}" if choices else _TYPES.get(field.get("type", ""), "a value")
    default = f", default {json.dumps(field['default'])}" if "default" in field else ""
    return f"{kind}{default}"


def _value(value: Any, field: dict[str, Any]) -> Any:
    """``value`` as the field takes it (a text read as its type), or why it does not fit."""
    kind = field.get("type")
    if isinstance(value, str) and kind in ("integer", "number", "boolean"):
        try:
            value = json.loads(value.lower() if kind == "boolean" else value)
        except json.JSONDecodeError:
            return _Misfit(f"{value!r} is not {_TYPES[kind]}")
    fits = {"string": isinstance(value, str), "boolean": isinstance(value, bool),
            "integer": isinstance(value, int) and not isinstance(value, bool),
            "number": isinstance(value, int | float) and not isinstance(value, bool),
            "array": isinstance(value, list)}.get(kind or "", True)
    if not fits:
        return _Misfit(f"{value!r} is not {_TYPES.get(kind or '', kind)}")
    choices = _choices(field)
    if choices and value not in choices:
        return _Misfit(f"{value!r} is not one of {', '.join(map(str, choices))}")
    items = _choices(field.get("items") or {}) if kind == "array" else []
    if items and (wrong := [item for item in value if item not in items]):
        return _Misfit(f"{wrong[0]!r} is not one of {', '.join(map(str, items))}")
    return value
