"""Structured output: a reply held to a JSON schema, and read back into a value.

A schema is given as a pydantic model (or any type pydantic can describe: ``list[int]``, a
``TypedDict``, a ``Literal``) or as a JSON schema ``dict``. :func:`json_schema` gives the dict a
backend needs; :func:`grammar_for` turns it into GBNF (llama.cpp's converter) for backends that
hold generation to a grammar. A keyword the grammar cannot hold a reply to (``minimum``, ``not``,
``multipleOf`` ...; :func:`unenforced` lists them) is left out of the grammar only: the grammar
enforces the rest, every reply is validated against the whole schema anyway, and which keywords
are only validated is said once (:func:`say_validated_only`). :func:`read_reply` validates a reply
(with pydantic for types, with ``jsonschema`` for dicts) and raises :class:`SchemaMismatch` saying
what is wrong; only a schema that cannot even be validated (not a JSON schema) is refused.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator, Mapping
from typing import Any

from statebound.errors import DefinitionError

__all__ = ["GRAMMAR_SCHEMAS", "SchemaMismatch", "SchemaTarget", "enforceable", "grammar_for", "json_schema",
           "read_reply", "say_validated_only", "unenforced"]

log = logging.getLogger("statebound.llm.schemas")
_said: set[tuple[str, ...]] = set()  # (backend, keyword...) already said

GRAMMAR_SCHEMAS = "schema-grammar"  # in Capabilities.extras: the backend holds a schema by a grammar
SchemaTarget = Any  # a JSON schema dict, or a type pydantic can describe (a BaseModel subclass ...)

# What llama.cpp's JSON-schema-to-grammar converter enforces, and annotations that constrain nothing.
_ENFORCED = frozenset({
    "type", "properties", "required", "additionalProperties", "items", "prefixItems", "minItems", "maxItems",
    "enum", "const", "anyOf", "oneOf", "allOf", "$ref", "$defs", "definitions", "minLength", "maxLength",
    "pattern", "format",
})
_ANNOTATIONS = frozenset({"title", "description", "default", "examples", "$schema", "$id", "$comment", "readOnly",
                          "writeOnly", "deprecated"})
_FORMATS = frozenset({"date", "time", "date-time", "uuid"})  # the string formats the converter knows
_SCHEMA_MAPS = ("properties", "$defs", "definitions")  # values are schemas, keys are names


class SchemaMismatch(ValueError):
    """A reply that is not JSON, or JSON that does not fit the schema (the message says where)."""


def json_schema(target: SchemaTarget) -> dict[str, Any]:
    """The JSON schema of ``target`` (a dict is checked to be a schema and returned as is)."""
    if isinstance(target, Mapping):
        _check_dict_schema(target)
        return dict(target)
    from pydantic import TypeAdapter

    try:
        return TypeAdapter(target).json_schema()
    except Exception as error:  # pydantic raises several kinds for a type it cannot describe
        raise DefinitionError(f"schema={target!r} is neither a JSON schema dict nor a type pydantic can "
                              f"describe ({type(error).__name__}: {error})") from None


def _check_dict_schema(schema: Mapping[str, Any]) -> None:
    import jsonschema

    try:
        jsonschema.validators.validator_for(schema).check_schema(schema)
    except jsonschema.SchemaError as error:
        where = "/".join(str(part) for part in error.absolute_path) or "the top"
        raise DefinitionError(f"schema= is not a valid JSON schema at {where}: {error.message}") from None


def unenforced(schema: Mapping[str, Any]) -> list[str]:
    """Each keyword of ``schema`` a grammar cannot hold a reply to, with where it is
    (``"minimum at properties/priority"``); empty when a grammar enforces the whole schema."""
    return [f"{keyword} at {'/'.join(path) or 'the top'}" for keyword, path in _keywords(schema, ())
            if keyword not in _ENFORCED and keyword not in _ANNOTATIONS]


def _keywords(schema: Any, path: tuple[str, ...]) -> Iterator[tuple[str, tuple[str, ...]]]:
    if not isinstance(schema, Mapping):
        return
    for keyword, value in schema.items():
        if keyword == "format" and value not in _FORMATS:
            yield f"format {value!r}", path
        elif keyword == "additionalProperties" and value not in (False, True):
            yield "additionalProperties with a schema", path
        else:
            yield keyword, path
        if keyword in _SCHEMA_MAPS and isinstance(value, Mapping):
            for name, sub in value.items():
                yield from _keywords(sub, (*path, keyword, str(name)))
        elif keyword in ("items", "not", "if", "then", "else", "contains") and isinstance(value, Mapping):
            yield from _keywords(value, (*path, keyword))
        elif keyword in ("anyOf", "oneOf", "allOf", "prefixItems") and isinstance(value, list):
            for index, sub in enumerate(value):
                yield from _keywords(sub, (*path, keyword, str(index)))


def enforceable(schema: Any) -> Any:
    """``schema`` without the keywords a grammar cannot enforce (what the grammar is made from)."""
    if isinstance(schema, list):
        return [enforceable(item) for item in schema]
    if not isinstance(schema, Mapping):
        return schema
    kept: dict[str, Any] = {}
    for keyword, value in schema.items():
        if keyword not in _ENFORCED and keyword not in _ANNOTATIONS:
            continue
        if (keyword == "format" and value not in _FORMATS) or (
                keyword == "additionalProperties" and value not in (False, True)):
            continue
        if keyword in _SCHEMA_MAPS and isinstance(value, Mapping):
            kept[keyword] = {name: enforceable(sub) for name, sub in value.items()}
        elif keyword in ("items", "anyOf", "oneOf", "allOf", "prefixItems"):
            kept[keyword] = enforceable(value)
        else:
            kept[keyword] = value
    return kept


def say_validated_only(schema: Mapping[str, Any], *, backend: str) -> None:
    """Say once (per backend and keywords) which keywords of ``schema`` its grammar leaves to the
    validation of the reply."""
    missing = unenforced(schema)
    if missing and (key := (backend, *missing)) not in _said:
        _said.add(key)
        log.warning("%s holds a reply to a JSON schema with a grammar, which cannot enforce %s: those are only "
                    "validated (a reply that breaks them is sent back with what is wrong); said once", backend,
                    "; ".join(missing))


def grammar_for(schema: Mapping[str, Any], *, backend: str) -> str:
    """GBNF that holds a reply to ``schema``, less what a grammar cannot enforce (said once)."""
    say_validated_only(schema, backend=backend)
    from llama_cpp.llama_grammar import json_schema_to_gbnf

    return json_schema_to_gbnf(json.dumps(enforceable(schema)))


def read_reply(target: SchemaTarget, text: str) -> Any:
    """The reply ``text`` read as ``target``: an instance of a pydantic type, or the parsed JSON for
    a dict schema; :class:`SchemaMismatch` when it is not JSON or does not fit."""
    if isinstance(target, Mapping):
        try:
            value = json.loads(text)
        except ValueError as error:
            raise SchemaMismatch(f"the reply is not JSON ({error}): {text[:120]!r}") from None
        import jsonschema

        problem = jsonschema.validators.validator_for(target)(target).iter_errors(value)
        first = min(problem, key=lambda error: len(error.absolute_path), default=None)
        if first is not None:
            where = "/".join(str(part) for part in first.absolute_path) or "the top"
            raise SchemaMismatch(f"the reply does not fit the schema at {where}: {first.message}")
        return value
    from pydantic import TypeAdapter, ValidationError

    try:
        return TypeAdapter(target).validate_json(text)
    except ValidationError as error:
        details = "; ".join(f"{'/'.join(str(p) for p in e['loc']) or 'the top'}: {e['msg']}"
                            for e in error.errors()[:3])
        raise SchemaMismatch(f"the reply does not fit {getattr(target, '__name__', target)}: {details}") from None
