"""An induced machine as an ordinary flow: drawn, checked by ``flow check``, run by ``eval``.

``Start`` goes to the task type's entry state (named after the type); each state named
``<type>: <role>`` is where the run stands after an action of that role. In every state the model
picks one of the actions the environment offers now (:class:`~statebound.envs.base.OffersActions`:
ALFWorld's admissible commands) with a :class:`~statebound.flow.Pick`, the action is sent, and the
transition follows the role its template matches. What the state offers is the first of these
tiers that has an offered action not already tried:

1. the actions matching the templates of the roles that followed this one in the traces, nearest
   to ``Done`` first (the step that finishes the task comes before the ones that prepare it);
   within a tier, those whose slots take words the traces had there (the places objects were
   found) come first;
2. the backoff, when none is offered: the roles that followed this role's template in other task
   types (what the task types share, such as opening a closed receptacle while searching);
3. this role's own template again (search on), then the roles that led here (go back a step);
4. every action offered.

An action counts as already tried when it was sent since the last milestone of another kind (a
``go to`` place is tried again once the object is taken). The model chooses within the tier: by
any chooser (``score``, ``label``, ``grammar``, ``auto``) or ``random``, the control. When the
machine learnt where things were seen (``places``), the model reads, after the history, where the
task's things were seen among the places the candidates name (:mod:`statebound.induce.places`);
the candidates are the same either way, so the random control runs the same machine.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import msgspec

from statebound.agents.budget import transitions_for
from statebound.agents.turns import latest_reply, latest_tool_data
from statebound.envs.base import OffersActions
from statebound.errors import DefinitionError
from statebound.flow import (
    CallTool,
    ChoiceMethod,
    Flow,
    Pick,
    Rule,
    RunContext,
    State,
    ToolResult,
    always,
    choose,
)
from statebound.flow.validate import distances
from statebound.induce.domains import Domain, domain_for
from statebound.induce.machine import (
    DONE,
    Graph,
    Machine,
    check_machine,
    role_lines,
    templates,
    where,
)
from statebound.induce.places import places_hint
from statebound.induce.templates import Template, read_words, skeleton_of
from statebound.llm.base import Message

__all__ = ["START", "UNTRAINED", "StatePlan", "machine_flow", "state_name", "state_plans"]

START = "Start"
UNTRAINED = "Untrained"  # where a task of a type the machine never saw ends


def state_name(task_type: str, role: str | None) -> str:
    """The flow state of ``role`` in ``task_type``'s graph (the type's entry state for None)."""
    return task_type if role is None else f"{task_type}: {role}"


@dataclass(frozen=True, slots=True)
class StatePlan:
    """One state of the machine, apart from the flow that runs it (so a trace can be replayed
    through it offline): what it offers (``tiers``, module docstring) and where an action leads
    (``moves``: template, target state and label, the first match wins; else the state stays)."""

    name: str
    tiers: tuple[tuple[Template, ...], ...]
    moves: tuple[tuple[Template, str, str], ...]
    milestones: frozenset[tuple[str, int]]

    def offer(self, offered: Sequence[str], slots: Mapping[str, str], seen: set[str], sent: Sequence[str]) -> list[str]:
        """The actions of ``offered`` this state offers (``seen``: the words shown so far; ``sent``:
        the actions sent so far, latest first)."""
        for tier in self.tiers:
            fitting = {a: t for a in offered if not _tried(a, sent, self.milestones)
                       for t in tier[::-1] if t.matches(a, slots, seen)}  # the first template that fits
            if fitting:
                return [a for a, t in fitting.items() if t.preferred(a)] or list(fitting)
        return [a for a in offered if not _tried(a, sent, self.milestones)] or list(offered)

    def after(self, action: str, slots: Mapping[str, str]) -> str:
        """The state ``action`` leads to."""
        return next((target for template, target, _ in self.moves if template.matches(action, slots)), self.name)


def _distances(graph: Graph) -> dict[str, int]:
    """Transitions from each role to ``Done`` along the counted edges."""
    towards: dict[str, set[str]] = defaultdict(set)
    for role in graph.roles:
        for target in role.next:
            towards[target].add(role.name)
    return distances([DONE], towards)


def _shared_followers(machine: Machine) -> dict[str, Counter[str]]:
    """For each template, the templates that followed it in any task type, counted, keeping those
    that appear in at least two task types (the backoff: what the task types share)."""
    followers: dict[str, Counter[str]] = defaultdict(Counter)
    types_of: Counter[str] = Counter()
    for graph in machine.graphs:
        by_name = graph.by_name
        types_of.update({role.template for role in graph.roles})
        for role in graph.roles:
            for target, count in role.next.items():
                if target in by_name:
                    followers[role.template][by_name[target].template] += count
    return {template: Counter({t: n for t, n in after.items() if types_of[t] >= 2 and t != template})
            for template, after in followers.items()}


def _tried(action: str, sent: Sequence[str], milestones: frozenset[tuple[str, int]]) -> bool:
    """Whether ``action`` was sent since the last milestone of another kind (``sent``: latest first)."""
    kind = skeleton_of(action)
    for earlier in sent:
        if earlier == action:
            return True
        earlier_kind = skeleton_of(earlier)
        if earlier_kind in milestones and earlier_kind != kind:
            return False
    return False


def state_plans(machine: Machine, graph: Graph) -> dict[str | None, StatePlan]:
    """The plan of each state of ``graph``: its entry state (key None) and a state per role."""
    shared = _shared_followers(machine)
    own, by_name, distance = templates(graph), graph.by_name, _distances(graph)
    milestones = frozenset(own[r.name].skeleton for r in graph.roles if r.milestone)
    plans: dict[str | None, StatePlan] = {}
    for role in [None, *by_name]:
        followers = graph.start if role is None else by_name[role].next
        ahead = [t for t in followers if t != DONE]
        by_distance: dict[int, list[Template]] = defaultdict(list)
        for target in sorted(ahead, key=lambda t: -followers[t]):
            by_distance[distance.get(target, len(graph.roles) + 1)].append(own[target])
        tiers = [tuple(by_distance[d]) for d in sorted(by_distance)]
        back = [r.name for r in graph.roles if role is not None and role in r.next and r.name != role]
        if role is not None:
            template = by_name[role].template
            tiers += [(Template(t),) for t, _ in shared.get(template, Counter()).most_common()]
            tiers.append((own[role],))
            if back:
                tiers.append(tuple(own[name] for name in back))
        moves = [(own[t], state_name(graph.task_type, t), f"{followers[t]}x")
                 for t in sorted(ahead, key=lambda t: (-own[t].specificity, -followers[t]))]
        moves += [(own[t], state_name(graph.task_type, t), "back") for t in back if t not in ahead]
        plans[role] = StatePlan(state_name(graph.task_type, role), tuple(tiers), tuple(moves), milestones)
    return plans


def _sent(ctx: RunContext) -> list[str]:
    """The actions sent so far, latest first."""
    return [str(entry.data["action"]) for entry in reversed(ctx.history)
            if entry.source == "tool" and isinstance(entry.data, dict) and "action" in entry.data]


class _Runtime:
    """What the states of one machine share at run time: the domain, and per task a cache of its
    slot values."""

    def __init__(self, machine: Machine, domain: Domain) -> None:
        self.machine = machine
        self.domain = domain
        self._slots: dict[str, Mapping[str, str]] = {}

    def slots(self, ctx: RunContext) -> Mapping[str, str]:
        if ctx.task not in self._slots:
            self._slots[ctx.task] = self.domain.slot_values(ctx.task)
        return self._slots[ctx.task]

    def offered(self, ctx: RunContext) -> list[str]:
        env = ctx.deps
        actions = env.offered_actions() if isinstance(env, OffersActions) else None
        if actions is None:
            raise DefinitionError(f"an induced machine needs an environment that lists the actions it accepts; "
                                  f"{type(env).__name__} lists none (for {self.machine.benchmark}: "
                                  f"make_env settings {dict(self.domain.env)})")
        return list(actions)

    def candidates(self, plan: StatePlan) -> Callable[[RunContext], list[str]]:
        def offer(ctx: RunContext) -> list[str]:
            seen = read_words(" ".join([ctx.task, *(e.content for e in ctx.history if e.source == "tool")]))
            return plan.offer(self.offered(ctx), self.slots(ctx), seen, _sent(ctx))

        return offer

    def told(self, plan: StatePlan) -> Callable[[RunContext], Sequence[Message]]:
        """The history as chat messages, the last one followed by where the task's things were
        seen among the places the candidates name (:func:`places_hint`), when the counts say."""
        offer = self.candidates(plan)

        def prompt(ctx: RunContext) -> Sequence[Message]:
            messages = list(ctx.messages())
            hint = places_hint(self.machine.places, self.slots(ctx).values(), offer(ctx))
            if hint is not None:
                last = messages[-1]
                messages[-1] = msgspec.structs.replace(last, content=f"{last.content}\n{hint}")
            return messages

        return prompt

    def act(self, ctx: RunContext) -> ToolResult:
        action = latest_reply(ctx)
        result = ctx.deps.step(action)
        return ToolResult(result.observation, ok=result.ok, data={"action": action, "done": result.done,
                                                                   "won": bool(result.info.get("won", False))})

    def took(self, template: Template, label: str) -> Rule:
        return Rule(lambda ctx: template.matches(latest_reply(ctx), self.slots(ctx)), label)


def _over(ctx: RunContext) -> bool:
    return bool(latest_tool_data(ctx).get("done"))


def _acting(runtime: _Runtime, plan: StatePlan, description: str, chooser: ChoiceMethod, seed: int) -> State:
    transitions = [(Rule(_over, "over"), DONE), *[(runtime.took(t, label), target) for t, target, label in plan.moves],
                   (always(), plan.name)]
    told = bool(runtime.machine.places) and chooser != "random"  # the control reads nothing
    pick = Pick(runtime.candidates(plan), method=chooser, name="action", seed=seed,
                prompt=runtime.told(plan) if told else None)
    return State(plan.name, outputs=[pick, CallTool(runtime.act, name=runtime.machine.benchmark)],
                 transitions=transitions, description=description)


def _starts(machine: Machine, domain: Domain) -> State:
    types = machine.task_types

    def task_type(ctx: RunContext) -> str:
        found = domain.task_type(ctx.task)
        if found is None and len(types) == 1:
            return types[0]
        return found if found in types else UNTRAINED

    task_type.__name__ = "task type"
    return State(START, transitions=[choose(task_type, targets=[*types, UNTRAINED], catch_all=True)])


def machine_flow(machine: Machine, *, chooser: ChoiceMethod = "auto", seed: int = 0, max_turns: int = 50,
                 task_type: str | None = None) -> Flow:
    """``machine`` as a flow (module docstring), for every task type, or only ``task_type``'s
    (its entry state first: what an episode of that type runs). Mistakes in the machine are
    refused with the lines of its file that hold them."""
    check_machine(machine)
    domain = domain_for(machine.benchmark)
    runtime = _Runtime(machine, domain)
    graphs = [g for g in machine.graphs if task_type is None or g.task_type == task_type]
    if not graphs:
        raise DefinitionError(f"the machine has no graph for task type {task_type!r}; it knows {', '.join(machine.task_types)}")
    states = [] if task_type is not None else [_starts(machine, domain)]
    for graph in graphs:
        for role, plan in state_plans(machine, graph).items():
            about = graph.by_name[role].template if role is not None else f"a {graph.task_type} task"
            states.append(_acting(runtime, plan, about, chooser, seed))
    states += [State(DONE, final=True), *([] if task_type is not None else [State(UNTRAINED, final=True)])]
    name = f"induced-{machine.benchmark}" + (f"-{task_type}" if task_type else "")
    try:
        return Flow(name=name, initial=task_type or START, states=states, system=domain.system,
                    max_turns=transitions_for(max_turns, outside=1))
    except DefinitionError as error:
        raise DefinitionError(_with_lines(machine, str(error))) from None


def _with_lines(machine: Machine, message: str) -> str:
    """The flow's own build errors, each problem with the line of the role it names."""
    lines = role_lines(machine)
    out = []
    for problem in message.splitlines():
        if problem.startswith("- "):
            for graph in machine.graphs:
                found = next((r.name for r in graph.roles if f"'{state_name(graph.task_type, r.name)}'" in problem), None)
                if found is not None:
                    problem = f"- {where(machine, lines, graph.task_type, found)}{problem[2:]}"
                    break
        out.append(problem)
    return "\n".join(out)
