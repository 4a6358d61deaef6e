"""Provider tool calling in a flow: ``CallLLM(tools=[fn, ...])`` offers Python functions to the
model, and the calls it asks for run here, each recorded in the history.

A function's parameters (type-annotated; a first parameter named ``ctx`` receives the
:class:`~statebound.flow.context.RunContext` and is not shown to the model) become the JSON
schema of its arguments, its docstring's first paragraph the description. A call that names no
offered function, whose arguments are not JSON or do not fit the signature, is recorded as a
failed tool result the model sees on its next turn, not a crash; an exception raised by the
function itself ends the run as a :class:`~statebound.flow.outputs.CallTool`'s would. Rules
branch on what was called with :func:`statebound.flow.rules.called`.
"""

from __future__ import annotations

import asyncio
import inspect
import json
from collections.abc import Callable, Sequence
from typing import Any

from statebound.errors import DefinitionError
from statebound.flow.context import RunContext
from statebound.flow.tool_result import ToolResult
from statebound.llm.base import ToolCall, ToolSpec

__all__ = ["FunctionTool", "as_tools", "render_calls", "run_tool_calls"]


class FunctionTool:
    """A Python function offered to the model: its :class:`ToolSpec` and how to call it."""

    __slots__ = ("_arguments", "fn", "spec", "takes_ctx")

    def __init__(self, fn: Callable[..., Any]) -> None:
        from pydantic import create_model

        if not callable(fn):
            raise DefinitionError(f"a tool is a function, got {fn!r}")
        signature = inspect.signature(fn)
        parameters = list(signature.parameters.values())
        self.takes_ctx = bool(parameters) and parameters[0].name == "ctx"
        fields: dict[str, Any] = {}
        for parameter in parameters[1 if self.takes_ctx else 0:]:
            if parameter.kind in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD):
                raise DefinitionError(f"tool {fn.__name__!r}: *{parameter.name} cannot be described to a model; "
                                      "name every parameter")
            annotation = Any if parameter.annotation is parameter.empty else parameter.annotation
            default = ... if parameter.default is parameter.empty else parameter.default
            fields[parameter.name] = (annotation, default)
        name = getattr(fn, "__name__", type(fn).__name__)
        self._arguments = create_model(f"{name}_arguments", **fields)
        schema = self._arguments.model_json_schema()
        schema.pop("title", None)
        description = inspect.cleandoc(fn.__doc__ or "").split("\n\n")[0].replace("\n", " ")
        self.fn = fn
        self.spec = ToolSpec(name, description, schema)

    def __repr__(self) -> str:
        return f"FunctionTool({self.spec.name})"

    def arguments(self, text: str) -> dict[str, Any]:
        """The call's arguments checked against the signature (ValueError saying what is wrong)."""
        from pydantic import ValidationError

        try:
            checked = self._arguments.model_validate_json(text or "{}")
        except ValidationError as error:
            problems = "; ".join(f"{'/'.join(str(p) for p in e['loc']) or 'arguments'}: {e['msg']}"
                                 for e in error.errors()[:3])
            raise ValueError(problems) from None
        return {name: getattr(checked, name) for name in type(checked).model_fields}

    async def __call__(self, ctx: RunContext, arguments: dict[str, Any]) -> Any:
        call = (lambda: self.fn(ctx, **arguments)) if self.takes_ctx else (lambda: self.fn(**arguments))
        result = await asyncio.to_thread(call) if not inspect.iscoroutinefunction(self.fn) else await call()
        return await result if inspect.isawaitable(result) else result


def as_tools(functions: Sequence[Callable[..., Any] | FunctionTool]) -> tuple[FunctionTool, ...]:
    """The functions as tools, refusing two with one name."""
    tools = tuple(f if isinstance(f, FunctionTool) else FunctionTool(f) for f in functions)
    names = [tool.spec.name for tool in tools]
    if twice := sorted({name for name in names if names.count(name) > 1}):
        raise DefinitionError(f"two tools are named {twice[0]!r}: the model calls tools by name")
    return tools


async def run_tool_calls(ctx: RunContext, calls: Sequence[ToolCall], tools: Sequence[FunctionTool]) -> None:
    """Run each call the model asked for, in order, appending its result (or why it could not run)."""
    by_name = {tool.spec.name: tool for tool in tools}
    for call in calls:
        record = {"tool_call": {"id": call.id, "name": call.name, "arguments": call.arguments}}
        tool = by_name.get(call.name)
        if tool is None:
            ctx.add("tool", f"Error: there is no function {call.name!r}; call one of {', '.join(by_name)}", "tool",
                    name=call.name or "unknown", ok=False, data=record)
            continue
        try:
            arguments = tool.arguments(call.arguments)
        except ValueError as error:
            ctx.add("tool", f"Error: {call.name}({call.arguments}) does not fit its parameters: {error}", "tool",
                    name=call.name, ok=False, data=record)
            continue
        result = await tool(ctx, arguments)
        if isinstance(result, ToolResult):
            ctx.add("tool", result.output, "tool", name=call.name, ok=result.ok,
                    data=record if result.data is None else {**record, "data": result.data})
            if result.update:
                ctx.update(result.update, by=f"tool {call.name!r}")
        else:
            ctx.add("tool", result if isinstance(result, str) else json.dumps(result, default=str), "tool",
                    name=call.name, ok=True, data=record)


def render_calls(calls: Sequence[ToolCall]) -> str:
    """The calls as the history shows them when the reply has no text of its own."""
    return "\n".join(f"{call.name}({call.arguments})" for call in calls)
