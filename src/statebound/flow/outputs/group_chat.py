"""Group-chat roles inside a state, with AutoGen's speaker-selection methods (the StateFlow post on AutoGen's blog).

``GroupChat(roles=[...], select_speaker=...)`` is an output function. ``select_speaker`` is a
method name or a function ``fn(last_speaker, ctx)``; each round the function returns

* a :class:`Role` or a role name -- that role speaks (runs its outputs, with its own agent);
* a method name -- the method picks the speaker this round:

  - ``"auto"`` (:data:`AUTO`): an LLM picks from the role names and descriptions, as
    ``auto_method`` says: ``"text"`` (the default, AutoGen's way) parses a free answer strictly,
    and if it names no role the next role in order speaks; a chooser (``"auto"``, ``"score"``,
    ``"label"``, ``"grammar"``; :mod:`statebound.flow.choosers`) picks one of the names, and the
    ``SpeakerSelected`` event records the choice;
  - ``"manual"`` (:data:`MANUAL`): a person picks, by number or name, through ``ask`` (the terminal
    by default); nothing, ``q`` or three answers that name no role leave the pick to ``auto``;
  - ``"random"`` (:data:`RANDOM`): a role at random, drawn from ``random.Random(seed)``;
  - ``"round_robin"`` (:data:`ROUND_ROBIN`): the role after the last speaker, in order;

* ``None`` -- the conversation ends and the state's transitions choose the next state.

``allowed_transitions`` is the transition graph (AutoGen's allowed speaker transitions): which
roles may speak after which. It is checked: a function that picks a role the graph does not allow
after the last speaker stops the run with a :class:`~statebound.errors.DefinitionError` naming the
transition, and the methods choose among the allowed roles only, as AutoGen 0.2 does: the only
allowed role speaks without running the method (``how="only"``), a role the graph allows nobody after
lets every role be considered, and a role the graph does not list (a sink) ends the chat. The
first speaker is free. A role speaking is one round; more than ``max_rounds`` rounds stops the run
(``TURN_LIMIT``).
"""

from __future__ import annotations

import asyncio
import inspect
import random
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, Final, Literal, cast

from statebound.errors import DefinitionError
from statebound.flow.agent import Agent
from statebound.flow.choosers import ChoiceMethod, check_method
from statebound.flow.choosing import Chooser
from statebound.flow.context import RunContext, StopRun
from statebound.flow.events import BudgetHit, SpeakerHow, SpeakerSelected
from statebound.flow.outputs.base import Output
from statebound.flow.result import ExitReason
from statebound.flow.rules import TEXT, TransitionMethod, parse_choice
from statebound.llm.base import LLM, Message, Request

__all__ = ["AUTO", "MANUAL", "METHODS", "RANDOM", "ROUND_ROBIN", "GroupChat", "Role", "SpeakerSelector"]

AUTO: Final = "auto"
MANUAL: Final = "manual"
RANDOM: Final = "random"
ROUND_ROBIN: Final = "round_robin"
Method = Literal["auto", "manual", "random", "round_robin"]
METHODS: tuple[Method, ...] = ("auto", "manual", "random", "round_robin")
MANUAL_ATTEMPTS = 3  # answers naming no role before a manual pick falls back to auto (as AutoGen)
Ask = Callable[[str], "str | Awaitable[str]"]
AutoPrompt = Literal["autogen", "statebound"]
# AutoGen 0.2 (v0.2.35) GroupChat.select_speaker_message_template and select_speaker_prompt_template,
# verbatim (autogen/agentchat/groupchat.py), indentation included
AUTOGEN_SELECT_SPEAKER_MESSAGE = """You are in a role play game. The following roles are available:
                {roles}.
                Read the following conversation.
                Then select the next role from {agentlist} to play. Only return the role."""
AUTOGEN_SELECT_SPEAKER_PROMPT = (
    "Read the above conversation. Then select the next role from {agentlist} to play. Only return the role."
)


class Role:
    """A group-chat participant: a ``name``, the outputs it runs when it speaks and optionally its
    own :class:`Agent` (instruction and model, kept out of the shared history)."""

    __slots__ = ("agent", "description", "name", "outputs")

    def __init__(self, name: str, *outputs: Output, agent: Agent | None = None, description: str = "") -> None:
        if not outputs:
            raise DefinitionError(f"role {name!r} has no outputs; give it e.g. CallLLM() or CallTool(fn)")
        for output in outputs:
            if not isinstance(output, Output):
                raise DefinitionError(f"role {name!r}: {output!r} is not an output function (Instruction, CallLLM, CallTool)")
        self.name = name
        self.outputs = tuple(outputs)
        self.agent = agent
        self.description = description

    def __repr__(self) -> str:
        return f"Role({self.name!r})"


SpeakerSelector = Callable[
    [Role | None, RunContext], Role | str | None | Awaitable[Role | str | None]
]


class GroupChat(Output):
    """An output function that lets ``roles`` take turns as ``select_speaker`` decides (module
    docstring); ``llm`` answers ``auto`` picks, ``ask`` asks a person for ``manual`` ones, ``seed``
    fixes the ``random`` draws, ``auto_method`` says how ``auto`` picks are made and ``auto_prompt``
    with whose words (AutoGen 0.2's, the default, or ours)."""

    __slots__ = ("_allowed", "_by_name", "_draw", "ask", "auto_method", "auto_prompt", "llm", "max_rounds", "reads",
                 "roles", "select_speaker", "writes")

    def __init__(
        self,
        roles: Sequence[Role],
        *,
        select_speaker: SpeakerSelector | Method,
        max_rounds: int = 20,
        llm: LLM | None = None,
        allowed_transitions: Mapping[Role | str, Sequence[Role | str]] | None = None,
        ask: Ask | None = None,
        seed: int = 0,
        auto_method: TransitionMethod = "text",
        auto_prompt: AutoPrompt = "autogen",
    ) -> None:
        if not roles:
            raise DefinitionError("GroupChat needs at least one Role")
        names = [r.name for r in roles]
        duplicates = sorted({n for n in names if names.count(n) > 1})
        if duplicates:
            raise DefinitionError(f"GroupChat role names must be unique; repeated: {duplicates}")
        reserved = sorted(set(names) & set(METHODS))
        if reserved:
            raise DefinitionError(f"a role may not be called {reserved[0]!r} (it names a speaker-selection method)")
        if not callable(select_speaker) and select_speaker not in METHODS:
            raise DefinitionError(
                f"GroupChat select_speaker must be a function fn(last_speaker, ctx) or one of {', '.join(METHODS)}; "
                f"got {select_speaker!r}"
            )
        if max_rounds < 1:
            raise DefinitionError("GroupChat max_rounds must be at least 1")
        if auto_method != TEXT:
            check_method(auto_method, where="GroupChat auto_method")
        self.auto_method = auto_method
        self.auto_prompt = auto_prompt
        self.roles = tuple(roles)
        self.select_speaker = select_speaker
        self.max_rounds = max_rounds
        self.llm = llm
        self.ask = ask
        self._by_name = {r.name: r for r in roles}
        self._allowed = None if allowed_transitions is None else self._graph(allowed_transitions)
        self._draw = random.Random(seed)
        outputs = [output for role in self.roles for output in role.outputs]  # what they declare, it declares
        self.writes = tuple(dict.fromkeys(name for output in outputs for name in output.writes))
        self.reads = tuple(dict.fromkeys(name for output in outputs for name in output.reads))

    def _graph(self, transitions: Mapping[Role | str, Sequence[Role | str]]) -> dict[str, tuple[str, ...]]:
        def name_of(role: Role | str) -> str:
            name = role.name if isinstance(role, Role) else role
            if name not in self._by_name:
                raise DefinitionError(
                    f"allowed_transitions names {name!r}, which is not a role of this group chat "
                    f"({', '.join(self._by_name)})"
                )
            return name

        return {name_of(source): tuple(name_of(t) for t in targets) for source, targets in transitions.items()}

    @property
    def label(self) -> str:
        return "GroupChat(" + ", ".join(r.name for r in self.roles) + ")"

    def check_model(self, llm: LLM | None, *, where: str) -> None:
        for role in self.roles:
            model = (role.agent.llm if role.agent is not None else None) or llm
            for output in role.outputs:
                output.check_model(model, where=f"{where}, role {role.name!r}")

    def allowed_after(self, last: Role | None) -> tuple[Role, ...]:
        """The roles that may speak after ``last``, filtered as AutoGen 0.2's GroupChat does: every
        role first or without a graph; nobody after a role the graph does not list (a sink: the chat
        ends); every role when the graph lists ``last`` but allows nobody in the group."""
        if last is None or self._allowed is None:
            return self.roles
        if last.name not in self._allowed:
            return ()
        allowed = set(self._allowed[last.name])
        return tuple(r for r in self.roles if r.name in allowed) or self.roles

    async def run(self, ctx: RunContext) -> None:
        last: Role | None = None
        outer_agent = ctx.agent
        try:
            for _ in range(self.max_rounds + 1):
                speaker = await self._next_speaker(last, ctx)
                if speaker is None:
                    return
                if _ == self.max_rounds:
                    ctx.emit(BudgetHit("rounds", ctx.state, self.max_rounds, self.max_rounds))
                    raise StopRun(ExitReason.TURN_LIMIT, f"group chat used all {self.max_rounds} rounds")
                ctx.speaker, ctx.agent = speaker.name, speaker.agent or outer_agent
                for output in speaker.outputs:
                    await output.run(ctx)
                    ctx.check_budget()
                ctx.speaker, ctx.agent = None, outer_agent
                last = speaker
        finally:
            ctx.speaker, ctx.agent = None, outer_agent

    async def _next_speaker(self, last: Role | None, ctx: RunContext) -> Role | None:
        picked: object = self.select_speaker
        if callable(picked):
            picked = picked(last, ctx)
            if inspect.isawaitable(picked):
                picked = await picked
        if picked is None:
            return None
        candidates = self.allowed_after(last)
        how: SpeakerHow = "function"
        choice: Mapping[str, Any] | None = None
        if isinstance(picked, str) and picked in METHODS:
            if not candidates:
                return None  # the last speaker is a sink of the graph: the chat ends
            if len(candidates) == 1:  # AutoGen returns the only eligible speaker without selecting
                picked, how = candidates[0], "only"
            else:
                picked, how, choice = await self._by_method(cast(Method, picked), last, candidates, ctx)
        role = picked if isinstance(picked, Role) else self._by_name.get(str(picked)) if isinstance(picked, str) else None
        if role is None or self._by_name.get(role.name) is not role:
            raise DefinitionError(
                f"speaker selection returned {picked!r}, which is not a role of this group chat "
                f"({', '.join(self._by_name)}); return a Role, a role name, one of {', '.join(METHODS)} or None"
            )
        if role not in candidates:
            raise DefinitionError(
                f"speaker selection chose {role.name!r} after {last.name if last is not None else None!r}, which "
                f"allowed_transitions does not allow (allowed: {', '.join(r.name for r in candidates) or 'none'})"
            )
        ctx.emit(SpeakerSelected(ctx.state, role.name, how, choice))
        return role

    async def _by_method(
        self, method: Method, last: Role | None, candidates: tuple[Role, ...], ctx: RunContext
    ) -> tuple[Role, SpeakerHow, Mapping[str, Any] | None]:
        if method == RANDOM:
            return self._draw.choice(candidates), RANDOM, None
        if method == ROUND_ROBIN:
            return _after(last, self.roles, candidates), ROUND_ROBIN, None
        if method == MANUAL:
            chosen = await self._manual(candidates)
            if chosen is not None:
                return chosen, MANUAL, None
        return await self._auto(last, candidates, ctx)

    async def _manual(self, candidates: tuple[Role, ...]) -> Role | None:
        """A person's pick, by number or name; None leaves it to ``auto``."""
        listing = "\n".join(f"{i}: {r.name}" for i, r in enumerate(candidates, 1))
        question = (f"Who should speak next?\n{listing}\n"
                    "Enter the number or name of the next speaker (nothing or q: let the model choose): ")
        for _ in range(MANUAL_ATTEMPTS):
            answer = self.ask(question) if self.ask is not None else await asyncio.to_thread(input, question)
            if inspect.isawaitable(answer):
                answer = await answer
            text = str(answer).strip()
            if text in ("", "q"):
                return None
            if text.isdigit() and 1 <= int(text) <= len(candidates):
                return candidates[int(text) - 1]
            named = next((r for r in candidates if r.name == text), None)
            if named is not None:
                return named
        return None

    def _auto_messages(self, candidates: tuple[Role, ...], ctx: RunContext) -> tuple[Message, ...]:
        """The conversation framed for an ``auto`` pick: AutoGen 0.2's ``select_speaker_msg`` as a
        system message and its ``select_speaker_prompt`` after the conversation (``auto_prompt="autogen"``),
        or one question of ours after it (``"statebound"``)."""
        if self.auto_prompt == "autogen":
            names = str([r.name for r in candidates])
            system = AUTOGEN_SELECT_SPEAKER_MESSAGE.format(roles=_roles_text(candidates), agentlist=names)
            return (Message("system", system), *ctx.messages(),
                    Message("user", AUTOGEN_SELECT_SPEAKER_PROMPT.format(agentlist=names)))
        options = "\n".join(f"- {r.name}: {r.description}" if r.description else f"- {r.name}" for r in candidates)
        question = f"Who should speak next?\nRoles:\n{options}\nAnswer with exactly one role name and nothing else."
        return (*ctx.messages(), Message("user", question))

    async def _auto(self, last: Role | None, candidates: tuple[Role, ...],
                    ctx: RunContext) -> tuple[Role, SpeakerHow, Mapping[str, Any] | None]:
        messages = self._auto_messages(candidates, ctx)
        names = tuple(r.name for r in candidates)
        if self.auto_method != TEXT:
            chooser = Chooser(cast(ChoiceMethod, self.auto_method), "speaker", self.llm, call="speaker")
            choice, _ = await chooser.choose(ctx, names, messages)
            return self._by_name[choice.text or names[0]], "auto", choice.to_data()["choice"]
        completion = await ctx.complete(Request(messages=messages, max_tokens=16), llm=self.llm, kind="speaker")
        name = parse_choice(completion.text, names)
        if name is not None:
            return self._by_name[name], "auto", None
        return _after(last, self.roles, candidates), "fallback", None


def _roles_text(roles: tuple[Role, ...]) -> str:
    """AutoGen's ``_participant_roles``: ``name: description`` a line."""
    return "\n".join(f"{r.name}: {r.description}".strip() for r in roles)


def _after(last: Role | None, roles: tuple[Role, ...], candidates: tuple[Role, ...]) -> Role:
    """The first of ``candidates`` after ``last`` in the order of ``roles`` (wrapping round)."""
    start = 0 if last is None else roles.index(last) + 1
    ordered = roles[start:] + roles[:start]
    return next(r for r in ordered if r in candidates)
