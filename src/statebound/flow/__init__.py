"""StateFlow: LLM task solving as state machines.

A :class:`Flow` has states; entering a state runs its output functions in order
(:class:`Instruction`, :class:`CallLLM`, :class:`CallTool`, :class:`GroupChat`), each appending
to the shared context history; then its transitions pick the next state, by rules over the history
(:func:`contains`, :func:`matches`, :func:`repeated`, :func:`tool_ok`, :func:`tool_failed`, :func:`called`, :func:`always`,
:func:`choose`, :func:`first_due`) or by asking an LLM (:func:`llm_choice`). A run ends in a final state or at a
limit (turns, visits per state, token budget) and returns a :class:`RunResult`.
:class:`Pick` is a choice state's output: the model picks one of the candidates the run supplies,
by its scores (or a choice grammar; or a seeded random draw, the control).
:func:`check_flow` lints a flow for what is legal but almost certainly wrong.

The SF_Agent view: ``State(..., agent=Agent(instruction, llm=...))`` gives a state its own
instruction and model; the instruction is never stored in the shared history.

Live flows (:mod:`statebound.flow.live`): ``flow.run(task, checkpointer=..., thread=...)`` stores
every step; ``flow.resume(thread, input=...)`` continues after a crash or a pause
(:class:`AskHuman`); checkpointers list and fork threads.

See ``docs/flow.md`` and ``docs/live-flows.md`` for a walk-through.
"""

from __future__ import annotations

from statebound.flow.checks import FlowDiagnostic, check_flow
from statebound.flow.choosing import (
    ChoiceMethod,
    Picked,
    choice_grammar,
    is_choice_grammar,
    last_pick,
    offered,
    picks,
)
from statebound.flow.context import RunContext
from statebound.flow.engine import FlowRun, RunOptions
from statebound.flow.events import (
    BudgetHit,
    MessageAdded,
    OutputDone,
    SpeakerSelected,
    StateEntered,
    TokenDelta,
    TransitionTaken,
    VarsWritten,
)
from statebound.flow.history import Entry, to_messages
from statebound.flow.listeners import Event, EventCallback, RunFinished
from statebound.flow.live import Checkpointer, PostgresCheckpointer, SQLiteCheckpointer
from statebound.flow.model import Flow, State
from statebound.flow.nested import ChildEvent
from statebound.flow.outputs import (
    Agent,
    AskHuman,
    CallLLM,
    CallTool,
    GroupChat,
    Instruction,
    Output,
    Pick,
    Role,
    ToolResult,
    Update,
)
from statebound.flow.outputs.group_chat import AUTO, MANUAL, RANDOM, ROUND_ROBIN
from statebound.flow.outputs.parallel import FanOut, Parallel
from statebound.flow.outputs.sub import BranchFailed, Sub
from statebound.flow.pauses import questions
from statebound.flow.reducers import Reducer, append, extend, maximum, minimum, union
from statebound.flow.result import CallRecord, ExitReason, RunResult
from statebound.flow.rules import (
    Decider,
    Decision,
    FirstDue,
    Rule,
    RuleEdge,
    always,
    called,
    choose,
    contains,
    first_due,
    llm_choice,
    matches,
    parse_choice,
    repeated,
    tool_failed,
    tool_ok,
)
from statebound.flow.tool_calls import FunctionTool, tool
from statebound.flow.variables import VarsSpec

__all__ = [
    # model
    "Flow",
    "State",
    "Update",
    "VarsSpec",
    "Agent",
    # output functions
    "Output",
    "Instruction",
    "CallLLM",
    "CallTool",
    "ToolResult",
    "tool",
    "FunctionTool",
    "Pick",
    "Picked",
    "ChoiceMethod",
    "choice_grammar",
    "is_choice_grammar",
    "offered",
    "last_pick",
    "picks",
    "GroupChat",
    "Role",
    "AUTO",
    "MANUAL",
    "RANDOM",
    "ROUND_ROBIN",
    "AskHuman",
    # machines inside machines, branches in parallel
    "Sub",
    "Parallel",
    "FanOut",
    "BranchFailed",
    "Reducer",
    "append",
    "extend",
    "union",
    "maximum",
    "minimum",
    "questions",
    # transitions
    "Rule",
    "Decider",
    "Decision",
    "RuleEdge",
    "FirstDue",
    "always",
    "contains",
    "matches",
    "repeated",
    "tool_ok",
    "tool_failed",
    "called",
    "llm_choice",
    "choose",
    "first_due",
    "parse_choice",
    # static checks
    "check_flow",
    "FlowDiagnostic",
    # running
    "FlowRun",
    "RunOptions",
    "RunContext",
    "RunResult",
    "ExitReason",
    "CallRecord",
    "Entry",
    "to_messages",
    # live flows
    "Checkpointer",
    "SQLiteCheckpointer",
    "PostgresCheckpointer",
    # events
    "Event",
    "EventCallback",
    "StateEntered",
    "OutputDone",
    "MessageAdded",
    "SpeakerSelected",
    "TokenDelta",
    "TransitionTaken",
    "VarsWritten",
    "BudgetHit",
    "ChildEvent",
    "RunFinished",
]
