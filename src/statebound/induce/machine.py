"""An induced machine as data: per task type, the roles actions play and how often one led to
another, with what it was learnt from. A person may read and edit it (written as Python or JSON by
:mod:`statebound.induce.files`); :meth:`Machine.flow` makes it an ordinary flow
(:mod:`statebound.induce.flow`).

- :class:`Role`: one kind of action in one part of a task (``take {object} from {seen}``): its
  :class:`~statebound.induce.templates.Template`, how many actions of the traces it covers, where
  they led (``next``: role name or ``Done`` -> count), whether it is a ``milestone`` (sending
  it ends a part of the task: actions of other kinds already sent may be offered again), and the
  words its free slots took (``values``: where objects were found).
- :class:`Graph`: a task type's roles, where its episodes started (``start``) and how many there
  were.
- :class:`Trained`: what the machine was learnt from and what that cost (the design cost).
- ``places`` (on the :class:`Machine`): where each thing the tasks named was seen, counted
  (:mod:`statebound.induce.places`); the model reads them before it picks.

Mistakes in an edited machine (a role leading to no role, a template naming no slot, a role no
path reaches) are reported by :func:`check_machine` and when the flow is built, each with the line
of the file that holds the role.
"""

from __future__ import annotations

import difflib
import re
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from statebound.errors import DefinitionError
from statebound.induce.templates import ANY, NUMBER, SEEN, Template

if TYPE_CHECKING:
    from statebound.flow import ChoiceMethod, Flow

__all__ = ["DONE", "Graph", "Machine", "Role", "Trained", "check_machine", "to_mermaid"]

DONE = "Done"  # where a role's last action of a solved episode leads
_PACKAGE = str(Path(__file__).resolve().parents[1])


@dataclass(frozen=True, slots=True)
class Role:
    """One kind of action in one part of a task. ``name`` is unique in its graph; ``next`` maps
    the roles (or ``Done``) that followed it to how many times they did; ``values`` counts the
    words that filled its ``{seen}``/``{any}`` slots (offered first)."""

    name: str
    template: str
    count: int = 0
    next: Mapping[str, int] = field(default_factory=dict)
    milestone: bool = False
    values: Mapping[str, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "next", dict(self.next))
        object.__setattr__(self, "values", dict(self.values))


@dataclass(frozen=True, slots=True)
class Graph:
    """A task type's roles, where its solved episodes began (``start``: role -> count) and how
    many episodes taught it."""

    task_type: str
    roles: Sequence[Role]
    start: Mapping[str, int] = field(default_factory=dict)
    episodes: int = 0

    def __post_init__(self) -> None:
        object.__setattr__(self, "roles", tuple(self.roles))
        object.__setattr__(self, "start", dict(self.start))

    @property
    def by_name(self) -> dict[str, Role]:
        return {role.name: role for role in self.roles}


@dataclass(frozen=True, slots=True)
class Trained:
    """What a machine was learnt from: the run directories, the tasks of the episodes used, the
    tasks kept out for evaluation, and the design cost (episodes, their steps and tokens, the
    seconds the induction took)."""

    runs: Sequence[str] = ()
    tasks: Sequence[str] = ()
    held_out: Sequence[str] = ()
    episodes: int = 0
    steps: int = 0
    tokens: int = 0
    seconds: float = 0.0

    def __post_init__(self) -> None:
        for name in ("runs", "tasks", "held_out"):
            object.__setattr__(self, name, tuple(getattr(self, name)))


def _defining_file() -> str:
    """The file whose code builds a machine (a machine written as Python), so that its mistakes
    can name lines; ``""`` when it is not a file of its own (this package, a prompt)."""
    frame = sys._getframe(3)  # past this function, __post_init__ and the dataclass's __init__
    name = frame.f_code.co_filename
    return "" if name.startswith((_PACKAGE, "<")) or not Path(name).is_file() else name


@dataclass(frozen=True, slots=True)
class Machine:
    """An induced machine for ``benchmark``: a :class:`Graph` per task type; ``slots`` are the
    task slots its templates may name (``{object}``); ``places``: where each thing a task named
    was seen (thing -> place -> times); ``origin`` is the file it was read from (found by itself
    for a machine written as Python; ``""``: none)."""

    benchmark: str
    graphs: Sequence[Graph]
    slots: Sequence[str] = ()
    trained: Trained = field(default_factory=Trained)
    places: Mapping[str, Mapping[str, int]] = field(default_factory=dict)
    origin: str | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "graphs", tuple(self.graphs))
        object.__setattr__(self, "slots", tuple(self.slots))
        object.__setattr__(self, "places", {thing: dict(at) for thing, at in self.places.items()})
        if self.origin is None:
            object.__setattr__(self, "origin", _defining_file())

    @property
    def task_types(self) -> tuple[str, ...]:
        return tuple(graph.task_type for graph in self.graphs)

    def graph(self, task_type: str) -> Graph | None:
        return next((g for g in self.graphs if g.task_type == task_type), None)

    def flow(self, *, chooser: ChoiceMethod = "auto", seed: int = 0, max_turns: int = 50,
             task_type: str | None = None) -> Flow:
        """The machine as a flow (:func:`statebound.induce.flow.machine_flow`: every task type's,
        or ``task_type``'s alone); its mistakes are refused with the lines of :attr:`origin` that
        hold them."""
        from statebound.induce.flow import machine_flow

        return machine_flow(self, chooser=chooser, seed=seed, max_turns=max_turns, task_type=task_type)


def _hint(name: str, known: Sequence[str]) -> str:
    close = difflib.get_close_matches(name, list(known), n=1)
    return f"; did you mean {close[0]!r}?" if close else ""


def _problems(machine: Machine) -> list[tuple[str | None, str | None, str]]:
    """``(task type, role, problem)`` for every mistake (role None: the graph's)."""
    found: list[tuple[str | None, str | None, str]] = []
    allowed = {*(f"{{{slot}}}" for slot in machine.slots), NUMBER, SEEN, ANY}
    types = [graph.task_type for graph in machine.graphs]
    if not machine.graphs:
        found.append((None, None, "the machine has no graph; give at least one task type's roles"))
    for repeated in sorted({t for t in types if types.count(t) > 1}):
        found.append((repeated, None, f"task type {repeated!r} has two graphs; merge them"))
    for thing, at in machine.places.items():
        if any(not isinstance(n, int) or n < 0 for n in at.values()):
            found.append((None, None, f"places[{thing!r}]: the times each place was seen must be whole numbers, "
                                      f"not {dict(at)!r}"))
    for graph in machine.graphs:
        names = [role.name for role in graph.roles]
        known = [*names, DONE]
        if not graph.roles:
            found.append((graph.task_type, None, f"task type {graph.task_type!r} has no roles"))
        if not graph.start:
            found.append((graph.task_type, None, f"task type {graph.task_type!r} starts nowhere: give start={{role: count}}"))
        for target in graph.start:
            if target not in names:
                found.append((graph.task_type, None, f"task type {graph.task_type!r} starts with unknown role "
                               f"{target!r}{_hint(target, names)}"))
        for role in graph.roles:
            found += [(graph.task_type, role.name, p) for p in _role_problems(role, names, known, allowed)]
    return found


def _role_problems(role: Role, names: Sequence[str], known: Sequence[str], allowed: set[str]) -> list[str]:
    problems = []
    if not role.name or role.name == DONE:
        problems.append(f"a role needs a name other than {DONE!r} (got {role.name!r})")
    elif names.count(role.name) > 1:
        problems.append(f"role {role.name!r} is defined twice; rename one")
    if not role.template.strip():
        problems.append(f"role {role.name!r}: its template is empty; write the action's words, e.g. 'go to {{any}} {{n}}'")
    for word in role.template.split():
        if re.fullmatch(r"\{.*\}", word) and word not in allowed:
            problems.append(f"role {role.name!r}: template {role.template!r} names slot {word}, which is not one "
                            f"of {', '.join(sorted(allowed))}{_hint(word, sorted(allowed))}")
    for target, count in role.next.items():
        if target not in known:
            problems.append(f"role {role.name!r} leads to unknown role {target!r}{_hint(target, known)}")
        if not isinstance(count, int) or count < 0:
            problems.append(f"role {role.name!r}: the count of {target!r} must be a whole number, not {count!r}")
    if not role.next:
        problems.append(f"role {role.name!r} leads nowhere: give next={{role or {DONE!r}: count}}")
    return problems


def role_lines(machine: Machine) -> dict[tuple[str | None, str | None], int]:
    """The line of :attr:`Machine.origin` holding each graph ``(type, None)`` and role
    ``(type, role)`` (as the writers lay them out: a role per line)."""
    if not machine.origin or not Path(machine.origin).is_file():
        return {}
    lines = Path(machine.origin).read_text(encoding="utf-8").splitlines()
    found: dict[tuple[str | None, str | None], int] = {}
    current: str | None = None
    for number, line in enumerate(lines, 1):
        graph = re.search(r'(?:Graph\(|"task_type":\s*)"((?:[^"\\]|\\.)*)"', line)
        if graph:
            current = graph[1]
            found.setdefault((current, None), number)
        role = re.search(r'(?:Role\(|"name":\s*)"((?:[^"\\]|\\.)*)"', line)
        if role and current is not None:
            found.setdefault((current, role[1]), number)
    return found


def where(machine: Machine, lines: Mapping[tuple[str | None, str | None], int], task_type: str | None,
          role: str | None) -> str:
    """``path:line: `` for a mistake in ``task_type``'s ``role`` (the graph's line when the role
    has none; just the path when the machine has no file)."""
    if not machine.origin:
        return ""
    line = lines.get((task_type, role)) or lines.get((task_type, None))
    return f"{machine.origin}:{line}: " if line else f"{machine.origin}: "


def check_machine(machine: Machine) -> None:
    """Raise :class:`DefinitionError` listing every mistake of ``machine``, one a line, each with
    the line of its file that holds it."""
    problems = _problems(machine)
    if problems:
        lines = role_lines(machine)
        raise DefinitionError(f"machine for {machine.benchmark} is not valid:\n" + "\n".join(
            f"- {where(machine, lines, task_type, role)}{problem}" for task_type, role, problem in problems))


def templates(graph: Graph) -> dict[str, Template]:
    """Each role's template (preferring its values), by role name."""
    return {role.name: Template(role.template, frozenset(role.values)) for role in graph.roles}


def _mermaid_id(task_type: str, name: str) -> str:
    return re.sub(r"\W", "_", f"{task_type}__{name}")


def to_mermaid(machine: Machine, task_type: str | None = None) -> str:
    """The learnt graph as a Mermaid state diagram: a state per role, the counted transitions
    (from the start, between roles, to the end); every task type as a composite state, or
    ``task_type``'s alone. (The flow adds, in every state, ``over`` to ``Done``, staying when no
    role fits, and going back a step: ``statebound flow draw induced:PATH`` draws it whole.)"""
    lines = ["stateDiagram-v2"]
    for graph in machine.graphs:
        if task_type is not None and graph.task_type != task_type:
            continue
        indent = "    " if task_type is not None else "        "
        if task_type is None:
            lines.append(f"    state {re.sub(r'[^0-9A-Za-z_]', '_', graph.task_type)} {{")
        for role in graph.roles:
            lines.append(f'{indent}state "{role.name}" as {_mermaid_id(graph.task_type, role.name)}')
        for target, count in graph.start.items():
            lines.append(f"{indent}[*] --> {_mermaid_id(graph.task_type, target)}: {count}")
        for role in graph.roles:
            for target, count in role.next.items():
                end = "[*]" if target == DONE else _mermaid_id(graph.task_type, target)
                lines.append(f"{indent}{_mermaid_id(graph.task_type, role.name)} --> {end}: {count}")
        if task_type is None:
            lines.append("    }")
    return "\n".join(lines) + "\n"
