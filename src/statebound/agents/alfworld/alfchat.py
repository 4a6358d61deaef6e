"""ALFChat, the StateFlow blog's ALFWorld baselines, as a group chat (AutoGen's ALFWorld application:
``twoagent.py`` with ``src/chat_utils.py``, ``multiagent.py`` with ``src/multichat_utils.py``; the
StateFlow repository runs the same files).

**2 agents**: an assistant (a chat model, system prompt ``You are a helpful assistant.``, two
few-shot conversations of the game's type, the first prefixed with ALFChat's base prompt) and the
game's executor. The task opens with ``Your task now begins. ``; the executor turns the text after
``ACTION:`` into the closest admissible command (:mod:`statebound.agents.alfworld.matching`),
answers with the bare observation, and calls the game lost after four ``Nothing happens.`` or the
same command four times in a row; ``... now reply TERMINATE`` ends the chat, and so does a reply
containing "terminate" (any case, the runner's check: no command is sent).

**3 agents** adds a grounding agent with a commonsense hint for the task type: it speaks first (the
hint closes the opening message) and again whenever three ``Nothing happens.`` come in a row or the
last four commands hold at most two different ones (its hint closes that observation); the tenth
time the game is called lost. The assistant's replies are kept with the command that was sent
(``ACTION: <command>``), as that runner rewrites them. (The blog describes the grounding agent as
speaking after the same action three times; the code above is what ran.)

Speakers follow :func:`select_speaker` inside a :class:`~statebound.flow.GroupChat` whose
transition graph is :data:`GRAPH`. With ``speaker`` other than ``"rules"`` (3 agents; our
extension, ``-O speaker=``), the choice those rules make after an executor turn (the assistant
again, or the grounding agent's hint) is left to the group chat's ``auto`` selection by the model:
``"text"`` is AutoGen's free answer, parsed, falling back to the next role in order; the
choosers (``"auto"``, ``"score"``, ``"label"``, ``"grammar"``) pick one of the two names.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Literal

from statebound.agents.alfworld.matching import closest_command
from statebound.agents.alfworld.prompts import load_prompts
from statebound.agents.alfworld.stateflow import run_length, terminated
from statebound.agents.budget import transitions_for
from statebound.agents.turns import latest_reply
from statebound.contract.converters import trace_of_flow
from statebound.contract.trace import Trace
from statebound.envs.alfworld import AlfworldEnv
from statebound.flow import (
    AUTO,
    CallLLM,
    CallTool,
    Flow,
    GroupChat,
    Role,
    RunContext,
    State,
    ToolResult,
    always,
)
from statebound.flow.rules import TransitionMethod
from statebound.llm.base import LLM, Message

__all__ = ["GRAPH", "RULES", "AlfChat", "Speaker", "build_alfchat", "chat_messages", "select_speaker"]

OPENING = "Your task now begins. "
GRAPH = {"assistant": ["alfworld"], "alfworld": ["assistant", "grounding"], "grounding": ["assistant"]}
_SYSTEM = {2: "You are a helpful assistant.", 3: "You are a helpful assistant"}
_WON = {2: "Task success, now reply TERMINATE\n", 3: "Task success, now reply TERMINATE.\n"}
_LOST = "Task failed, now reply TERMINATE.\n"
_GIVEN_UP = "Task failed, now reply TERMINATE."
_GROUNDINGS = 10  # the tenth hint loses the game
RULES: Literal["rules"] = "rules"  # the runner's own speaker rules (AutoGen's ALFWorld code)
Speaker = Literal["rules"] | TransitionMethod


@cache
def _prompts() -> dict[str, object]:
    return load_prompts("alfchat_alfworld.json")


def _context(task_type: str) -> list[Message]:
    """The two few-shot conversations, roles alternating from ``user`` over both, the first message
    prefixed with the base prompt (``set_context`` and ``get_examples`` of the runner)."""
    data = _prompts()
    turns = [turn for n in (1, 2) for turn in data["examples"][f"{task_type}_{n}"]]  # type: ignore[index]
    turns[0] = str(data["base"]) + turns[0]
    return [Message("user" if i % 2 == 0 else "assistant", text) for i, text in enumerate(turns)]


def _hint(task_type: str) -> str:
    return str(_prompts()["hints"][task_type])  # type: ignore[index]


def chat_messages(agents: int, task_type: str) -> Callable[[RunContext], list[Message]]:
    """The assistant's chat: system prompt, examples, then the game so far; the executor's and the
    grounding agent's words that follow each other make one user message; with 3 agents each of the
    assistant's replies reads ``ACTION: <the command sent>``."""

    def render(ctx: RunContext) -> list[Message]:
        messages = [Message("system", _SYSTEM[agents]), *_context(task_type)]
        pending = ""  # the user message being built
        commands = iter([e.data["command"] for e in ctx.history if e.name == "alfworld" and isinstance(e.data, dict)])
        for entry in ctx.history:
            if entry.source == "llm":
                messages.append(Message("user", pending))
                pending = ""
                content = entry.content
                if agents == 3:
                    content = content[: content.find("ACTION:")] + "ACTION: " + next(commands, "")
                messages.append(Message("assistant", content))
            elif entry.source in ("task", "tool"):
                pending += entry.content
        return [*messages, Message("user", pending)]

    return render


def _turns(ctx: RunContext) -> list[dict[str, object]]:
    return [e.data for e in ctx.history if e.name == "alfworld" and isinstance(e.data, dict)]


def executor(agents: int) -> Callable[[RunContext], ToolResult]:
    """The game's side of the chat (``ALFAgent._generate_reply_for_assistant``)."""

    def turn(ctx: RunContext) -> ToolResult:
        if (ended := terminated(ctx)) is not None:
            return ended
        env: AlfworldEnv = ctx.deps
        command = closest_command(latest_reply(ctx), env.admissible_commands(), marker="ACTION:", trigger="ACTION: ")
        result = env.step(command)
        earlier = _turns(ctx)
        data: dict[str, object] = {"command": command, "nothing": "Nothing happens" in result.observation,
                                   "ended": False, "ground": False}
        if result.done:
            return ToolResult(_WON[agents] if env.won else _LOST, ok=result.ok, data={**data, "ended": True})
        invalid = run_length(earlier, "nothing", True) + 1 if data["nothing"] else 0
        if agents == 2:
            same = run_length(earlier, "command", command)
            if invalid == 4 or same == 3:
                return ToolResult(_GIVEN_UP, ok=result.ok, data={**data, "ended": True})
            return ToolResult(result.observation, ok=result.ok, data=data)
        commands = [str(t["command"]) for t in earlier] + [command]
        since_hint = run_length(earlier, "ground", False)  # the counter restarts at a hint
        invalid = min(invalid, since_hint + 1) if data["nothing"] else 0
        stuck = len(commands) >= 4 and len(set(commands[-4:])) <= 2
        ground = invalid == 3 or stuck
        if ground and sum(1 for t in earlier if t["ground"]) + 1 == _GROUNDINGS:
            return ToolResult(_LOST, ok=result.ok, data={**data, "ground": True, "ended": True})
        return ToolResult(result.observation, ok=result.ok, data={**data, "ground": ground})

    turn.__name__ = "alfworld"
    return turn


def select_speaker(agents: int, *, by_model: bool = False) -> Callable[[Role | None, RunContext], str | None]:
    """Grounding first (3 agents), then assistant and executor in turn; the grounding agent after an
    executor turn that asks for it (``by_model``: after every executor turn, the group chat's
    ``auto`` selection decides); nobody once the game has ended."""

    def select(last: Role | None, ctx: RunContext) -> str | None:
        if last is None:
            return "grounding" if agents == 3 else "assistant"
        if last.name == "assistant":
            return "alfworld"
        if last.name == "grounding":
            return "assistant"
        data = _turns(ctx)[-1]
        if data["ended"]:
            return None
        if by_model and agents == 3:
            return AUTO
        return "grounding" if data["ground"] else "assistant"

    return select


def build_alfchat(task_type: str, *, agents: int = 2, max_turns: int = 50, max_tokens: int = 128,
                  speaker: Speaker = RULES) -> Flow:
    """ALFChat with 2 or 3 agents for ``task_type``; ``deps`` must be an ``AlfworldEnv(admissible=True)``;
    ``speaker``: who speaks after the executor (module docstring)."""
    roles = [Role("assistant", CallLLM(max_tokens=max_tokens, render=chat_messages(agents, task_type)),
                  description="the player: it decides the next action"),
             Role("alfworld", CallTool(executor(agents), name="alfworld"))]
    if agents == 3:
        roles.append(Role("grounding", CallTool(lambda ctx: _hint(task_type), name="grounding"),
                          description="gives a commonsense hint when the player is stuck"))
    names = {r.name for r in roles}
    graph: dict[Role | str, Sequence[Role | str]] = {
        speaker: [n for n in after if n in names] for speaker, after in GRAPH.items() if speaker in names}
    by_model = speaker != RULES
    chat = GroupChat(roles, select_speaker=select_speaker(agents, by_model=by_model), allowed_transitions=graph,
                     max_rounds=transitions_for(max_turns, per_action=3, outside=2), auto_method=speaker if by_model else "text")  # type: ignore[arg-type]
    return Flow(name=f"alfchat-{agents}agents-{task_type}", initial="Chat", max_turns=2, states=[
        State("Chat", outputs=[chat], transitions=[(always(), "End")]), State("End", final=True)])


@dataclass(frozen=True, slots=True)
class AlfChat:
    """The agent: ALFChat with ``agents`` (2 or 3) for the game's task type."""

    agents: int
    max_turns: int
    speaker: Speaker = RULES

    async def __call__(self, task: str, *, llm: LLM, env: AlfworldEnv) -> Trace:
        flow = build_alfchat(env.task_type, agents=self.agents, max_turns=self.max_turns, speaker=self.speaker)
        return trace_of_flow(await flow.run(OPENING + task, llm=llm, deps=env), data_keys=("command",))
