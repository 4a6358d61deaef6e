"""``stateflow-scoped`` for GSM8K: the model never writes; it picks, step by step, which two
quantities to combine and how, among the steps the problem's quantities allow (our extension;
``stateflow-scoped-random`` makes the same picks by seeded random draws, the control).

- ``Read`` lists the quantities the problem states (:mod:`statebound.agents.qa.quantities`): the
  pool;
- ``Step`` picks one step among every ``a op b = c`` on two quantities of the pool;
- ``Compute`` has the environment's Calculator evaluate it; the result replaces the two in the
  pool, and while more than one quantity is left the machine goes back to ``Step``;
- ``Finish`` gives the last quantity to the environment as the answer.

Every quantity is used once, so a problem of n quantities takes n - 1 picks and the machine never
has to decide when to stop. The pool and the steps taken are the run's typed state
(:class:`Pool`, the flow variables), written by the tools and the picks. Each pick is scored after the problem and the steps so far,
calibrated by the same prompt with the problem left out (``Pick(baseline=...)``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from statebound.agents.qa.quantities import (
    ArithmeticStep,
    format_quantity,
    parse_quantity,
    quantities,
    steps,
)
from statebound.envs.qa.env import FINISH, QAEnvironment
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
)
from statebound.llm.base import Message

__all__ = ["SYSTEM", "Pool", "build_scoped_arithmetic", "current_pool", "step_candidates"]

SYSTEM = "Solve the maths problem one calculation at a time."
MAX_QUANTITIES = 8  # a problem stating more is solved from its first eight
CALCULATOR = "Calculator"


@dataclass(frozen=True, slots=True)
class Pool:
    """The run's flow variables (``Flow(vars=Pool)``): the quantities left to combine (as the
    Calculator writes them), the step picked last, and the steps computed so far."""

    quantities: tuple[str, ...] = ()
    step: str | None = None
    done: tuple[str, ...] = ()


def current_pool(ctx: RunContext[Pool]) -> tuple[Fraction, ...]:
    """The quantities left to combine."""
    return tuple(parse_quantity(text) for text in ctx.vars.quantities)


def _steps(ctx: RunContext) -> list[ArithmeticStep]:
    return steps(current_pool(ctx))


def step_candidates(ctx: RunContext) -> list[str]:
    return [step.text for step in _steps(ctx)]


def _pool_data(pool: tuple[Fraction, ...]) -> dict[str, Any]:
    return {"pool": [format_quantity(value) for value in pool]}


def _with_pool(output: str, pool: tuple[Fraction, ...], *, ok: bool = True, **changes: Any) -> ToolResult:
    """A tool's result that leaves ``pool`` to combine (and writes ``changes``)."""
    data = _pool_data(pool)
    return ToolResult(output, ok=ok, data=data, update={"quantities": tuple(data["pool"]), **changes})


# -- tools: the environment's side -------------------------------------------------------------
def read_problem(ctx: RunContext) -> ToolResult:
    pool = tuple(quantities(ctx.task)[:MAX_QUANTITIES])
    listed = ", ".join(format_quantity(value) for value in pool) or "none"
    return _with_pool(f"Quantities: {listed}", pool)


def compute(ctx: RunContext[Pool]) -> ToolResult:
    """Evaluate the step picked with the Calculator; its result replaces the two in the pool."""
    picked = ctx.vars.step
    step = next((s for s in _steps(ctx) if picked is not None and s.text == picked), None)
    if step is None:  # cannot happen (Step always offers the sum of two quantities): end the run anyway
        return _with_pool("No step to compute", current_pool(ctx)[-1:], ok=False)
    result = ctx.deps.call(CALCULATOR, step.expression)
    return _with_pool(f"{step.expression} = {result.observation}", step.pool, ok=result.ok,
                      done=(*ctx.vars.done, step.text))


def finish(ctx: RunContext) -> ToolResult:
    pool = current_pool(ctx)
    answer = format_quantity(pool[-1]) if pool else ""
    return ToolResult(ctx.deps.call(FINISH, answer).observation, data={"answer": answer})


QUANTITIES_LEFT = Rule(lambda ctx: len(ctx.vars.quantities) > 1, "two quantities or more left")


# -- prompts -----------------------------------------------------------------------------------
def _prompt() -> tuple[Callable[[RunContext], list[Message]], Callable[[RunContext], list[Message]]]:
    """A step's prompt (the problem, the steps so far) and its baseline (the problem left out)."""

    def build(ctx: RunContext, *, blind: bool) -> list[Message]:
        done = list(ctx.vars.done)
        lines = [f"Problem: {'N/A' if blind else ctx.task}", "Steps so far:", *(done or ["(none)"]), "Next step:"]
        return [Message("system", SYSTEM), Message("user", "\n".join(lines))]

    return (lambda ctx: build(ctx, blind=False)), (lambda ctx: build(ctx, blind=True))


def build_scoped_arithmetic(*, chooser: ChoiceMethod = "auto") -> Flow:
    """The machine (module docstring); ``chooser``: a :class:`~statebound.flow.Pick` method
    (``"auto"``, the best the model can run; ``"score"``, the model's calibrated scores;
    ``"label"``, ``"grammar"``; ``"random"``, the control)."""
    prompt, baseline = _prompt()
    states = [
        State("Read", outputs=[CallTool(read_problem, name="read", writes=["quantities"])],
              transitions=[(QUANTITIES_LEFT, "Step"), (always(), "Finish")]),
        State("Step", outputs=[Pick(step_candidates, prompt=prompt, baseline=baseline, method=chooser, name="step",
                                    when_empty="", into="step", reads=["quantities", "done"])],
              transitions=[(always(), "Compute")]),
        State("Compute", outputs=[CallTool(compute, name="calculator", reads=["step", "quantities", "done"],
                                           writes=["quantities", "done"])],
              transitions=[(QUANTITIES_LEFT, "Step"), (always(), "Finish")]),
        State("Finish", outputs=[CallTool(finish, name="finish", reads=["quantities"])],
              transitions=[(always(), "End")]),
        State("End", final=True),
    ]
    name = "stateflow-scoped" + ("" if chooser in ("auto", "score") else f"-{chooser}")
    return Flow(name=name, initial="Read", states=states, vars=Pool, deps=QAEnvironment, max_turns=2 * MAX_QUANTITIES + 4)
