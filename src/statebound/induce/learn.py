"""Learning a machine from solved episodes: roles, their templates, and transition counts.

Per task type:

1. Each solved episode's accepted actions are read as typed words (:func:`typed_words`: numbers,
   the task's slot values).
2. **Milestones** are the kinds of action (first word and length) an episode takes a fixed number
   of times, in at least ``share`` of the episodes: ``take`` once, ``heat`` once, ``put`` once
   (twice when two objects are put away). Moving about, opening and searching vary, so they are not.
3. An action's **role** is its kind and the number of milestones before it: ``go to`` before the
   take is searching, after it fetching the microwave, after the heat carrying the object to its
   place. So a template that plays two parts (``go to fridge`` while searching and while cooling)
   is two roles.
4. Each role's **template** is what its actions share (:func:`generalise`): the task's slots, a
   constant word (the microwave), ``{seen}`` or ``{any}``; the words that filled its free slots
   are counted (``values``: the places the object was found).
5. **Counts**: how many episodes began with each role, how often each role led to each other one,
   and to ``Done`` (the end of a solved episode).
6. **Places**: where each thing the tasks name was seen (:mod:`statebound.induce.places`): for each
   slot value of the tasks (``mug``), the places (the words of an action's free slots) whose
   observation named it, counted.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from statebound.contract.trace import Step
from statebound.induce.machine import DONE, Graph, Machine, Role
from statebound.induce.places import count_places
from statebound.induce.templates import (
    NUMBER,
    Occurrence,
    Template,
    generalise,
    read_words,
    skeleton_of,
    typed_words,
)

__all__ = ["Demonstration", "learn"]

Kind = tuple[str, int]
Visit = tuple[tuple[str, ...], frozenset[str]]  # an action's place words, the words that answered it


@dataclass(frozen=True, slots=True)
class Demonstration:
    """A solved episode to learn from: its task (id, type, text, slot values) and its steps."""

    task: str
    task_type: str
    task_text: str
    slots: Mapping[str, str]
    steps: Sequence[Step]
    tokens: int = 0
    run: str = ""


def _occurrences(demo: Demonstration, canonical: Callable[[str], str]) -> list[Occurrence]:
    """The accepted actions of ``demo``, each with the words shown before it."""
    shown = read_words(demo.task_text)
    found = []
    for step in demo.steps:
        action = canonical(step.action)
        if step.ok and action.split():
            words = tuple(action.split())
            found.append(Occurrence(words, typed_words(action, demo.slots), frozenset(shown),
                                    frozenset(read_words(step.observation))))
        shown |= read_words(step.observation)
    return found


def _fixed_positions(episodes: Sequence[Sequence[Occurrence]], min_constant: int) -> dict[Kind, set[int]]:
    """Per kind of action, the positions where every action of that kind has the same word (its
    verb and prepositions: ``take _ _ from _ _``), over every task type; only its first word for
    a kind seen fewer than ``min_constant`` times."""
    words: dict[Kind, list[tuple[str, ...]]] = defaultdict(list)
    for episode in episodes:
        for occurrence in episode:
            words[skeleton_of(" ".join(occurrence.words))].append(occurrence.typed)
    return {kind: {p for p in range(kind[1]) if len({typed[p] for typed in all_typed}) == 1}
            if len(all_typed) >= min_constant else {0} for kind, all_typed in words.items()}


def _milestones(episodes: Sequence[Sequence[Occurrence]], share: float) -> set[Kind]:
    """Kinds of action every episode (but ``1 - share`` of them) takes the same number of times,
    at least once."""
    kinds = {skeleton_of(" ".join(o.words)) for episode in episodes for o in episode}
    found = set()
    for kind in kinds:
        counts = Counter(sum(1 for o in episode if skeleton_of(" ".join(o.words)) == kind) for episode in episodes)
        times, episodes_alike = counts.most_common(1)[0]
        if times >= 1 and episodes_alike >= share * len(episodes):
            found.add(kind)
    return found


def _values(template: str, members: Sequence[Occurrence]) -> dict[str, int]:
    """How often each word filled ``template``'s free slots, most often first."""
    shape = Template(template)
    counts = Counter(word for o in members for word in shape.fillers(" ".join(o.words)))
    return dict(counts.most_common())


def _role_name(template: str, taken: set[str]) -> str:
    """The template without its instance numbers (``take {object} from {seen}``), made unique."""
    base = " ".join(word for word in template.split() if word != NUMBER) or template
    name, number = base, 1
    while name in taken or name == DONE:
        number += 1
        name = f"{base} ({number})"
    taken.add(name)
    return name


def _graph(task_type: str, episodes: Sequence[Sequence[Occurrence]], fixed: Mapping[Kind, set[int]], *,
           share: float, agree: float, min_constant: int) -> tuple[Graph, list[Visit]]:
    """The task type's graph, and each action's visit: the words of its role's free slots (its
    place) with the observation that answered it."""
    milestones = _milestones(episodes, share)
    keys: list[list[tuple[Kind, int]]] = []
    members: dict[tuple[Kind, int], list[Occurrence]] = defaultdict(list)
    for episode in episodes:
        phase, roles = 0, []
        for occurrence in episode:
            kind = skeleton_of(" ".join(occurrence.words))
            roles.append((kind, phase))
            members[(kind, phase)].append(occurrence)
            phase += kind in milestones
        keys.append(roles)
    order = sorted(members, key=lambda key: (key[1], -len(members[key]), key[0]))
    taken: set[str] = set()
    templates = {key: generalise(members[key], agree=agree, min_constant=min_constant, fixed=fixed[key[0]] | {0}).text
                 for key in order}
    names = {key: _role_name(templates[key], taken) for key in order}
    start: Counter[str] = Counter()
    following: dict[tuple[Kind, int], Counter[str]] = defaultdict(Counter)
    for roles in keys:
        if roles:
            start[names[roles[0]]] += 1
        for here, after in zip(roles, [*roles[1:], None]):
            following[here][names[after] if after is not None else DONE] += 1
    roles_out = [Role(names[key], templates[key], count=len(members[key]), next=dict(following[key].most_common()),
                      milestone=key[0] in milestones, values=_values(templates[key], members[key])) for key in order]
    visits = [(Template(templates[key]).fillers(" ".join(o.words)), o.answer) for key in order for o in members[key]]
    return Graph(task_type, roles_out, start=dict(start.most_common()), episodes=len(episodes)), visits


def learn(demonstrations: Sequence[Demonstration], *, benchmark: str, slots: Sequence[str],
          canonical: Callable[[str], str] = str.strip, share: float = 0.8, agree: float = 0.95,
          min_constant: int = 3) -> Machine:
    """A :class:`Machine` with a :class:`Graph` per task type of ``demonstrations`` (module
    docstring); ``canonical`` writes an action the way the environment offers it; its
    ``trained`` record is left for the caller to fill."""
    by_type: dict[str, list[list[Occurrence]]] = defaultdict(list)
    for demo in demonstrations:
        occurrences = _occurrences(demo, canonical)
        if occurrences:
            by_type[demo.task_type].append(occurrences)
    fixed = _fixed_positions([episode for episodes in by_type.values() for episode in episodes], min_constant)
    learnt = [_graph(task_type, episodes, fixed, share=share, agree=agree, min_constant=min_constant)
              for task_type, episodes in by_type.items()]
    named = {value for demo in demonstrations for value in demo.slots.values() if value}
    places = count_places([visit for _, visits in learnt for visit in visits], named)
    return Machine(benchmark=benchmark, graphs=[graph for graph, _ in learnt], slots=tuple(slots), places=places,
                   origin="")
