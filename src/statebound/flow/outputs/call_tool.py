"""The output function that runs a tool: ``CallTool(fn)``."""

from __future__ import annotations

import asyncio
import inspect
import json
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, cast

from statebound.errors import DefinitionError
from statebound.flow.context import RunContext
from statebound.flow.outputs.base import Output
from statebound.flow.tool_calls import ModelTool, Toolset, as_result, misfit
from statebound.flow.tool_result import ToolResult

__all__ = ["CallTool", "ToolFn"]

ToolFn = Callable[[RunContext[Any, Any]], ToolResult | str | Awaitable[ToolResult | str]]


class CallTool(Output):
    """Run ``fn(ctx)`` and append its result as a ``tool`` entry.

    ``fn`` returns a :class:`ToolResult` or a string (meaning success). Async functions are
    awaited; sync ones run in a worker thread (``asyncio.to_thread``) unless ``blocking=False``
    says they are quick and pure enough to run inline. An exception ends the run with
    ``ExitReason.ERROR`` (return ``ToolResult(..., ok=False)`` for failures the flow handles).

    ``repeatable=False`` says the tool must not run twice (it pays, sends, deletes): a
    checkpointed run interrupted while it ran then stops and asks a person instead of running
    it again on resume (see ``docs/live-flows.md``). ``writes`` names the flow variables its
    ``ToolResult(update=...)`` may write (writing another is an error naming it); ``reads`` the
    ones it reads (diagrams show them).

    With ``args`` (a dict, or ``args(ctx) -> dict``), ``fn`` is a tool that takes arguments: a
    :class:`~statebound.flow.tool_calls.ModelTool` (``tool(fn)``), or a
    :class:`~statebound.flow.tool_calls.Toolset` of one tool (an MCP server's,
    :func:`statebound.mcp.mcp_tool`). Arguments that do not fit its parameters are a failed
    result, as when the model calls it; a tool that is not repeatable is announced before it runs.
    """

    __slots__ = ("_is_async", "args", "blocking", "fn", "name", "reads", "repeatable", "writes")

    def __init__(self, fn: ToolFn | ModelTool | Toolset, *, name: str | None = None, blocking: bool = True,
                 repeatable: bool = True, writes: Sequence[str] = (), reads: Sequence[str] = (),
                 args: Mapping[str, Any] | Callable[[RunContext[Any, Any]], Mapping[str, Any]] | None = None) -> None:
        self.args = args
        if args is not None:
            if not isinstance(fn, (ModelTool, Toolset)):
                raise DefinitionError(f"CallTool(args=...) calls a tool that takes arguments (tool(fn), an MCP "
                                      f"server's mcp_tool(...)), not {fn!r}")
            default = fn.spec.name if isinstance(fn, ModelTool) else fn.name
            repeatable = repeatable and (fn.repeatable if isinstance(fn, ModelTool) else True)
            writes = (*writes, *fn.writes)
        elif not callable(fn):
            raise DefinitionError(f"CallTool needs a function fn(ctx), got {fn!r}")
        else:
            default = getattr(fn, "__name__", type(fn).__name__)
        self.fn = fn
        self.name = name or default
        self.blocking = blocking
        self.repeatable = repeatable
        self.writes = tuple(dict.fromkeys(writes))
        self.reads = tuple(reads)
        call = None if inspect.isfunction(fn) else getattr(type(fn), "__call__", None)  # noqa: B004 - the method, to see if it is async
        self._is_async = inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(call)

    async def run(self, ctx: RunContext[Any, Any]) -> None:
        result = await self._call_with_args(ctx) if self.args is not None else await self._call(ctx)
        if isinstance(result, str):
            ctx.add("tool", result, "tool", name=ctx.speaker or self.name, ok=True)
        elif isinstance(result, ToolResult):
            ctx.add("tool", result.output, "tool", name=ctx.speaker or self.name, ok=result.ok, data=result.data)
            if result.update:
                ctx.update(result.update, by=f"tool {self.name!r}")
        else:
            raise DefinitionError(
                f"tool {self.name!r} returned {type(result).__name__}; return a str or a ToolResult"
            )

    async def _call(self, ctx: RunContext[Any, Any]) -> object:
        fn = cast(ToolFn, self.fn)
        result = await asyncio.to_thread(fn, ctx) if self.blocking and not self._is_async else fn(ctx)
        return await result if inspect.isawaitable(result) else result

    async def _call_with_args(self, ctx: RunContext[Any, Any]) -> ToolResult:
        fn = cast(ModelTool | Toolset, self.fn)
        if isinstance(fn, ModelTool):
            tool = fn
        else:
            tools = await fn.tools(ctx)
            if len(tools) != 1:
                raise DefinitionError(f"CallTool(args=...) calls one tool, and {fn.name} gives "
                                      f"{len(tools)}: {', '.join(t.spec.name for t in tools) or 'none'}")
            tool = tools[0]
        args = self.args(ctx) if callable(self.args) else self.args
        text = json.dumps(dict(args or {}))
        try:
            arguments = tool.arguments(text)
        except ValueError as error:
            return ToolResult(misfit(tool.spec.name, text, error), ok=False)
        if self.repeatable and not tool.repeatable:  # learnt only now: announced here, not by the engine
            ctx.checkpoint("intent")
        return as_result(await tool(ctx, arguments))

    @property
    def label(self) -> str:
        return f"Tool({self.name})"

    def __repr__(self) -> str:
        return f"CallTool({self.name})"
