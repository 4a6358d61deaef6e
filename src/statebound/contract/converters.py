"""Traces from the three cores: a flow run, a decoding-monitor run, a chain-of-states loop; and from
a list of actions an oracle played.

Every converter keeps what the core recorded, in order; an entry's ``data`` keeps the structured
values worth seeing in ``statebound show`` (the action sent, a choice's candidates and scores).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from statebound.chain.loop import LoopEpisode
from statebound.contract.result import CALLS_KEY, VARS_KEY
from statebound.contract.trace import Trace, TraceEntry, TraceRole
from statebound.envs.base import StepResult
from statebound.exits import ExitReason
from statebound.flow import Flow, RunResult
from statebound.llm.base import LLM
from statebound.spec.model import Spec
from statebound.spec.results import MonitorResult

__all__ = ["CHOICE_KEY", "FlowAgent", "trace_of_actions", "trace_of_flow", "trace_of_loop", "trace_of_monitor"]

CHOICE_KEY = "choice"  # an entry's data key holding a choice state's candidates and scores


def _vars_data(value: Any) -> Any:
    """The flow variables as JSON (a dataclass or pydantic model, as a checkpoint stores it)."""
    from pydantic import TypeAdapter

    return TypeAdapter(type(value)).dump_python(value, mode="json")


def _calls(run: RunResult) -> list[dict[str, Any]]:
    """Each model call of the run: its state, what for, tokens and seconds (for the viewer)."""
    return [{"state": call.state, "kind": call.kind, "prompt_tokens": call.usage.prompt_tokens,
             "completion_tokens": call.usage.completion_tokens,
             "seconds": None if call.seconds is None else round(call.seconds, 4)} for call in run.calls]


def trace_of_flow(run: RunResult, *, data_keys: Sequence[str] = (), meta: Mapping[str, Any] | None = None) -> Trace:
    """A flow run as a trace: every history entry with its source and ``ok``; ``data_keys`` names
    the keys of a tool's structured ``data`` (when it is a dict) to keep (a choice is always kept).
    The meta keeps the flow's variables where it ended (:data:`VARS_KEY`, when it has them) and
    its model calls with their timings (:data:`CALLS_KEY`)."""
    keys = (*data_keys, CHOICE_KEY)
    entries = []
    for item in run.history:
        data = item.data if isinstance(item.data, dict) else {}
        entries.append(TraceEntry(state=item.state, role=item.role, content=item.content, source=item.source,
                                  ok=item.ok, usage=item.usage, data={k: data[k] for k in keys if k in data}))
    return Trace(
        entries=tuple(entries),
        exit=run.exit_reason,
        exit_state=run.exit_state,
        usage=run.usage,
        cost_usd=run.cost,
        error=None if run.error is None else f"{type(run.error).__name__}: {run.error}",
        events=tuple(event.to_dict() for event in run.events),
        meta={**({} if run.vars is None else {VARS_KEY: _vars_data(run.vars)}),
              **({CALLS_KEY: _calls(run)} if run.calls else {}), **(meta or {})},
    )


@dataclass(frozen=True, slots=True)
class FlowAgent:
    """A flow as an agent: runs it with the environment as ``deps``; ``data_keys`` as in
    :func:`trace_of_flow`; ``task_label`` goes before the task text (e.g. ``"Question: "``)."""

    flow: Flow
    data_keys: tuple[str, ...] = ()
    task_label: str = ""

    async def __call__(self, task: str, *, llm: LLM, env: Any) -> Trace:
        run = await self.flow.run(self.task_label + task, llm=llm, deps=env)
        return trace_of_flow(run, data_keys=self.data_keys)


def monitor_exit(result: MonitorResult) -> ExitReason:
    """How a monitor run ended: its model-call budget is the QA agents' turn limit."""
    return {"budget": ExitReason.TURN_LIMIT, "context": ExitReason.CONTEXT}.get(result.stop_reason, ExitReason.FINAL)


def trace_of_monitor(
    spec: Spec,
    result: MonitorResult,
    *,
    details: Iterable[Sequence[Mapping[str, Any]]] = (),
    answer: str | None = None,
    meta: Mapping[str, Any] | None = None,
) -> Trace:
    """A monitor run as a trace: the task (``user``), the model's text (``assistant``) and the
    environment's text (``tool``) per spec state; each environment state is preceded by
    ``details``, what its handler did (tool calls, summaries), one sequence per environment state."""
    env_states = {s.name for s in spec.env_states}
    pending = iter(details)
    entries: list[TraceEntry] = []
    for index, segment in enumerate(result.segments):
        if segment.state in env_states:
            entries += [_entry(item) for item in next(pending, ())]
        role: TraceRole = "user" if index == 0 else "tool" if segment.state in env_states else "assistant"
        entries.append(TraceEntry(state=segment.state, role=role, content=segment.text.strip()))
    last = result.segments[-1].state if result.segments else None
    return Trace(entries=tuple(entries), exit=monitor_exit(result), exit_state=last, answer=answer,
                 usage=result.usage, meta=dict(meta or {}))


def _entry(item: Mapping[str, Any]) -> TraceEntry:
    fields = {"state", "role", "content", "ok"}
    return TraceEntry(state=item.get("state"), role=item.get("role", "tool"), content=str(item.get("content", "")),
                      ok=item.get("ok"), data={k: v for k, v in item.items() if k not in fields})


def trace_of_loop(episode: LoopEpisode, *, meta: Mapping[str, Any] | None = None) -> Trace:
    """A chain-of-states (or ReAct) loop as a trace: the prompt, then each reply with its action and
    usage, and each observation with ``ok`` and how the environment rewrote the action."""
    entries = [TraceEntry(state=None, role="user", content=episode.prompt)]
    for turn in episode.turns:
        entries.append(TraceEntry(state=None, role="assistant", content=turn.reply, usage=turn.usage,
                                  data={"action": turn.action}))
        entries.append(TraceEntry(state=None, role="tool", content=turn.observation, ok=turn.ok,
                                  data={"rewrite": turn.rewrite}))
    return Trace(entries=tuple(entries), exit=episode.exit_reason, usage=episode.usage,
                 meta={"llm_turns": len(episode.turns), "turns_dropped": episode.turns_dropped, **(meta or {})})


def trace_of_actions(state: str, task: str, played: Sequence[tuple[str, StepResult]], *,
                     finished: bool) -> Trace:
    """Actions an oracle sent (``(action, result)`` pairs) as a trace in one ``state``; ``finished``:
    the oracle ended the episode itself (rather than running out of actions or turns)."""
    entries = [TraceEntry(state=state, role="user", content=task)]
    for action, result in played:
        entries.append(TraceEntry(state=state, role="assistant", content=action))
        entries.append(TraceEntry(state=state, role="tool", content=result.observation, ok=result.ok))
    return Trace(entries=tuple(entries), exit=ExitReason.FINAL if finished else ExitReason.TURN_LIMIT,
                 exit_state=state)
