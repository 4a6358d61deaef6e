"""Output functions: what a state does when entered, in order. Each appends to the history.

* :class:`Instruction` -- a prompter: sends a fixed (or computed) instruction (``source="instruction"``);
* :class:`CallLLM` -- calls the LLM on the history (``source="llm"``);
* :class:`CallTool` -- runs a tool on the context (``source="tool"``); sync tools run in a thread,
  async tools are awaited;
* :class:`Agent` -- the SF_Agent view: a state's own instruction and model; the instruction goes
  into that agent's system message only and never into the shared history
  (defined in :mod:`statebound.flow.agent`).

Write your own output function by implementing :class:`Output` (an ``async run(ctx)`` method that
calls ``ctx.add`` / ``ctx.complete``).
"""

from __future__ import annotations

import asyncio
import inspect
import json
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Protocol, cast, runtime_checkable

from statebound.errors import DefinitionError, StructuredOutputError, UnsupportedFeature
from statebound.flow.agent import Agent
from statebound.flow.choice import grammar_choice
from statebound.flow.context import RunContext
from statebound.flow.structured import ask_structured, check_schema_support
from statebound.flow.tool_calls import (
    ModelTool,
    Toolset,
    as_result,
    as_tools,
    calls_in_progress,
    misfit,
    render_calls,
    resolve_tools,
    run_tool_calls,
)
from statebound.flow.tool_result import ToolResult
from statebound.llm.base import LLM, Message, Request, ToolSpec
from statebound.llm.json_schema import SchemaTarget, json_schema

__all__ = ["Agent", "CallLLM", "CallTool", "Instruction", "Output", "ToolFn", "ToolResult"]


@runtime_checkable
class Output(Protocol):
    """An output function: runs on entering a state and appends to the history."""

    async def run(self, ctx: RunContext) -> None: ...


ToolFn = Callable[[RunContext], ToolResult | str | Awaitable[ToolResult | str]]


@dataclass(frozen=True, slots=True)
class Instruction:
    """Send an instruction (a user message) into the history.

    ``text`` is a string, or ``text(ctx) -> str`` to compute it from the run.
    """

    text: str | Callable[[RunContext], str]
    pure: ClassVar[bool] = True  # reaches nothing outside the run: redoing it gives the same entry

    async def run(self, ctx: RunContext) -> None:
        text = self.text if isinstance(self.text, str) else self.text(ctx)
        ctx.add("user", text, "instruction")

    @property
    def label(self) -> str:
        return "Instruction"


@dataclass(frozen=True, slots=True, kw_only=True)
class CallLLM:
    """Call the LLM on the history and append its reply.

    The model is ``llm`` if given, else the state's agent's, else the one passed to ``Flow.run``.
    ``render(ctx) -> messages`` replaces the default history-to-messages mapping
    (:func:`statebound.flow.history.to_messages`, via ``ctx.messages()``). ``grammar`` is a GBNF
    string, or ``grammar(ctx) -> GBNF or None`` to compute it for each call from the run (say, the
    actions the environment accepts now). A :func:`~statebound.flow.choice.choice_grammar` makes the
    reply a choice, recorded in ``entry.data["choice"]`` as a ``Pick(method="grammar")`` records
    its own (named after the state), so reports count it among the choices.

    ``schema`` (a pydantic model or type, or a JSON schema dict) asks for a reply in that schema
    (:mod:`statebound.flow.structured`): the value read from it is in ``entry.data["structured"]``
    (as JSON) and, with ``into``, written to that flow variable; a reply that does not fit is sent
    back ``retries`` times, then the run ends with ``StructuredOutputError``. A model that cannot
    hold a reply to the schema is refused before the run starts.

    ``tools`` (Python functions, or :func:`~statebound.flow.tool_calls.tool` to say how they may
    be called; :mod:`statebound.flow.tool_calls`) are offered to the model as the provider's tools
    (``tool_choice``: ``"auto"``, ``"required"`` or a function's name); the calls it asks for run
    at once, each result a ``tool`` entry; ``entry.data["tool_calls"]`` of the reply records them,
    and :func:`~statebound.flow.rules.called` branches on them. In a checkpointed run the reply is
    stored before the calls run and each result as it comes (see ``docs/live-flows.md``).
    ``writes`` names the flow variables the tools' ``ToolResult(update=...)`` may write, for
    static checks (each ``tool(fn, writes=[...])`` adds its own). A :class:`Toolset` among the
    ``tools`` (an MCP server's, :func:`statebound.mcp.mcp`) gives its tools as the output runs.
    """

    llm: LLM | None = None
    max_tokens: int = 256
    stop: Sequence[str] = ()
    temperature: float = 0.0
    grammar: str | Callable[[RunContext], str | None] | None = None
    render: Callable[[RunContext], Sequence[Message]] | None = None
    # fixes the draw when sampling at a temperature (backends that can): visit n of the state
    # draws with seed + n - 1, so a state entered again does not repeat its sample
    seed: int | None = None
    schema: SchemaTarget | None = None
    into: str | None = None
    retries: int = 1
    tools: Sequence[Callable[..., Any] | ModelTool | Toolset] = ()
    tool_choice: str = "auto"
    writes: Sequence[str] = ()
    _offered: tuple[ModelTool, ...] = field(init=False, repr=False, compare=False, default=())
    _toolsets: tuple[Toolset, ...] = field(init=False, repr=False, compare=False, default=())  # resolved as it runs
    _specs: tuple[ToolSpec, ...] = field(init=False, repr=False, compare=False, default=())  # the requests' tools

    def __post_init__(self) -> None:
        offered, toolsets = as_tools(self.tools)
        object.__setattr__(self, "_offered", offered)
        object.__setattr__(self, "_toolsets", toolsets)
        written = (*self.writes, *(name for tool in offered for name in tool.writes),
                   *(name for toolset in toolsets for name in toolset.writes))
        object.__setattr__(self, "writes", tuple(dict.fromkeys(written)))
        object.__setattr__(self, "_specs", tuple(tool.spec for tool in offered))
        if self.tools and (self.schema is not None or self.grammar is not None):
            raise DefinitionError("CallLLM with tools= takes no schema= or grammar=")
        if not toolsets:  # a toolset's names are known only as it runs
            self._check_choice(offered)
        if self.schema is not None:
            json_schema(self.schema)  # a schema that is not one is refused when the flow is built
            if self.grammar is not None:
                raise DefinitionError("CallLLM takes a grammar= or a schema=, not both")
        elif self.into is not None:
            raise DefinitionError(f"CallLLM(into={self.into!r}) writes the value read from a structured reply: "
                                  "give it a schema= too")
        if self.retries < 0:
            raise DefinitionError(f"CallLLM(retries=) counts further tries, 0 or more, not {self.retries}")

    def check_model(self, llm: LLM | None, *, where: str) -> None:
        """Refuse, before the run, a model that cannot hold a reply to the schema."""
        model = self.llm or llm
        if self.schema is not None and model is not None:
            check_schema_support(self.schema, model, where=where)
        if self.tools and model is not None and not model.capabilities.tools:
            raise UnsupportedFeature(f"{where} offers the model tools, and {model.model} takes none: use the "
                                     "embedded model or a server with tool calling")

    def _check_choice(self, offered: Sequence[ModelTool]) -> None:
        if self.tool_choice not in ("auto", "required", *(tool.spec.name for tool in offered)):
            raise DefinitionError(f"tool_choice is 'auto', 'required' or an offered function's name "
                                  f"({', '.join(tool.spec.name for tool in offered)}), not {self.tool_choice!r}")

    async def run(self, ctx: RunContext) -> None:
        offered, specs = self._offered, self._specs
        if self._toolsets:
            offered = await resolve_tools(ctx, offered, self._toolsets)
            specs = tuple(tool.spec for tool in offered)
            self._check_choice(offered)
        if offered and (progress := calls_in_progress(ctx.history, ctx.output_start)) is not None:
            calls, done = progress  # resumed after the reply was stored: its calls go on
            await run_tool_calls(ctx, calls, offered, done=done)
            return
        messages = ctx.messages() if self.render is None else tuple(self.render(ctx))
        grammar = self.grammar(ctx) if callable(self.grammar) else self.grammar
        request = Request(
            messages=messages,
            stop=tuple(self.stop),
            max_tokens=self.max_tokens,
            temperature=self.temperature,
            grammar=grammar,
            seed=None if self.seed is None else self.seed + ctx.visits.get(ctx.state, 1) - 1,
            tools=specs,
            tool_choice=self.tool_choice,
        )
        name = ctx.speaker or (ctx.agent.name if ctx.agent is not None else None)
        if self.schema is not None:
            from pydantic_core import to_jsonable_python

            try:
                reply = await ask_structured(ctx, request, self.schema, llm=self.llm, retries=self.retries)
            except StructuredOutputError as misfit:  # the last reply is kept, then the run ends
                ctx.add("assistant", misfit.completion.text, "llm", name=name, usage=misfit.completion.usage)
                raise
            ctx.add("assistant", reply.completion.text, "llm", name=name, usage=reply.completion.usage,
                    data={"structured": to_jsonable_python(reply.value)})
            if self.into is not None:
                ctx.update({self.into: reply.value}, by=f"CallLLM(into={self.into!r}) in state {ctx.state!r}")
            return
        completion = await ctx.complete(request, llm=self.llm, stream=True)
        calls = completion.choices[0].tool_calls
        if calls:
            ctx.add("assistant", completion.text if completion.text.strip() else render_calls(calls), "llm",
                    name=name, usage=completion.usage, data={"tool_calls": [
                        {"id": call.id, "name": call.name, "arguments": call.arguments} for call in calls]})
            ctx.checkpoint("progress")  # the reply is stored before any call runs
            await run_tool_calls(ctx, calls, offered)
            return
        # a reply held to a choice grammar is a choice: recorded as a grammar Pick's is
        choice = grammar_choice(ctx.state, grammar, completion.text)
        ctx.add("assistant", completion.text, "llm", name=name, usage=completion.usage,
                data=None if choice is None else choice.to_data())

    @property
    def label(self) -> str:
        return "LLM"

    @property
    def diagram_label(self) -> str:
        """What a diagram calls it: ``LLM(schema=BugReport)``, ``LLM(tools: search, lookup)`` or
        ``LLM(grammar)``, so two states that call the model tell apart (``label``, which a stored
        thread's signature keeps, stays ``LLM``)."""
        if self.schema is not None:
            name = self.schema.get("title") if isinstance(self.schema, dict) else getattr(self.schema, "__name__", None)
            return f"LLM(schema={name or 'JSON'})"
        if self._offered:
            return f"LLM(tools: {', '.join(tool.spec.name for tool in self._offered)})"
        return "LLM(grammar)" if self.grammar is not None else "LLM"


class CallTool:
    """Run ``fn(ctx)`` and append its result as a ``tool`` entry.

    ``fn`` returns a :class:`ToolResult` or a string (meaning success). Async functions are
    awaited; sync ones run in a worker thread (``asyncio.to_thread``) unless ``blocking=False``
    says they are quick and pure enough to run inline. An exception ends the run with
    ``ExitReason.ERROR`` (return ``ToolResult(..., ok=False)`` for failures the flow handles).

    ``repeatable=False`` says the tool must not run twice (it pays, sends, deletes): a
    checkpointed run interrupted while it ran then stops and asks a person instead of running
    it again on resume (see ``docs/live-flows.md``). ``writes`` names the flow variables its
    ``ToolResult(update=...)`` may write (for static checks; writing others is not refused).

    With ``args`` (a dict, or ``args(ctx) -> dict``), ``fn`` is a tool that takes arguments: a
    :class:`~statebound.flow.tool_calls.ModelTool` (``tool(fn)``), or a
    :class:`~statebound.flow.tool_calls.Toolset` of one tool (an MCP server's,
    :func:`statebound.mcp.mcp_tool`). Arguments that do not fit its parameters are a failed
    result, as when the model calls it; a tool that is not repeatable is announced before it runs.
    """

    __slots__ = ("_is_async", "args", "blocking", "fn", "name", "repeatable", "writes")

    def __init__(self, fn: ToolFn | ModelTool | Toolset, *, name: str | None = None, blocking: bool = True,
                 repeatable: bool = True, writes: Sequence[str] = (),
                 args: Mapping[str, Any] | Callable[[RunContext], Mapping[str, Any]] | None = None) -> None:
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
        call = None if inspect.isfunction(fn) else getattr(type(fn), "__call__", None)  # noqa: B004 - the method, to see if it is async
        self._is_async = inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(call)

    async def run(self, ctx: RunContext) -> None:
        result: Any
        fn = cast(ToolFn, self.fn)
        if self.args is not None:
            result = await self._call_with_args(ctx)
        elif self._is_async:
            result = await fn(ctx)  # type: ignore[misc]
        elif self.blocking:
            result = await asyncio.to_thread(fn, ctx)
        else:
            result = fn(ctx)
        if inspect.isawaitable(result):
            result = await result
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

    async def _call_with_args(self, ctx: RunContext) -> ToolResult:
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
