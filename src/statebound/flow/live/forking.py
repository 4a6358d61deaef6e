"""A fork's first checkpoint: the history entry it rewrites and the flow variables it sets,
checked against the thread it forks, so the forked run goes on from a state that holds together.

* ``sets`` (field -> JSON value) are checked against the variables the thread stored: a field the
  type lacks, or a value its stored JSON schema refuses, is refused naming the field and what it
  takes, before anything is written.
* An ``edit`` of an entry that wrote nothing is a new text. An edit of an entry that wrote a flow
  variable or a choice is re-derived: a ``Pick``'s reply must be one of its candidates (the record
  then picks it, and a variable the pick was written ``into`` takes it), a structured reply
  (``CallLLM(schema=, into=)``) must be JSON (its record and variable take the new value); a
  reply whose tool calls ran cannot be edited. Variables written after the edited entry may
  depend on its old text: the edit is refused unless ``sets`` gives each of them, or the fork is
  made right after the entry, so the run derives them again.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import orjson

from statebound.errors import CheckpointError
from statebound.flow.live.codec import decode, encode
from statebound.flow.live.fold import added_entries, fold
from statebound.flow.live.records import StoredCheckpoint

__all__ = ["fork_body", "parse_sets"]

_HOW = "set the variables with --set FIELD=JSON (vars= in Python)"


def parse_sets(pairs: Sequence[str]) -> dict[str, Any]:
    """``FIELD=JSON`` pairs (``--set``) as a mapping; a bare text that is not JSON is a string."""
    sets: dict[str, Any] = {}
    for pair in pairs:
        field, equals, text = pair.partition("=")
        if not equals or not field.strip():
            raise CheckpointError(f"--set takes FIELD=JSON (e.g. --set severity='\"high\"' or --set count=3), not {pair!r}")
        try:
            sets[field.strip()] = orjson.loads(text)
        except orjson.JSONDecodeError:
            sets[field.strip()] = text
    return sets


def fork_body(lineage: Sequence[StoredCheckpoint], edit: tuple[int, str] | None, sets: Mapping[str, Any],
              schema: Mapping[str, Any] | None) -> bytes:
    """The body of a fork's first checkpoint from ``lineage`` (its parent, up to the fork point):
    ``d`` the edit (index, text, and the entry's re-derived data), ``v`` the variables set."""
    body: dict[str, Any] = {}
    written = dict(sets)
    if edit is not None:
        index, content = edit
        body["d"], derived = _edit(lineage, index, content, sets)
        written = {**derived, **written}
    if written:
        _check_sets(lineage, written, schema)
        body["v"] = written
    return encode(body)


def _edit(lineage: Sequence[StoredCheckpoint], index: int, content: str,
          sets: Mapping[str, Any]) -> tuple[list[Any], dict[str, Any]]:
    """The edit as stored, and the variables it re-derives."""
    if not isinstance(content, str):
        raise CheckpointError(f"an edited entry's text must be a str, got {type(content).__name__}")
    history = fold(lineage, "").stored.history
    if not -len(history) <= index < len(history):
        raise CheckpointError(f"cannot edit history entry {index}: at checkpoint {lineage[-1].seq} the history has "
                              f"{len(history)} entries (0-{len(history) - 1})")
    index %= len(history)
    entry = history[index]
    added_by = _checkpoint_of(lineage, index)
    wrote = decode(lineage[added_by].body).get("v", {})
    later = sorted({name for point in lineage[added_by + 1:] for name in decode(point.body).get("v", {})} - set(sets))
    if later:
        raise CheckpointError(
            f"checkpoints after history entry #{index} wrote variables that may depend on its old text "
            f"({', '.join(later)}): fork at checkpoint {lineage[added_by].seq}, right after it, so the run derives "
            f"them again, or {_HOW}")
    data = entry.data if isinstance(entry.data, dict) else {}
    if "tool_calls" in data:
        raise CheckpointError(f"history entry #{index} is a reply whose tool calls ran: its text cannot be edited; "
                              f"fork at the checkpoint before it (checkpoint {lineage[added_by].seq - 1}) to have "
                              "the model asked again")
    if isinstance(data.get("choice"), dict):
        return _edit_choice(index, content, data, wrote)
    if "structured" in data:
        return _edit_structured(index, content, data, wrote)
    if wrote:
        raise CheckpointError(f"history entry #{index} was added by a step that also wrote {', '.join(wrote)}, which "
                              f"cannot be derived from an edited text: edit without them and {_HOW}")
    return [index, content], {}


def _edit_choice(index: int, content: str, data: dict[str, Any],
                 wrote: Mapping[str, Any]) -> tuple[list[Any], dict[str, Any]]:
    choice = data["choice"]
    candidates = list(choice.get("candidates", ()))
    if content not in candidates:
        shown = ", ".join(repr(c) for c in candidates[:8]) + (", ..." if len(candidates) > 8 else "")
        raise CheckpointError(f"history entry #{index} is the choice {choice.get('name')!r} among {shown}: edit it "
                              f"to one of them, or {_HOW}")
    old = candidates[choice["picked"]] if isinstance(choice.get("picked"), int) else None
    picked = {**choice, "picked": candidates.index(content), "edited": True}
    derived = {name: content for name, value in wrote.items() if value == old}
    return [index, content, {**data, "choice": picked}], derived


def _edit_structured(index: int, content: str, data: dict[str, Any],
                     wrote: Mapping[str, Any]) -> tuple[list[Any], dict[str, Any]]:
    try:
        value = orjson.loads(content)
    except orjson.JSONDecodeError as error:
        raise CheckpointError(f"history entry #{index} is a structured reply: the edited text must be JSON "
                              f"({error})") from None
    derived = {name: value for name, stored in wrote.items() if stored == data["structured"]}
    return [index, content, {**data, "structured": value}], derived


def _checkpoint_of(lineage: Sequence[StoredCheckpoint], index: int) -> int:
    """The position in ``lineage`` of the checkpoint that added history entry ``index``."""
    seen = 0
    for position, added in enumerate(added_entries(lineage)):
        seen += len(added)
        if index < seen:
            return position
    raise CheckpointError(f"history entry {index} is in no checkpoint; the store is damaged")


def _check_sets(lineage: Sequence[StoredCheckpoint], sets: Mapping[str, Any], schema: Mapping[str, Any] | None) -> None:
    """Refuse a field the stored variables lack, or a value the type's stored schema refuses."""
    stored = fold(lineage, "").stored.vars
    if stored is None:
        raise CheckpointError(f"the thread has no flow variables to set ({', '.join(sets)}): its flow declares none")
    unknown = [name for name in sets if name not in stored]
    if unknown:
        raise CheckpointError(f"the flow variables have no field {unknown[0]!r} (fields: {', '.join(stored)})")
    if schema is None:  # stored before schemas were kept: the resumed run checks the values
        return
    import jsonschema

    validator = jsonschema.Draft202012Validator(dict(schema))
    problem = jsonschema.exceptions.best_match(validator.iter_errors({**stored, **sets}))
    if problem is not None:
        field = str(problem.absolute_path[0]) if problem.absolute_path else "?"
        expected = schema.get("properties", {}).get(field, {})
        raise CheckpointError(f"cannot set {field!r} to {orjson.dumps(sets.get(field)).decode()}: {problem.message} "
                              f"(the field takes {_described(expected, schema)})")


def _described(field_schema: Mapping[str, Any], schema: Mapping[str, Any]) -> str:
    """A field's JSON schema in a few words (``a string``, ``one of 'low', 'high'``, ``Item``)."""
    if "$ref" in field_schema:
        return str(field_schema["$ref"]).rsplit("/", 1)[-1]
    if "enum" in field_schema:
        return "one of " + ", ".join(repr(v) for v in field_schema["enum"])
    if "anyOf" in field_schema:
        return " or ".join(_described(option, schema) for option in field_schema["anyOf"])
    kind = field_schema.get("type", "any JSON value")
    if kind == "array" and isinstance(field_schema.get("items"), Mapping):
        return f"an array of {_described(field_schema['items'], schema)}"
    return {"string": "a string", "integer": "an integer", "number": "a number", "boolean": "true or false",
            "null": "null", "object": "an object"}.get(str(kind), str(kind))
