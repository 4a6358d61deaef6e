"""Output functions: what a state does when entered, in order. Each appends to the history and
declares what it is (:class:`Output`: label, reads, writes, repeatable, pure, model check).

* :class:`Instruction` -- a prompter: sends a fixed (or computed) instruction (``source="instruction"``);
* :class:`CallLLM` -- calls the LLM on the history (``source="llm"``), with a grammar, a schema or tools;
* :class:`CallTool` -- runs a tool on the context (``source="tool"``); sync tools run in a thread,
  async tools are awaited;
* :class:`Pick` -- the model picks one of the candidates the run supplies (``source="llm"``);
* :class:`Update` -- writes flow variables computed from the run;
* :class:`AskHuman` -- pauses the run until a person answers (``source="human"``);
* :class:`GroupChat` -- roles take turns inside the state, each running its own outputs;
* :class:`Agent` -- the SF_Agent view: a state's own instruction and model; the instruction goes
  into that agent's system message only and never into the shared history
  (defined in :mod:`statebound.flow.agent`).

Write your own by subclassing :class:`Output` (an ``async run(ctx)`` that calls ``ctx.add`` /
``ctx.complete`` / ``ctx.update``, and what it declares; see ``docs/flow.md``).
"""

from __future__ import annotations

from statebound.flow.agent import Agent
from statebound.flow.outputs.ask_human import AskHuman
from statebound.flow.outputs.base import Output
from statebound.flow.outputs.call_llm import CallLLM
from statebound.flow.outputs.call_tool import CallTool, ToolFn
from statebound.flow.outputs.group_chat import GroupChat, Role
from statebound.flow.outputs.instruction import Instruction
from statebound.flow.outputs.pick import Pick
from statebound.flow.outputs.update import Update
from statebound.flow.tool_result import ToolResult

__all__ = ["Agent", "AskHuman", "CallLLM", "CallTool", "GroupChat", "Instruction", "Output", "Pick", "Role", "ToolFn",
           "ToolResult", "Update"]
