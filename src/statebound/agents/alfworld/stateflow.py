"""StateFlow's ALFWorld machine as the authors' code runs it (``ALFWorld/stateflow.py`` of the
StateFlow repository; the paper gives no ALFWorld machine, the blog reports its results).

Before the game starts an agent of its own reads the task and names the **object of interest**
(``Object of interest: <object>``). Then, in the SF_Agent view (one agent per state):

- **Plan** writes a plan from the household and the task (examples of the game's task type);
- **Pick** searches the places of the plan and takes the object; it stays until ``You pick up the
  <object>``, then goes to **Clean** / **Heat** / **Cool**, **Put** or **FindLamp** by task type; a
  pick-up of anything else goes to **WrongPick**, which puts it back and returns to Pick;
- **Clean** / **Heat** / **Cool** stay until ``You clean/heat/cool the``, then go to **Put**;
- **Put** stays in Put, except in put-two tasks, where every action of Put goes back to Pick;
- **FindLamp** stays until an observation mentions a desklamp, then goes to **UseLamp**, which stays;
- any action answered ``Nothing happens.`` stays in its state; the game's end (``Task success`` or
  ``Task failed``) goes to End.

Each state's agent sends one user message (the authors' ``PromptAssistant``): its prompt, then the
conversation so far (the task, the plan, the states' replies and the game's answers), one message
per line. The game's side is the authors' runner (:func:`alfworld_turn`): the reply becomes the
closest admissible command (:mod:`statebound.agents.alfworld.matching`), the answer is
``Observation: ...``, and the game is called lost after four ``Nothing happens.`` in a row or the
same command four times in a row; a reply containing "terminate" (any case) ends the episode
without a command, as the authors' runner does.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from statebound.agents.alfworld import stateflow_prompts as prompts
from statebound.agents.alfworld.matching import closest_command
from statebound.agents.budget import transitions_for
from statebound.agents.turns import latest_reply
from statebound.contract.converters import trace_of_flow
from statebound.contract.trace import Trace
from statebound.envs.alfworld import AlfworldEnv
from statebound.flow import CallLLM, CallTool, Flow, RunContext, State, ToolResult, always
from statebound.llm.base import LLM, Message

__all__ = [
    "STATES_OF",
    "AuthorsStateFlow",
    "alfworld_turn",
    "build_stateflow",
    "object_of_interest",
    "prompt_assistant",
    "run_length",
]

WON = "Task success, now reply TERMINATE\n"
LOST = "Task failed, now reply TERMINATE.\n"
GIVEN_UP = "Task failed, now reply TERMINATE."  # the runner's early end (no newline, as theirs)
HOUSEHOLD = "Household setting: "  # how the authors' runner labels the task
TERMINATED = "TERMINATE"  # the runner's answer to a reply that says terminate (it ends the chat)
INVALID_RUN, SAME_RUN = 4, 3  # "Nothing happens." 4 times in a row; the same command 4 times in a row
_STOP = ("Observation:",)
_AFTER_PICK = {"clean": "Clean", "heat": "Heat", "cool": "Cool", "put": "Put", "puttwo": "Put", "examine": "FindLamp"}
_DONE_VERB = {"Clean": "You clean the", "Heat": "You heat the", "Cool": "You cool the"}
# the states each task type has, and the authors' agent (prompt) behind each
STATES_OF = {
    "put": ("Pick", "WrongPick", "Put"),
    "puttwo": ("Pick", "WrongPick", "Put"),
    "clean": ("Pick", "WrongPick", "Clean", "Put"),
    "heat": ("Pick", "WrongPick", "Heat", "Put"),
    "cool": ("Pick", "WrongPick", "Cool", "Put"),
    "examine": ("Pick", "WrongPick", "FindLamp", "UseLamp"),
}
_AGENT = {"Pick": "pick", "WrongPick": "wrong_pick", "Clean": "clean", "Heat": "heat", "Cool": "cool", "Put": "put",
          "FindLamp": "find_lamp", "UseLamp": "use_lamp"}
_CONVERSATION = ("task", "llm", "tool")
Rule = Callable[[RunContext], bool]


def prompt_assistant(system: str) -> Callable[[RunContext], list[Message]]:
    """One user message: ``system``, a blank line, then every message of the group chat so far on
    its own line (the object check is no part of it); a last newline unless the prompt names the
    object of interest (the authors' ``PromptAssistant.generate_oai_reply``)."""

    def render(ctx: RunContext) -> list[Message]:
        prompt = system.strip() + "\n\n"
        prompt += "".join("\n" + e.content.strip() for e in ctx.history
                          if e.source in _CONVERSATION and not (e.state == "Init" and e.source == "llm"))
        if "Object of interest" not in prompt:
            prompt += "\n"
        return [Message("user", prompt)]

    return render


def _check_messages(ctx: RunContext) -> list[Message]:
    """The object check's chat: its system prompt, the task sentence, the question."""
    sentence = ctx.task.split("Your task is to:")[-1]
    return [Message("system", prompts.CHECK_SYSTEM), Message("user", sentence), Message("user", prompts.CHECK_QUESTION)]


def object_of_interest(ctx: RunContext) -> str:
    """What the object check answered: the text after its last ``:``, lower-cased."""
    reply = next((e.content for e in ctx.history if e.state == "Init" and e.source == "llm"), "")
    return reply.split(":")[-1].strip().lower()


def _game_turns(ctx: RunContext) -> list[dict[str, object]]:
    return [e.data for e in ctx.history if e.source == "tool" and isinstance(e.data, dict) and "command" in e.data]


def terminated(ctx: RunContext) -> ToolResult | None:
    """The authors' runner (``_generate_reply_for_assistant`` in ``completion_utils.py``,
    ``chat_utils.py``, ``multichat_utils.py``): a reply containing "terminate" (any case) ends the
    episode before any command is sent."""
    if "terminate" not in latest_reply(ctx).lower():
        return None
    return ToolResult(TERMINATED, ok=True, data={"ended": True, "terminated": True})


def alfworld_turn(ctx: RunContext) -> ToolResult:
    """The authors' ALFWorld agent: send the closest admissible command, answer as their runner does."""
    if (ended := terminated(ctx)) is not None:
        return ended
    env: AlfworldEnv = ctx.deps
    command = closest_command(latest_reply(ctx), env.admissible_commands())
    result = env.step(command)
    observation = "OK." if "think" in command else result.observation
    earlier = _game_turns(ctx)
    same = run_length(earlier, "command", command)  # earlier turns in a row with this command
    invalid = run_length(earlier, "nothing", True) + 1 if "Nothing happens" in observation else 0
    data = {"command": command, "nothing": "Nothing happens" in observation, "won": env.won, "done": result.done}
    if result.done:
        return ToolResult(WON if env.won else LOST, ok=result.ok, data={**data, "ended": True})
    if invalid == INVALID_RUN or same == SAME_RUN:
        return ToolResult(f"Observation: {GIVEN_UP}", ok=result.ok, data={**data, "ended": True})
    return ToolResult(f"Observation: {observation}", ok=result.ok, data={**data, "ended": False})


def run_length(turns: Sequence[dict[str, object]], key: str, value: object) -> int:
    """How many of the latest ``turns`` in a row have ``turns[key] == value``."""
    count = 0
    for turn in reversed(turns):
        if turn.get(key) != value:
            break
        count += 1
    return count


def _said(text: str) -> Rule:
    def rule(ctx: RunContext) -> bool:
        answer = ctx.last_of("tool")
        return answer is not None and text in answer.content
    rule.__name__ = "said_" + "_".join(text.lower().split())
    return rule


def _picked_the_object(ctx: RunContext) -> bool:
    answer = ctx.last_of("tool")
    return answer is not None and f"You pick up the {object_of_interest(ctx)}" in answer.content


_ended = _said("Task success")
_failed = _said("Task failed")
_nothing = _said("Nothing happens.")
_terminated = _said(TERMINATED)


def _transitions(state: str, task_type: str) -> list[tuple[Rule, str]]:
    common: list[tuple[Rule, str]] = [(_ended, "End"), (_failed, "End"), (_terminated, "End"), (_nothing, state)]
    if state == "Pick":
        return [*common, (_picked_the_object, _AFTER_PICK[task_type]), (_said("You pick up the"), "WrongPick"),
                (always(), "Pick")]
    if state == "WrongPick":
        return [*common, (always(), "Pick")]
    if state in _DONE_VERB:
        return [*common, (_said(_DONE_VERB[state]), "Put"), (always(), state)]
    if state == "Put":
        return [*common, (always(), "Pick" if task_type == "puttwo" else "Put")]
    if state == "FindLamp":
        return [*common, (_said("desklamp"), "UseLamp"), (always(), "FindLamp")]
    return [*common, (always(), state)]  # UseLamp


def build_stateflow(task_type: str, *, max_turns: int = 50, check_tokens: int = 32, plan_tokens: int = 192,
                    act_tokens: int = 128) -> Flow:
    """The authors' machine for ``task_type`` (``put``, ``clean``, ``heat``, ``cool``, ``examine``,
    ``puttwo``); the run's ``deps`` must be an ``AlfworldEnv(admissible=True)``. The token budgets
    are ours (the authors' calls have none)."""
    acting = [
        State(name, outputs=[
            CallLLM(max_tokens=act_tokens, stop=_STOP,
                    render=prompt_assistant(prompts.SYSTEM + prompts.ACTION_PROMPTS[_AGENT[name]] + prompts.SYSTEM_END)),
            CallTool(alfworld_turn, name="alfworld"),
        ], transitions=_transitions(name, task_type))
        for name in STATES_OF[task_type]
    ]  # fmt: skip
    states = [
        State("Init", outputs=[CallLLM(max_tokens=check_tokens, stop=_STOP, render=_check_messages)],
              transitions=[(always(), "Plan")], description="the object of interest is named"),
        State("Plan", outputs=[CallLLM(max_tokens=plan_tokens, stop=_STOP,
                                       render=prompt_assistant(prompts.PLAN_HEAD + prompts.PLAN_EXAMPLES[task_type]))],
              transitions=[(always(), "Pick")]),
        *acting,
        State("End", final=True),
    ]
    # Init and Plan, then one transition per game action
    return Flow(name=f"stateflow-{task_type}", initial="Init", states=states,
                max_turns=transitions_for(max_turns, outside=2))


@dataclass(frozen=True, slots=True)
class AuthorsStateFlow:
    """The agent: the machine for the game's task type, the task labelled as the authors' runner does."""

    max_turns: int

    async def __call__(self, task: str, *, llm: LLM, env: AlfworldEnv) -> Trace:
        flow = build_stateflow(env.task_type, max_turns=self.max_turns)
        return trace_of_flow(await flow.run(HOUSEHOLD + task, llm=llm, deps=env), data_keys=("command",))
