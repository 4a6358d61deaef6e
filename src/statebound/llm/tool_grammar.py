"""Tool calls on a backend that has no tool API of its own but holds generation to a grammar
(the embedded model; a llama.cpp server asked to with ``tool_calls="grammar"``).

The tools are described to the model in a system message; the reply is held to a grammar made
from a JSON schema of every allowed call, ``{"name": <a tool>, "arguments": <its arguments>}``
(with ``tool_choice="auto"`` the reply may also be plain text that does not start with ``{``);
a reply that is a call is read back into a :class:`~statebound.llm.base.ToolCall`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import msgspec

from statebound.llm.base import Completion, Message, Request, ToolCall, ToolSpec
from statebound.llm.json_schema import grammar_for

__all__ = ["read_tool_calls", "tool_call_request", "with_tool_calls"]

_ROOT = re.compile(r"^root ::=", flags=re.MULTILINE)
_TEXT_OR_CALL = 'root ::= call | plain\nplain ::= [^{] [^\\x00]*\n'


def _call_schema(tools: Sequence[ToolSpec]) -> dict[str, Any]:
    calls = [{"type": "object", "properties": {"name": {"const": tool.name}, "arguments": dict(tool.parameters)},
              "required": ["name", "arguments"]} for tool in tools]
    return calls[0] if len(calls) == 1 else {"anyOf": calls}


def _describe(tools: Sequence[ToolSpec], choice: str) -> str:
    listed = "\n".join(f"- {tool.name}: {tool.description or 'no description'}; arguments: "
                       f"{json.dumps(dict(tool.parameters.get('properties', {})))}" for tool in tools)
    when = "Answer with a call" if choice != "auto" else "To call a function, answer with a call"
    return (f"You can call these functions:\n{listed}\n{when}, written as JSON: "
            '{"name": "<function>", "arguments": {...}}')


def tool_call_request(request: Request, *, backend: str) -> Request:
    """``request`` with its tools turned into a description the model reads and a grammar that
    holds its reply to a call (or, with ``tool_choice="auto"``, to a call or plain text)."""
    allowed = [t for t in request.tools if request.tool_choice in ("auto", "required", t.name)]
    grammar = grammar_for(_call_schema(allowed), backend=f"{backend} (tool calls by grammar)")
    if request.tool_choice == "auto":
        grammar = _ROOT.sub("call ::=", grammar, count=1) + _TEXT_OR_CALL
    described = Message("system", _describe(allowed, request.tool_choice))
    messages = request.messages or (Message("user", request.prompt or ""),)
    if messages[0].role == "system":
        messages = (Message("system", f"{messages[0].content}\n\n{described.content}"), *messages[1:])
    else:
        messages = (described, *messages)
    return msgspec.structs.replace(request, messages=messages, prompt=None, tools=(), tool_choice="auto", grammar=grammar)


def read_tool_calls(text: str, tools: Sequence[ToolSpec], *, prefix: str) -> tuple[ToolCall, ...]:
    """The call a reply made under :func:`tool_call_request`'s grammar (none for plain text);
    ``prefix`` starts each call's id."""
    if not text.lstrip().startswith("{"):
        return ()
    try:
        call = json.loads(text)
    except ValueError:  # cut by max_tokens: passed on as it is, for the flow to refuse with the reason
        return (ToolCall(f"{prefix}-0", _name_in(text, tools), text),)
    return (ToolCall(f"{prefix}-0", str(call.get("name", "")), json.dumps(call.get("arguments", {}))),)


def _name_in(text: str, tools: Sequence[ToolSpec]) -> str:
    return next((tool.name for tool in tools if f'"{tool.name}"' in text), "")


def with_tool_calls(completion: Completion, tools: Sequence[ToolSpec]) -> Completion:
    """``completion`` (of a :func:`tool_call_request`) with each choice's call read from its text."""
    choices = tuple(replace(choice, tool_calls=read_tool_calls(choice.text, tools, prefix=f"call{index}"))
                    for index, choice in enumerate(completion.choices))
    return replace(completion, choices=choices)
