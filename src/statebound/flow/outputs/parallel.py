"""Output functions that run several branches at once and merge what they write.

* ``Parallel({"web": Sub(search), "notes": CallTool(read_notes, writes=[...])}, merge=...)``: a
  fixed set of branches, each a sub-machine (:class:`~statebound.flow.outputs.sub.Sub`), an output
  function, or a list of them (run as a one-state flow on a copy of the variables);
* ``FanOut("titles", Sub(search, ...), item="title", merge=...)``: one branch per item of a list
  variable (LangGraph's ``Send``), the item in the child's field ``item``.

Both run at most ``limit`` branches at a time (all, by default). Each branch is a child run of its
own (:mod:`statebound.flow.nested`): stored as its own thread when the run is checkpointed, so a
resumed run continues only the branches that had not finished. When every branch has ended, the
writes of those that finished merge into the variables through ``merge`` (field -> reducer,
:mod:`statebound.flow.reducers`), in the branches' declared order; a field two branches write
needs a reducer (refused when the flow is built otherwise). Pauses in branches are listed
together, each with its id; the state goes on when the last is answered. A branch that ends
otherwise than in a final state fails the state (``on_error="fail"``), or (``"skip"``) is recorded
as a failed ``tool`` entry and its writes are left out.
"""

from __future__ import annotations

import asyncio
from abc import abstractmethod
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar, Literal

from statebound.errors import DefinitionError
from statebound.flow.context import PauseRun, RunContext
from statebound.flow.machine import Machine
from statebound.flow.nested import (
    ChildRun,
    absorb,
    child_path,
    paused_children,
    pauses_of,
    run_child,
)
from statebound.flow.outputs.base import Output
from statebound.flow.outputs.nesting import Child, Nested
from statebound.flow.outputs.sub import Sub, failure
from statebound.flow.pauses import answers_for, listing
from statebound.flow.reducers import Reducer, as_reducer
from statebound.flow.result import ExitReason, RunResult
from statebound.flow.rules import always
from statebound.flow.states import State
from statebound.flow.var_types import element_type, fits, type_name
from statebound.flow.variables import VarsSpec

__all__ = ["Branch", "Branches", "FanOut", "OnError", "Parallel"]

Branch = Sub | Output | Sequence[Output]
OnError = Literal["fail", "skip"]
Planned = tuple[str, Sub, dict[str, Any]]  # a branch's key, what it runs, its starting fields besides the projected


class Branches(Nested):
    """What :class:`Parallel` and :class:`FanOut` share: running, merging, the checks of both."""

    __slots__ = ("limit", "merge", "on_error", "reads", "writes")
    concurrent: ClassVar[bool] = True

    def __init__(self, merge: Mapping[str, Reducer | Any] | None, limit: int | None, on_error: OnError) -> None:
        self.merge: dict[str, Any] = dict(merge or {})
        self.limit = limit
        self.on_error = on_error
        self.writes: Sequence[str] = ()
        self.reads: Sequence[str] = ()

    @abstractmethod
    def _planned(self, ctx: RunContext[Any, Any]) -> list[Planned]:
        """The branches to run now, in their declared order."""

    @abstractmethod
    def subs(self) -> list[tuple[str, Sub]]:
        """What its branches run, by key (a fan-out's one ``Sub`` under ``*``)."""

    async def run(self, ctx: RunContext[Any, Any]) -> None:
        reply, ctx.reply = ctx.reply, None
        planned = self._planned(ctx)
        paths = [child_path(ctx, key) for key, _, _ in planned]
        routed = answers_for(reply, paths, paused_children(ctx, paths))
        runs = [sub.child_run(ctx, key, routed.get(path), **extra)
                for (key, sub, extra), path in zip(planned, paths)]
        results = await self._run_all(ctx, runs)
        for run, result in zip(runs, results):
            absorb(ctx, run.key, result)
        ctx.check_budget()
        paused = {pause: question for path, result in zip(paths, results)
                  for pause, question in pauses_of(path, result).items()}
        if paused:
            raise PauseRun(listing(paused))
        finished = self._finished(ctx, [(path, sub, result) for path, (_, sub, _), result in zip(paths, planned, results)])
        if self.writes:
            ctx.update(self._merged(ctx, finished), by=self.label)

    async def _run_all(self, ctx: RunContext[Any, Any], runs: list[ChildRun]) -> list[RunResult[Any]]:
        gate = asyncio.Semaphore(self.limit or max(1, len(runs)))

        async def one(run: ChildRun) -> RunResult[Any]:
            async with gate:
                return await run_child(ctx, run)

        async with asyncio.TaskGroup() as group:
            tasks = [group.create_task(one(run)) for run in runs]
        return [task.result() for task in tasks]

    def _finished(self, ctx: RunContext[Any, Any], ended: list[tuple[str, Sub, RunResult[Any]]],
                  ) -> list[tuple[Sub, RunResult[Any]]]:
        """The branches that reached a final state; the others fail the state, or are recorded."""
        finished = []
        for path, sub, result in ended:
            if result.exit_reason is ExitReason.FINAL:
                finished.append((sub, result))
                continue
            error = failure(path, result)
            if self.on_error == "fail":
                raise error
            ctx.add("tool", f"branch {error}; skipped", "tool", name=self.label, ok=False,
                    data={"branch": path, "exit_reason": result.exit_reason.value})
        return finished

    def _merged(self, ctx: RunContext[Any, Any], finished: list[tuple[Sub, RunResult[Any]]]) -> dict[str, Any]:
        """Every field the branches may write: its value now, with the finished branches' values
        folded in (a field no finished branch wrote keeps its value, and is written all the same:
        the branches that ran, none, or all failed, had nothing to add)."""
        merged = {field: getattr(ctx.vars, field) for field in self.writes}
        for sub, result in finished:
            for field, value in sub.projection.results(result.vars).items():
                reducer = as_reducer(self.merge[field]) if field in self.merge else None
                merged[field] = value if reducer is None else reducer(merged[field], value)
        return merged

    def problems_in(self, state: str, vars: VarsSpec | None) -> list[str]:  # noqa: A002
        where = f"state {state!r}: {self.label}"
        problems = []
        if not isinstance(self.limit, int | None) or (self.limit is not None and self.limit < 1):
            problems.append(f"{where} limit must be at least 1 (or None: every branch at once), got {self.limit!r}")
        if self.on_error not in ("fail", "skip"):
            problems.append(f"{where} on_error must be 'fail' or 'skip', got {self.on_error!r}")
        for _, sub in self.subs():
            problems += sub.projection.problems(where, vars, sub.flow.vars, reduced=self.merge)
        return problems + self._merge_problems(where, vars)

    def _merge_problems(self, where: str, vars: VarsSpec | None) -> list[str]:  # noqa: A002
        """Fields written by more than one branch without a reducer; reducers that are none, or
        of the wrong type, or for fields no branch writes."""
        writers: dict[str, list[tuple[str, Sub]]] = {}
        for key, sub in self.subs():
            for field in sub.writes:
                writers.setdefault(field, []).append((key, sub))
        problems = [self._unreduced(where, field, [key for key, _ in found])
                    for field, found in writers.items() if field not in self.merge and self._shared(found)]
        for field, given in self.merge.items():
            reducer = as_reducer(given)
            if reducer is None:
                problems.append(f"{where} merge[{field!r}] = {given!r} is not a reducer: use append, extend, union, "
                                "maximum, minimum or a function fn(current, value)")
            elif field not in writers:
                problems.append(f"{where} merge names {field!r}, which no branch writes")
            elif vars is not None and field in vars.fields:
                problems += [f"{where} merge[{field!r}]: {problem}" for key, sub in writers[field]
                             if (problem := _reducer_problem(reducer, vars.fields[field], sub, field)) is not None]
        return [problem for problem in problems if problem]

    def _shared(self, writers: list[tuple[str, Sub]]) -> bool:
        return len(writers) > 1

    def _unreduced(self, where: str, field: str, keys: list[str]) -> str:
        return (f"{where} branches {' and '.join(repr(key) for key in keys)} both write {field!r}, which has no "
                f"reducer: add merge={{{field!r}: append}} (or extend, union, maximum, minimum, fn(current, value))")


def _reducer_problem(reducer: Reducer, field_type: Any, sub: Sub, field: str) -> str | None:
    child_field = sub.projection.vars_out[field]
    child = sub.flow.vars
    if child is None or child_field not in child.fields:
        return None  # said by the projection's own check
    return reducer.problem(field_type, child.fields[child_field])


class Parallel(Branches):
    """A fixed set of branches run at once (module docstring): ``branches`` maps each branch's
    key to a :class:`Sub`, an output function, or a list of output functions."""

    __slots__ = ("_given", "_subs")

    def __init__(self, branches: Mapping[str, Branch], *, merge: Mapping[str, Reducer | Any] | None = None,
                 limit: int | None = None, on_error: OnError = "fail") -> None:
        super().__init__(merge, limit, on_error)
        if not branches:
            raise DefinitionError("Parallel needs at least one branch: Parallel({'name': Sub(flow), ...})")
        for key in branches:
            if not isinstance(key, str) or not key or "/" in key:
                raise DefinitionError(f"Parallel: a branch's key is a name without '/', not {key!r}")
        self._given = dict(branches)
        self._subs: dict[str, Sub] = {key: branch for key, branch in self._given.items() if isinstance(branch, Sub)}
        self._declare()

    def _declare(self) -> None:
        outputs = [output for branch in self._given.values() if not isinstance(branch, Sub)
                   for output in ([branch] if isinstance(branch, Output) else branch)]
        self.writes = tuple(dict.fromkeys([*(f for sub in self._subs.values() for f in sub.writes),
                                           *(f for output in outputs for f in output.writes)]))
        self.reads = tuple(dict.fromkeys([*(f for sub in self._subs.values() for f in sub.reads),
                                          *(f for output in outputs for f in output.reads)]))

    @property
    def label(self) -> str:
        return f"Parallel({', '.join(self._given)})"

    def children(self) -> Sequence[Child]:
        return [Child(key, sub.flow) for key, sub in self.subs()]

    def subs(self) -> list[tuple[str, Sub]]:
        return [(key, self._subs[key]) for key in self._given if key in self._subs]

    def problems_in(self, state: str, vars: VarsSpec | None) -> list[str]:  # noqa: A002
        for key, branch in self._given.items():
            if not isinstance(branch, Sub):
                self._subs[key] = _wrapped(key, branch, vars)
        return super().problems_in(state, vars)

    def _planned(self, ctx: RunContext[Any, Any]) -> list[Planned]:
        return [(key, sub, {}) for key, sub in self.subs()]


def _wrapped(key: str, branch: Output | Sequence[Output], vars: VarsSpec | None) -> Sub:  # noqa: A002
    """An output branch as a sub-machine: one state running it on a copy of the variables."""
    outputs = [branch] if isinstance(branch, Output) else list(branch)
    if not outputs or not all(isinstance(output, Output) for output in outputs):
        raise DefinitionError(f"Parallel branch {key!r} is a Sub, an output function or a list of them, not {branch!r}")
    flow = Machine(name=key, initial=key, vars=None if vars is None else vars.kind, states=[
        State(key, outputs=outputs, transitions=[(always(), "Done")]), State("Done", final=True)])
    fields = () if vars is None else tuple(vars.fields)
    writes = tuple(dict.fromkeys(field for output in outputs for field in output.writes))
    return Sub(flow, vars_in={field: field for field in fields}, vars_out={field: field for field in writes})


class FanOut(Branches):
    """One branch per item of the list variable ``over`` (module docstring): ``branch`` runs on
    each, the item in its flow's field ``item``; every field it writes needs a reducer."""

    __slots__ = ("branch", "item", "over")

    def __init__(self, over: str, branch: Sub, *, item: str, merge: Mapping[str, Reducer | Any] | None = None,
                 limit: int | None = None, on_error: OnError = "fail") -> None:
        super().__init__(merge, limit, on_error)
        if not isinstance(branch, Sub):
            raise DefinitionError(f"FanOut runs a Sub(flow, ...) on each item of {over!r}, not {branch!r}")
        self.over, self.branch, self.item = over, branch, item
        self.writes = tuple(branch.writes)
        self.reads = tuple(dict.fromkeys([over, *branch.reads]))

    @property
    def label(self) -> str:
        return f"FanOut({self.over}: {self.branch.name})"

    def children(self) -> Sequence[Child]:
        return [Child("*", self.branch.flow)]

    def subs(self) -> list[tuple[str, Sub]]:
        return [("*", self.branch)]

    def _shared(self, writers: list[tuple[str, Sub]]) -> bool:
        return True  # each item's branch writes it

    def _unreduced(self, where: str, field: str, keys: list[str]) -> str:
        return (f"{where} every branch writes {field!r}, which has no reducer: add merge={{{field!r}: append}} "
                "(or extend, union, maximum, minimum, fn(current, value))")

    def problems_in(self, state: str, vars: VarsSpec | None) -> list[str]:  # noqa: A002
        return super().problems_in(state, vars) + self._item_problems(f"state {state!r}: {self.label}", vars)

    def _item_problems(self, where: str, vars: VarsSpec | None) -> list[str]:  # noqa: A002
        child = self.branch.flow.vars
        if vars is None or self.over not in vars.fields:
            return [f"{where} fans out over {self.over!r}, which the flow's variables have no field for"]
        element = element_type(vars.fields[self.over])
        if element is None:
            return [f"{where} fans out over {self.over!r} ({type_name(vars.fields[self.over])}), which is not a list"]
        if child is None or self.item not in child.fields:
            return [f"{where} item={self.item!r} is not a field of the sub-machine's variables"]
        if not fits(element, child.fields[self.item]):
            return [f"{where} item field {self.item!r} ({type_name(child.fields[self.item])}) cannot take the items "
                    f"of {self.over!r} ({type_name(element)})"]
        return []

    def _planned(self, ctx: RunContext[Any, Any]) -> list[Planned]:
        items = getattr(ctx.vars, self.over) or ()
        return [(str(index), self.branch, {self.item: item}) for index, item in enumerate(items)]
