"""statebound: LLM agents whose behaviour is bound by explicit state machines.

The names a program needs, from one place::

    from statebound import CallLLM, Flow, FunctionLLM, State, always, open_model

Flows (:mod:`statebound.flow`), models (:mod:`statebound.llm`), behaviour specs
(:mod:`statebound.spec`), live-flow stores (:mod:`statebound.flow.live`) and the harness
(:mod:`statebound.bench`); each subpackage holds the rest. Names load on first use, so
``import statebound`` stays light (no model, SDK or numeric stack).
"""

from __future__ import annotations

import importlib
import warnings
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

_EXPORTS: dict[str, tuple[str, ...]] = {
    "statebound.flow": (
        "Flow", "State", "StateAgent", "Instruction", "CallLLM", "CallTool", "ToolResult", "Pick", "ChoiceMethod",
        "GroupChat",
        "Role", "AskHuman", "always", "contains", "matches", "repeated", "tool_ok", "tool_failed",
        "called", "llm_choice", "choose", "check_flow", "RunContext", "RunResult", "ExitReason", "Update", "tool",
    ),
    "statebound.flow.live": ("SQLiteCheckpointer", "PostgresCheckpointer", "open_checkpointer"),
    "statebound.llm": (
        "LLM", "Request", "Completion", "Sample", "Usage", "Capabilities", "Message", "chat", "open_model",
        "list_models", "FunctionLLM", "ScriptedLLM", "check_llm", "BackendProtocolError",
    ),
    "statebound.spec": ("Spec", "parse_spec", "load_bundled", "check_spec"),
    "statebound.bench": ("TaskSelection", "Execution", "prepare_run", "execute_run"),
    "statebound.contract": ("EpisodeLimits", "Benchmark", "BenchmarkOptions", "AgentSpec", "Setup", "Task", "Grade"),
    "statebound.contract.converters": ("FlowAgent",),
    "statebound.report.finish": ("finish_run",),
    "statebound.envs.base": ("StepResult", "Score"),
    "statebound.bench.evaluate": ("run_task",),
    "statebound.errors": ("StateboundError", "DefinitionError"),
}
_RENAMED = {"parse_spec": "parse", "StateAgent": "Agent", "Sample": "Choice"}  # the name in its module
_WHERE = {name: module for module, names in _EXPORTS.items() for name in names}
# Names that meant two things, kept working with a DeprecationWarning: old name -> new name.
_DEPRECATED = {
    "Agent": "StateAgent",  # a state's own instruction and model (the SF_Agent view), not a harness agent
    "Choice": "Sample",  # one sampled reply of a model, not a choice state (Pick)
}

__all__ = [
    "__version__",
    "always", "AskHuman", "BackendProtocolError", "called", "CallLLM", "CallTool", "Capabilities", "chat",
    "check_flow", "check_llm", "check_spec", "ChoiceMethod", "choose", "Completion", "contains", "DefinitionError",
    "EpisodeLimits", "execute_run", "Execution", "ExitReason", "finish_run", "Flow", "FunctionLLM",
    "GroupChat", "Instruction", "list_models", "LLM", "llm_choice", "load_bundled", "matches", "Message",
    "open_checkpointer", "open_model", "parse_spec", "Pick", "PostgresCheckpointer", "prepare_run",
    "repeated", "Request", "Role", "run_task", "RunContext", "RunResult", "Sample", "ScriptedLLM", "Spec",
    "SQLiteCheckpointer", "State", "StateAgent", "StateboundError", "TaskSelection", "tool", "tool_failed", "tool_ok",
    "ToolResult", "Usage", "Update", "Benchmark", "BenchmarkOptions", "AgentSpec", "Setup", "Task", "Grade", "FlowAgent",
    "StepResult", "Score",
]


def __getattr__(name: str) -> Any:
    if name in _DEPRECATED:
        new = _DEPRECATED[name]
        warnings.warn(f"statebound.{name} is now statebound.{new} (the same class); the old name will go",
                      DeprecationWarning, stacklevel=2)
        return __getattr__(new)
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'statebound' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), _RENAMED.get(name, name))
    globals()[name] = value  # later look-ups skip this function
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_WHERE])


if TYPE_CHECKING:  # what type checkers and editors see
    from statebound.bench import Execution, TaskSelection, execute_run, prepare_run
    from statebound.bench.evaluate import run_task
    from statebound.contract import (
        AgentSpec,
        Benchmark,
        BenchmarkOptions,
        EpisodeLimits,
        Grade,
        Setup,
        Task,
    )
    from statebound.contract.converters import FlowAgent
    from statebound.envs.base import Score, StepResult
    from statebound.errors import DefinitionError, StateboundError
    from statebound.flow import Agent as StateAgent
    from statebound.flow import (
        AskHuman,
        CallLLM,
        CallTool,
        ChoiceMethod,
        ExitReason,
        Flow,
        GroupChat,
        Instruction,
        Pick,
        Role,
        RunContext,
        RunResult,
        State,
        ToolResult,
        Update,
        always,
        called,
        check_flow,
        choose,
        contains,
        llm_choice,
        matches,
        repeated,
        tool,
        tool_failed,
        tool_ok,
    )
    from statebound.flow.live import PostgresCheckpointer, SQLiteCheckpointer, open_checkpointer
    from statebound.llm import (
        LLM,
        BackendProtocolError,
        Capabilities,
        Completion,
        FunctionLLM,
        Message,
        Request,
        ScriptedLLM,
        Usage,
        chat,
        check_llm,
        list_models,
        open_model,
    )
    from statebound.llm import Choice as Sample
    from statebound.report.finish import finish_run
    from statebound.spec import Spec, check_spec, load_bundled
    from statebound.spec import parse as parse_spec
