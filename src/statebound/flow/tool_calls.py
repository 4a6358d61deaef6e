"""Provider tool calling in a flow: ``CallLLM(tools=[fn, ...])`` offers Python functions to the
model, and the calls it asks for run here, each recorded in the history.

A function's parameters (type-annotated; a first parameter named ``ctx`` receives the
:class:`~statebound.flow.context.RunContext` and is not shown to the model) become the JSON
schema of its arguments, its docstring's first paragraph the description. A call that names no
offered function, whose arguments are not JSON or do not fit the signature, is recorded as a
failed tool result the model sees on its next turn, not a crash; an exception raised by the
function itself ends the run as a :class:`~statebound.flow.outputs.CallTool`'s would. Rules
branch on what was called with :func:`statebound.flow.rules.called`.

In a checkpointed run the model's reply is stored before any call runs, and each call's result as
it comes, so a resumed run never asks the model again for a reply it gave and never repeats a call
whose result is stored. A call that was running when the process died runs again, unless its tool
is marked not repeatable (``tool(fn, repeatable=False)``): then the resumed run first asks a person
to ``repeat`` or ``skip`` it, as for ``CallTool(fn, repeatable=False)``.

Tools known only once a run is under way (an MCP server's, which the server lists when it runs)
come as a :class:`Toolset`: ``CallLLM`` asks it for its tools each time it runs (the toolset may
keep them for the run).
"""

from __future__ import annotations

import asyncio
import inspect
import json
from collections.abc import Callable, Sequence
from typing import Any, Protocol, runtime_checkable

from statebound.errors import DefinitionError
from statebound.flow.context import RunContext
from statebound.flow.history import Entry
from statebound.flow.tool_result import ToolResult
from statebound.llm.base import ToolCall, ToolSpec

__all__ = ["FunctionTool", "ModelTool", "Toolset", "as_result", "as_tools", "misfit", "call_record", "calls_in_progress", "render_calls",
           "resolve_tools", "run_tool_calls", "stored_calls", "tool"]


@runtime_checkable
class ModelTool(Protocol):
    """A tool the model may call: its :class:`ToolSpec` (name, description, JSON schema of the
    arguments), whether a call may run twice, the flow variables it may write, and how to check
    arguments and call it (a :class:`FunctionTool`; an MCP server's tool)."""

    @property
    def spec(self) -> ToolSpec: ...

    @property
    def repeatable(self) -> bool: ...

    @property
    def writes(self) -> tuple[str, ...]: ...

    def arguments(self, text: str) -> dict[str, Any]: ...

    async def __call__(self, ctx: RunContext, arguments: dict[str, Any]) -> Any: ...


@runtime_checkable
class Toolset(Protocol):
    """Tools a run learns as it goes (an MCP server's tools, listed by the server once it runs):
    ``name`` says what it is in messages, ``writes`` the flow variables its tools may write (for
    ``flow check``), and ``tools(ctx)`` gives them, in the run, each time an output needs them."""

    @property
    def name(self) -> str: ...

    @property
    def writes(self) -> tuple[str, ...]: ...

    async def tools(self, ctx: RunContext) -> Sequence[ModelTool]: ...


class FunctionTool:
    """A Python function offered to the model: its :class:`ToolSpec` and how to call it.

    ``repeatable=False`` says a call must not run twice (it pays, sends, deletes); ``writes``
    names the flow variables its ``ToolResult(update=...)`` may write (for ``flow check``)."""

    __slots__ = ("_arguments", "fn", "repeatable", "spec", "takes_ctx", "writes")

    def __init__(self, fn: Callable[..., Any], *, name: str | None = None, repeatable: bool = True,
                 writes: Sequence[str] = ()) -> None:
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
        name = name or str(getattr(fn, "__name__", type(fn).__name__))
        self._arguments = create_model(f"{name}_arguments", **fields)
        schema = self._arguments.model_json_schema()
        schema.pop("title", None)
        description = inspect.cleandoc(fn.__doc__ or "").split("\n\n")[0].replace("\n", " ")
        self.fn = fn
        self.spec = ToolSpec(name, description, schema)
        self.repeatable = repeatable
        self.writes = tuple(writes)

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


def tool(fn: Callable[..., Any] | None = None, /, *, name: str | None = None, repeatable: bool = True,
         writes: Sequence[str] = ()) -> Any:
    """A function offered to the model, with how it may be called: ``tool(charge,
    repeatable=False)``, or as a decorator, ``@tool(repeatable=False)`` (the decorated name is then
    the :class:`FunctionTool`; its function is ``.fn``). ``name`` replaces the function's name.
    ``repeatable=False``: a call interrupted by a crash is not run again without asking."""
    if fn is None:
        return lambda inner: FunctionTool(inner, name=name, repeatable=repeatable, writes=writes)
    return FunctionTool(fn, name=name, repeatable=repeatable, writes=writes)


def as_tools(functions: Sequence[Callable[..., Any] | ModelTool | Toolset]) -> tuple[tuple[ModelTool, ...],
                                                                                   tuple[Toolset, ...]]:
    """The functions as tools (tools as they are), and the toolsets apart; two tools with one
    name are refused."""
    tools = tuple(f if isinstance(f, ModelTool) else FunctionTool(f) for f in functions if not isinstance(f, Toolset))
    _check_names(tools, "")
    return tools, tuple(f for f in functions if isinstance(f, Toolset))


async def resolve_tools(ctx: RunContext, tools: tuple[ModelTool, ...],
                        toolsets: Sequence[Toolset]) -> tuple[ModelTool, ...]:
    """``tools`` and those the ``toolsets`` give now, refusing two with one name."""
    if not toolsets:
        return tools
    found = [*tools]
    for toolset in toolsets:
        found += await toolset.tools(ctx)
    _check_names(found, f" (among the tools of {', '.join(toolset.name for toolset in toolsets)})")
    return tuple(found)


def _check_names(tools: Sequence[ModelTool], where: str) -> None:
    names = [tool.spec.name for tool in tools]
    if twice := sorted({name for name in names if names.count(name) > 1}):
        raise DefinitionError(f"two tools are named {twice[0]!r}{where}: the model calls tools by name; "
                              "offer one of them (a toolset's subset, or another name=)")


def stored_calls(entry: Entry) -> tuple[ToolCall, ...]:
    """The tool calls a stored reply asked for (``entry.data["tool_calls"]``)."""
    data = entry.data.get("tool_calls") if isinstance(entry.data, dict) else None
    return tuple(ToolCall(str(c["id"]), str(c["name"]), str(c["arguments"])) for c in data or ())


def calls_in_progress(history: Sequence[Entry], start: int | None) -> tuple[tuple[ToolCall, ...], int] | None:
    """For an output function that began at ``history[start]`` and stored progress: the tool calls
    of the model's reply it stored, and how many of them have their result after it (None: it
    stored no such reply; ``start`` None: it is not resuming)."""
    if start is None:
        return None
    for index in range(len(history) - 1, start - 1, -1):
        entry = history[index]
        if entry.source == "llm" and (calls := stored_calls(entry)):
            answered = sum(1 for later in history[index + 1:]
                           if later.source == "tool" and isinstance(later.data, dict) and "tool_call" in later.data)
            return calls, answered
    return None


def call_record(call: ToolCall) -> dict[str, Any]:
    """What a tool entry records of the call it answers (``entry.data["tool_call"]``)."""
    return {"tool_call": {"id": call.id, "name": call.name, "arguments": call.arguments}}


async def run_tool_calls(ctx: RunContext, calls: Sequence[ToolCall], tools: Sequence[ModelTool], *,
                         done: int = 0) -> None:
    """Run each call the model asked for, in order, from the ``done``-th (those before have their
    results in the history already), appending its result (or why it could not run). In a
    checkpointed run each result is stored as it comes, and a call of a tool that is not
    repeatable is announced first (an intent), so a crash inside it asks before running it again."""
    by_name = {tool.spec.name: tool for tool in tools}
    for call in calls[done:]:
        record = call_record(call)
        tool = by_name.get(call.name)
        if tool is None:
            ctx.add("tool", f"Error: there is no function {call.name!r}; call one of {', '.join(by_name)}", "tool",
                    name=call.name or "unknown", ok=False, data=record)
        else:
            try:
                arguments = tool.arguments(call.arguments)
            except ValueError as error:
                ctx.add("tool", misfit(call.name, call.arguments, error), "tool", name=call.name, ok=False,
                        data=record)
            else:
                if not tool.repeatable:
                    ctx.checkpoint("intent", tool=call.name, call=call.id)
                _add_result(ctx, call.name, record, await tool(ctx, arguments))
        ctx.checkpoint("progress")


def _add_result(ctx: RunContext, name: str, record: dict[str, Any], result: Any) -> None:
    result = as_result(result)
    ctx.add("tool", result.output, "tool", name=name, ok=result.ok,
            data=record if result.data is None else {**record, "data": result.data})
    if result.update:
        ctx.update(result.update, by=f"tool {name!r}")


def misfit(name: str, arguments: str, error: ValueError) -> str:
    """The failed result of a call whose arguments do not fit the tool's parameters."""
    return f"Error: {name}({arguments}) does not fit its parameters: {error}"


def as_result(result: Any) -> ToolResult:
    """What a :class:`ModelTool` returned as a :class:`ToolResult` (text: success; other JSON
    data: success, written as JSON)."""
    if isinstance(result, ToolResult):
        return result
    return ToolResult(result if isinstance(result, str) else json.dumps(result, default=str))


def render_calls(calls: Sequence[ToolCall]) -> str:
    """The calls as the history shows them when the reply has no text of its own."""
    return "\n".join(f"{call.name}({call.arguments})" for call in calls)
