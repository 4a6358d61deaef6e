"""The output function that calls the model: ``CallLLM(...)``, with a grammar, a schema or tools."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from statebound.errors import DefinitionError, StructuredOutputError, UnsupportedFeature
from statebound.flow.choosing import grammar_choice
from statebound.flow.context import RunContext
from statebound.flow.outputs.base import Output
from statebound.flow.structured import ask_structured, check_schema_support
from statebound.flow.tool_calls import (
    ModelTool,
    Toolset,
    as_tools,
    calls_in_progress,
    render_calls,
    resolve_tools,
    run_tool_calls,
)
from statebound.llm.base import LLM, Message, Request, ToolSpec
from statebound.llm.json_schema import SchemaTarget, json_schema

__all__ = ["CallLLM"]


@dataclass(frozen=True, slots=True, kw_only=True)
class CallLLM(Output):
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
    ``writes`` names the flow variables the tools' ``ToolResult(update=...)`` may write (each
    ``tool(fn, writes=[...])`` adds its own; writing another is an error naming it). A :class:`Toolset` among the
    ``tools`` (an MCP server's, :func:`statebound.mcp.mcp`) gives its tools as the output runs.
    """

    llm: LLM | None = None
    max_tokens: int = 256
    stop: Sequence[str] = ()
    temperature: float = 0.0
    grammar: str | Callable[[RunContext[Any, Any]], str | None] | None = None
    render: Callable[[RunContext[Any, Any]], Sequence[Message]] | None = None
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
        object.__setattr__(self, "writes", tuple(dict.fromkeys((*written, *((self.into,) if self.into else ())))))
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

    async def run(self, ctx: RunContext[Any, Any]) -> None:
        offered, specs = self._offered, self._specs
        if self._toolsets:
            offered = await resolve_tools(ctx, offered, self._toolsets)
            specs = tuple(tool.spec for tool in offered)
            self._check_choice(offered)
        if offered and (progress := calls_in_progress(ctx.history, ctx.output_start)) is not None:
            calls, done = progress  # resumed after the reply was stored: its calls go on
            await run_tool_calls(ctx, calls, offered, done=done)
            return
        grammar = self.grammar(ctx) if callable(self.grammar) else self.grammar
        request = Request(
            messages=ctx.messages() if self.render is None else tuple(self.render(ctx)),
            stop=tuple(self.stop),
            max_tokens=self.max_tokens,
            temperature=self.temperature,
            grammar=grammar,
            seed=None if self.seed is None else self.seed + ctx.visits.get(ctx.state, 1) - 1,
            tools=specs,
            tool_choice=self.tool_choice,
        )
        if self.schema is not None:
            await self._structured(ctx, request, self.schema)
        else:
            await self._reply(ctx, request, grammar, offered)

    async def _structured(self, ctx: RunContext[Any, Any], request: Request, schema: SchemaTarget) -> None:
        """A reply in ``schema``: its value recorded (and written ``into`` a variable)."""
        from pydantic_core import to_jsonable_python

        name = _speaker(ctx)
        try:
            reply = await ask_structured(ctx, request, schema, llm=self.llm, retries=self.retries)
        except StructuredOutputError as misfit:  # the last reply is kept, then the run ends
            ctx.add("assistant", misfit.completion.text, "llm", name=name, usage=misfit.completion.usage)
            raise
        ctx.add("assistant", reply.completion.text, "llm", name=name, usage=reply.completion.usage,
                data={"structured": to_jsonable_python(reply.value)})
        if self.into is not None:
            ctx.update({self.into: reply.value}, by=f"CallLLM(into={self.into!r}) in state {ctx.state!r}")

    async def _reply(self, ctx: RunContext[Any, Any], request: Request, grammar: str | None,
                     offered: Sequence[ModelTool]) -> None:
        """A free reply (a choice, when held to a choice grammar), or tool calls, run at once."""
        completion = await ctx.complete(request, llm=self.llm, stream=True)
        calls = completion.choices[0].tool_calls
        if calls:
            ctx.add("assistant", completion.text if completion.text.strip() else render_calls(calls), "llm",
                    name=_speaker(ctx), usage=completion.usage, data={"tool_calls": [
                        {"id": call.id, "name": call.name, "arguments": call.arguments} for call in calls]})
            ctx.checkpoint("progress")  # the reply is stored before any call runs
            await run_tool_calls(ctx, calls, offered)
            return
        # a reply held to a choice grammar is a choice: recorded as a grammar Pick's is
        choice = None if grammar is None else grammar_choice(ctx.state, grammar, completion.text)
        ctx.add("assistant", completion.text, "llm", name=_speaker(ctx), usage=completion.usage,
                data=None if choice is None else choice.to_data())

    @property
    def label(self) -> str:
        return "LLM"

    @property
    def detail(self) -> str:
        """What a diagram calls it: ``LLM(schema=BugReport)``, ``LLM(tools: search, lookup)`` or
        ``LLM(grammar)``, so two states that call the model tell apart (``label``, which a stored
        thread's signature keeps, stays ``LLM``)."""
        if self.schema is not None:
            name = self.schema.get("title") if isinstance(self.schema, dict) else getattr(self.schema, "__name__", None)
            return f"LLM(schema={name or 'JSON'})"
        if self._offered:
            return f"LLM(tools: {', '.join(tool.spec.name for tool in self._offered)})"
        return "LLM(grammar)" if self.grammar is not None else "LLM"


def _speaker(ctx: RunContext[Any, Any]) -> str | None:
    """The name a reply is recorded under: the group-chat role speaking, else the state's agent's."""
    return ctx.speaker or (ctx.agent.name if ctx.agent is not None else None)
