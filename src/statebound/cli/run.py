"""``statebound run`` (run a flow on a task), ``statebound flow draw`` (diagrams of a flow) and
``statebound flow check`` (static checks of a flow).

A flow is named by a bundled example (``arithmetic``, ``research``) or by ``path.py:variable``
(a Flow, or a function without arguments that returns one).
"""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from statebound.cli.app import app

if TYPE_CHECKING:
    from rich.console import Console

    from statebound.flow import Event, Flow, RunResult

flow_app = typer.Typer(help="Inspect flows: draw their diagrams, check them.", no_args_is_help=True)
app.add_typer(flow_app, name="flow")

FLOW_HELP = "A bundled example (arithmetic, research) or a Python file and variable: path.py:flow"


def load_flow(ref: str) -> Flow:
    """The flow ``ref`` names (bundled example or ``path.py:variable``); BadParameter otherwise."""
    from statebound.examples import EXAMPLES, load_example
    from statebound.flow import Flow

    if ref in EXAMPLES:
        return load_example(ref)
    path_text, _, variable = ref.rpartition(":")
    if not path_text or not variable:
        raise typer.BadParameter(
            f"{ref!r} is neither a bundled example ({', '.join(sorted(EXAMPLES))}) nor path.py:variable"
        )
    path = Path(path_text)
    if not path.is_file():
        raise typer.BadParameter(f"no such file {path}; give path.py:variable, e.g. my_flows.py:flow")
    spec = importlib.util.spec_from_file_location(f"_statebound_user_flow_{path.stem}", path)
    if spec is None or spec.loader is None:
        raise typer.BadParameter(f"cannot import {path}; is it a Python file?")
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, str(path.parent.resolve()))
    try:
        spec.loader.exec_module(module)
    finally:
        sys.path.pop(0)
    if not hasattr(module, variable):
        names = sorted(n for n, v in vars(module).items() if isinstance(v, Flow))
        raise typer.BadParameter(f"{path} has no variable {variable!r}; flows defined there: {names}")
    value = getattr(module, variable)
    if not isinstance(value, Flow) and callable(value):
        value = value()
    if not isinstance(value, Flow):
        raise typer.BadParameter(f"{path}:{variable} is a {type(value).__name__}, not a statebound.flow.Flow")
    return value


def _printer(console: Console) -> Callable[[Event], None]:
    from rich.markup import escape

    colours = {"task": "bold", "instruction": "cyan", "llm": "green", "tool": "yellow"}

    def show(event: Event) -> None:
        kind = event.kind
        if kind == "state_entered":
            console.rule(f"[bold]{event.state}[/] (turn {event.turn}, visit {event.visit})")  # type: ignore[union-attr]
        elif kind == "message_added":
            entry = event.entry  # type: ignore[union-attr]
            who = entry.source + (f" {entry.name}" if entry.name else "")
            status = "" if entry.ok is None else (" ok" if entry.ok else " failed")
            colour = colours.get(entry.source, "white")
            console.print(f"[{colour}]{escape(who)}{status}:[/] {escape(entry.content)}")
        elif kind == "speaker_selected":
            console.print(f"[magenta]-> speaker {event.role} ({event.how})[/]")  # type: ignore[union-attr]
        elif kind == "transition_taken":
            console.print(f"[dim]=> {event.target}: {escape(event.reason)}[/]")  # type: ignore[union-attr]
        elif kind == "budget_hit":
            console.print(f"[red]limit reached: {event.limit} {event.used}/{event.allowed} in {event.state}[/]")  # type: ignore[union-attr]

    return show


def _print_usage(console: Console, result: RunResult) -> None:
    from rich.table import Table

    table = Table(title="Usage")
    for column in ("state", "LLM calls", "prompt tokens", "completion tokens"):
        table.add_column(column, justify="left" if column == "state" else "right")
    for state, usage in result.usage_by_state.items():
        table.add_row(state, str(usage.calls), str(usage.prompt_tokens), str(usage.completion_tokens))
    u = result.usage
    table.add_row("[bold]run[/]", str(u.calls), str(u.prompt_tokens), str(u.completion_tokens))
    console.print(table)
    cost = "unknown" if result.cost is None else f"${result.cost:.4f}"
    colour = "green" if result.ok else "red"
    console.print(
        f"[{colour}]exit: {result.exit_state} ({result.exit_reason.value})[/] after {result.turns} turns; cost {cost}"
    )
    if result.error is not None:
        console.print(f"[red]error: {type(result.error).__name__}: {result.error}[/]")


@app.command("run")
def run_command(
    flow_ref: str = typer.Argument(..., metavar="FLOW", help=FLOW_HELP),
    task: str | None = typer.Option(None, "--task", "-t", help="The task (bundled examples have a default)."),
    model: str = typer.Option("smollm2", "--model", "-m", help="Model spec for statebound.llm.registry.open_model."),
    trace: Path | None = typer.Option(None, "--trace", help="Write every event to this JSONL file."),
    max_turns: int | None = typer.Option(None, "--max-turns", min=1, help="Override the flow's turn limit."),
) -> None:
    """Run a flow on a task and print its trajectory state by state, then the usage."""
    from rich.console import Console

    from statebound.examples import EXAMPLES, example_task
    from statebound.flow.trace import JsonlTrace

    flow = load_flow(flow_ref)
    if max_turns is not None:
        flow = flow.replace(max_turns=max_turns)
    if task is None:
        if flow_ref not in EXAMPLES:
            raise typer.BadParameter("give the task with --task", param_hint="--task")
        task = example_task(flow_ref)
    from statebound.llm.registry import open_model

    console = Console()
    llm = open_model(model)
    sinks: list = [_printer(console)]
    writer = JsonlTrace(trace) if trace is not None else None
    if writer is not None:
        sinks.append(writer)
    try:
        result = flow.run_sync(task, llm=llm, on_event=sinks, record_events=False)
    finally:
        if writer is not None:
            writer.close()
    _print_usage(console, result)
    if trace is not None:
        console.print(f"trace written to {trace}")
    if not result.ok:
        raise typer.Exit(code=1)


@flow_app.command("draw")
def draw_command(
    flow_ref: str = typer.Argument(..., metavar="FILE_OR_EXAMPLE", help=FLOW_HELP),
    out: Path = typer.Option(Path("."), "--out", "-o", help="Directory for NAME.mmd, NAME.dot (and NAME.svg)."),
) -> None:
    """Write a flow's diagram as Mermaid (.mmd) and Graphviz (.dot), plus .svg if `dot` is installed."""
    flow = load_flow(flow_ref)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for suffix, text in ((".mmd", flow.to_mermaid()), (".dot", flow.to_dot())):
        path = out / f"{flow.name}{suffix}"
        path.write_text(text, encoding="utf-8")
        written.append(path)
    dot = shutil.which("dot")
    if dot is not None:
        svg = out / f"{flow.name}.svg"
        subprocess.run([dot, "-Tsvg", str(written[1]), "-o", str(svg)], check=True, timeout=60)
        written.append(svg)
    for path in written:
        typer.echo(str(path))
    if dot is None:
        typer.echo("(no .svg: install Graphviz to get the `dot` binary)")


@flow_app.command("check")
def check_command(
    flow_ref: str = typer.Argument(..., metavar="FLOW", help=FLOW_HELP),
    strict: bool = typer.Option(False, "--strict", help="Fail on warnings too."),
) -> None:
    """Static checks: shadowed or duplicate transitions, states without a default, a turn limit too
    small to finish, loops without model or tool calls, visit limits that never apply."""
    from statebound.errors import DefinitionError
    from statebound.flow.checks import check_flow

    try:
        flow = load_flow(flow_ref)
    except DefinitionError as exc:  # the flow does not even build: its hard errors
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(1) from None
    diagnostics = check_flow(flow)
    for diagnostic in diagnostics:
        typer.echo(diagnostic.format(flow.name))
    warnings = sum(d.severity == "warning" for d in diagnostics)
    typer.echo(f"{flow.name}: {warnings} warning(s), {len(diagnostics) - warnings} info")
    if strict and warnings:
        raise typer.Exit(1)
