"""``statebound run`` (run a flow on a task, optionally stored as a thread that ``--resume``
continues), ``statebound flow draw`` (diagrams of a flow) and ``statebound flow check`` (static
checks of a flow).

A flow is named by a bundled example (``arithmetic``, ``research``) or by ``path.py:variable``
(a Flow, or a function without arguments that returns one). Mistakes (an unknown model, a bad
config file, a flow file that does not load, a damaged store) end the command with one line on
stderr and exit status 2.
"""

from __future__ import annotations

import inspect
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from statebound.cli.app import app
from statebound.cli.errors import one_line_errors, output_dir
from statebound.cli.otel import otel_option, start_tracing
from statebound.errors import DefinitionError
from statebound.user_files import is_file_ref, load_ref

if TYPE_CHECKING:
    from rich.console import Console

    from statebound.flow import Event, Flow, RunResult, TokenDelta
    from statebound.flow.live import Checkpointer
    from statebound.llm.base import LLM

flow_app = typer.Typer(help="Inspect flows: draw their diagrams, check them.", no_args_is_help=True)
app.add_typer(flow_app, name="flow")

FLOW_HELP = ("A bundled example (arithmetic, research), a Python file and variable: path.py:flow, or an induced "
             "machine: induced:machine.json")
INDUCED = "induced:"


def load_flow(ref: str) -> Flow:
    """The flow ``ref`` names (bundled example, ``path.py:variable`` or ``induced:PATH``, a
    machine :mod:`statebound.induce` wrote); DefinitionError otherwise."""
    from statebound.examples import EXAMPLES, load_example
    from statebound.flow import Flow

    if ref in EXAMPLES:
        return load_example(ref)
    if ref.startswith(INDUCED):
        from statebound.induce import load_machine

        return load_machine(ref[len(INDUCED):]).flow()
    if not is_file_ref(ref):
        raise DefinitionError(
            f"{ref!r} is neither a bundled example ({', '.join(sorted(EXAMPLES))}), path.py:variable nor induced:PATH"
        )
    value = load_ref(ref, "a Flow")
    if not isinstance(value, Flow) and callable(value):
        try:
            inspect.signature(value).bind()
        except TypeError as error:
            raise DefinitionError(f"{ref} cannot be called without arguments ({error}): name a Flow, or a "
                                  "function that builds one from no arguments") from None
        value = value()
    if not isinstance(value, Flow):
        raise DefinitionError(f"{ref} is a {type(value).__name__}, not a statebound.flow.Flow")
    return value


def open_flow_model(name: str | None, options: list[str]) -> LLM:
    """The model ``name`` (default: ``$STATEBOUND_MODEL``, the config file's ``model``, smollm2),
    opened as ``statebound eval`` opens it (so ``function:module:responder`` works too)."""
    from statebound.bench.models import ModelSpec, open_llm
    from statebound.bench.options import parse_pairs
    from statebound.llm.config import default_model

    spec = ModelSpec(name or default_model(), parse_pairs(options, flag="--model-option"))
    return open_llm(spec)


class _Pieces:
    """Prints a reply's pieces as the model writes them (``statebound run`` at a terminal); the
    reply's own line then only ends the streamed one."""

    def __init__(self, console: Console) -> None:
        self.console = console
        self.open = False  # a reply is being written on the current line

    def __call__(self, delta: TokenDelta) -> None:
        if not self.open:
            self.console.print("[green]llm:[/] ", end="")
            self.open = True
        self.console.print(delta.text, end="", markup=False, highlight=False)

    def close(self) -> bool:
        """End the streamed line; whether there was one."""
        if self.open:
            self.console.print()
            self.open = False
            return True
        return False


def _printer(console: Console, pieces: _Pieces | None = None) -> Callable[[Event], None]:
    from rich.markup import escape

    from statebound.flow.events import refused_by_limit

    colours = {"task": "bold", "instruction": "cyan", "llm": "green", "tool": "yellow", "human": "magenta"}

    def show(event: Event) -> None:
        kind = event.kind
        if kind == "state_entered":
            console.rule(f"[bold]{event.state}[/] (turn {event.turn}, visit {event.visit})")  # type: ignore[union-attr]
        elif kind == "message_added":
            entry = event.entry  # type: ignore[union-attr]
            if entry.source == "llm" and pieces is not None and pieces.close():
                return  # shown already, piece by piece
            who = entry.source + (f" {entry.name}" if entry.name else "")
            status = "" if entry.ok is None else (" ok" if entry.ok else " failed")
            colour = colours.get(entry.source, "white")
            console.print(f"[{colour}]{escape(who)}{status}:[/] {escape(entry.content)}")
        elif kind == "speaker_selected":
            console.print(f"[magenta]-> speaker {event.role} ({event.how})[/]")  # type: ignore[union-attr]
        elif kind == "transition_taken":
            console.print(f"[dim]=> {event.target}: {escape(event.reason)}[/]")  # type: ignore[union-attr]
        elif kind == "budget_hit":
            said = refused_by_limit([event.to_dict()]) or f"{event.limit} {event.used}/{event.allowed} in {event.state}"  # type: ignore[union-attr]
            console.print(f"[red]limit reached: {escape(said)}[/]")

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


PAUSED_EXIT = 3  # the run waits for a person: continue with --resume --input TEXT


def _check_thread_options(store: str | None, thread: str | None, resume: bool, answer: str | None) -> None:
    if (store is None) != (thread is None):
        raise DefinitionError("--store and --thread go together: --store PATH --thread ID stores the run")
    if resume and thread is None:
        raise DefinitionError("--resume needs --store PATH --thread ID (the thread to continue)")
    if answer is not None and not resume:
        raise DefinitionError("--input answers a paused thread: add --resume")


def _check_resumable(store: Checkpointer, thread: str, command: str, llm: LLM, switch_model: bool) -> None:
    """Refuse, in the command's terms, to resume a thread the store does not hold, or with a model
    other than the one it ran with (unless ``switch_model``)."""
    from statebound.flow.live.session import thread_models

    if store.record(thread) is None:
        names = [info.thread for info in store.threads()]
        listed = f"its threads: {', '.join(names[:10])}" if names else "it holds no thread yet"
        raise DefinitionError(f"{store.where} has no thread {thread!r} ({listed}); start it with {command} "
                              "(without --resume)")
    models = thread_models(store, thread)
    if models and llm.model not in models and not switch_model:
        raise DefinitionError(
            f"thread {thread!r} ran with {', '.join(models)}, not {llm.model}: add -m {models[-1]} to continue it "
            f"as it ran, or --switch-model to go on with {llm.model}")


def _start(flow: Flow, task: str | None, flow_ref: str, store: Checkpointer | None, thread: str | None,
           **running: Any) -> RunResult:
    """A new run (stored when a store is given: the thread must be new)."""
    from statebound.examples import EXAMPLES, example_task

    if task is None:
        if flow_ref not in EXAMPLES:
            raise DefinitionError("give the task with --task")
        task = example_task(flow_ref)
    if store is not None and store.record(thread) is not None:  # type: ignore[arg-type]
        raise DefinitionError(f"{store.where} has a thread {thread!r} already: add --resume to continue it, "
                              "or pick another --thread")
    return flow.run_sync(task, checkpointer=store, thread=thread, **running)


def at_terminal() -> bool:
    """Whether a person can answer here (stdin is a terminal)."""
    return sys.stdin.isatty()


def _answer_pause(console: Console, result: RunResult, flow: Flow, store: Checkpointer, thread: str,
                  **running: Any) -> RunResult:
    """Ask the person at the terminal while the thread is paused (nobody there: leave it paused)."""
    while result.exit_reason.value == "paused" and at_terminal():
        console.print(f"[magenta]{thread} is paused: {result.pending}[/]")
        answer = typer.prompt("answer")
        result = flow.resume_sync(thread, checkpointer=store, input=answer, **running)
    return result


@app.command("run")
def run_command(
    flow_ref: str = typer.Argument(..., metavar="FLOW", help=FLOW_HELP),
    task: str | None = typer.Option(None, "--task", "-t", help="The task (bundled examples have a default)."),
    model: str | None = typer.Option(None, "--model", "-m", help="Model name, as for statebound eval (default: $STATEBOUND_MODEL, the config file's model, smollm2)."),
    model_option: list[str] = typer.Option([], "--model-option", help="Option for the model, key=value; repeatable."),
    trace: Path | None = typer.Option(None, "--trace", help="Write every event to this JSONL file."),
    max_turns: int | None = typer.Option(None, "--max-turns", min=1, help="Override the flow's turn limit."),
    store_path: str | None = typer.Option(None, "--store", help="Store the run as a thread: a SQLite file or a postgresql:// URL."),
    thread: str | None = typer.Option(None, "--thread", help="The thread's name in --store."),
    resume: bool = typer.Option(False, "--resume", help="Continue the stored --thread from its last checkpoint."),
    answer: str | None = typer.Option(None, "--input", help="With --resume: the answer to the question a paused thread asks."),
    switch_model: bool = typer.Option(False, "--switch-model", help="With --resume: go on with another model than the thread ran with."),
    tokens: bool | None = typer.Option(None, "--tokens/--no-tokens", help="Print each reply as the model writes it (default: when stdout is a terminal)."),
    otel: bool = otel_option(),
) -> None:
    """Run a flow on a task and print its trajectory state by state, then the usage.

    With --store and --thread every step is checkpointed; the same command with --resume continues the thread after a crash, or answers its pending question (--input, or a prompt).

    Exit status: 0 final state, 1 another end, 2 a mistake, 3 paused for input.

    Example (the embedded model): statebound run arithmetic

    Example (no model: the scripted double replays these replies): statebound run arithmetic -m scripted --model-option 'replies=["I would guess", "Expression: 3*12-5"]'"""
    from rich.console import Console

    from statebound.flow.live import open_checkpointer
    from statebound.flow.trace import JsonlTrace

    console = Console()
    start_tracing(otel)
    with one_line_errors():
        _check_thread_options(store_path, thread, resume, answer)
        flow = load_flow(flow_ref)
        if max_turns is not None:
            flow = flow.replace(max_turns=max_turns)
        llm = open_flow_model(model, model_option)
        store = open_checkpointer(store_path) if store_path is not None else None
        pieces = _Pieces(console) if (tokens if tokens is not None else console.is_terminal) else None
        sinks: list = [_printer(console, pieces)]
        writer = JsonlTrace(trace, append=resume) if trace is not None else None
        if writer is not None:
            sinks.append(writer)
        running: dict[str, Any] = {"llm": llm, "on_event": sinks, "record_events": False, "on_token": pieces}
        try:
            if resume:
                assert store is not None and thread is not None  # _check_thread_options
                _check_resumable(store, thread, f"statebound run {flow_ref} --store {store_path} --thread {thread}",
                                 llm, switch_model)
                console.print(f"[dim]{thread}: continuing from its last checkpoint in {store.where}[/]")
                result = flow.resume_sync(thread, checkpointer=store, input=answer, **running)
            else:
                result = _start(flow, task, flow_ref, store, thread, **running)
            if store is not None and thread is not None:
                result = _answer_pause(console, result, flow, store, thread, **running)
        finally:
            if writer is not None:
                writer.close()
            if store is not None:
                store.close()
    _print_usage(console, result)
    if trace is not None:
        console.print(f"trace written to {trace}")
    if result.exit_reason.value == "paused":
        hint = "; answer with --resume --input TEXT" if thread is not None else ""
        console.print(f"[magenta]paused: {result.pending}{hint}[/]")
        raise typer.Exit(code=PAUSED_EXIT)
    if not result.ok:
        raise typer.Exit(code=1)


@flow_app.command("draw")
def draw_command(
    flow_ref: str = typer.Argument(..., metavar="FILE_OR_EXAMPLE", help=FLOW_HELP),
    out: Path = typer.Option(Path("."), "--out", "-o", help="Directory for NAME.mmd, NAME.dot (and NAME.svg)."),
) -> None:
    """Write a flow's diagram as Mermaid (.mmd) and Graphviz (.dot), plus .svg if `dot` is installed.

    Example: statebound flow draw arithmetic --out diagrams/"""
    with one_line_errors():
        flow = load_flow(flow_ref)
        output_dir(out)
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
    model: str | None = typer.Option(None, "--model", "-m", help="Also check against this model: an LLM-decided "
                                     "transition that parses a free answer where the model could pick by a chooser."),
    model_option: list[str] = typer.Option([], "--model-option", help="Option for the model, key=value; repeatable."),
) -> None:
    """Static checks: shadowed or duplicate transitions, states without a default, a turn limit too small to finish, loops without model or tool calls, visit limits that never apply; with -m, what that model could do better.

    Example: statebound flow check my_flows.py:flow --strict -m smollm2"""
    from statebound.flow.checks import check_flow

    with one_line_errors():  # the flow does not even load or build: its hard errors
        flow = load_flow(flow_ref)
        llm = open_flow_model(model, model_option) if model is not None else None
    diagnostics = check_flow(flow, llm)
    for diagnostic in diagnostics:
        typer.echo(diagnostic.format(flow.name))
    warnings = sum(d.severity == "warning" for d in diagnostics)
    typer.echo(f"{flow.name}: {warnings} warning(s), {len(diagnostics) - warnings} info")
    if strict and warnings:
        raise typer.Exit(1)
