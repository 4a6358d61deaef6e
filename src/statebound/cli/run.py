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
import shlex
import shutil
import subprocess
import sys
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from statebound.cli.app import app
from statebound.cli.errors import one_line_errors, output_dir
from statebound.cli.otel import otel_content_option, otel_option, secrets_of, start_tracing
from statebound.errors import DefinitionError, did_you_mean
from statebound.report.inert import CELL_LIMIT, inert_text
from statebound.user_files import (
    USER_MODULE_PREFIX,
    call,
    is_file_ref,
    load_file,
    load_ref,
    names_in,
)
from statebound.web.forms import MAX_INT

if TYPE_CHECKING:
    from rich.console import Console

    from statebound.flow import Event, Flow, RunResult, TokenDelta
    from statebound.flow.choice import Picked
    from statebound.flow.live import Checkpointer
    from statebound.llm.base import LLM

flow_app = typer.Typer(help="Inspect flows: draw their diagrams, check them.", no_args_is_help=True)
app.add_typer(flow_app, name="flow")

FLOW_HELP = ("A bundled example (arithmetic, research), a Python file and variable: path.py:flow, or an induced "
             "machine: induced:machine.json")
INDUCED = "induced:"
MCP_CONFIG_HELP = ("An MCP config file ({\"mcpServers\": {...}}, the shape MCP clients share): the servers "
                   "mcp(\"name\") finds.")


def mcp_servers(config: Path | None) -> AbstractContextManager[object]:
    """The servers of the MCP ``config`` file made the ones ``mcp("name")`` finds (nothing without one)."""
    if config is None:
        return nullcontext()
    from statebound.mcp import load_servers, use_servers

    return use_servers(load_servers(config))


def load_flow(ref: str) -> Flow:
    """The flow ``ref`` names (bundled example, ``path.py:variable`` or ``induced:PATH``, a
    machine :mod:`statebound.induce` wrote); DefinitionError otherwise."""
    from statebound.examples import EXAMPLES, load_example
    from statebound.flow import Flow

    if ref in EXAMPLES:
        flow = load_example(ref)
        flow.origin = ref
        return flow
    if ref.startswith(INDUCED):
        from statebound.induce import load_machine

        flow = load_machine(ref[len(INDUCED):]).flow()
        flow.origin = ref
        return flow
    if ref.endswith(".py") and Path(ref).is_file():  # the file without the flow's name
        flows = names_in(load_file(Path(ref)), _makes_flow)
        named = " or ".join(f"{ref}:{name}" for name in flows[:5])
        raise DefinitionError(f"{ref} is a file: name the flow in it, {named}" if flows else
                              f"{ref} defines no Flow (nor a function of no arguments building one) to run")
    if not is_file_ref(ref):
        raise DefinitionError(f"{ref!r} is neither a bundled example ({', '.join(sorted(EXAMPLES))}), "
                              f"path.py:variable nor induced:PATH.{did_you_mean(ref, EXAMPLES)}")
    value = load_ref(ref, "a Flow", fits=_makes_flow)
    if not isinstance(value, Flow) and callable(value):
        try:
            inspect.signature(value).bind()
        except TypeError as error:
            raise DefinitionError(f"{ref} cannot be called without arguments ({error}): name a Flow, or a "
                                  "function that builds one from no arguments") from None
        value = call(ref, "building the flow", value)
    if not isinstance(value, Flow):
        raise DefinitionError(f"{ref} is a {type(value).__name__}, not a statebound.flow.Flow")
    path, _, variable = ref.rpartition(":")
    value.origin = f"{Path(path).resolve()}:{variable}"  # works from any directory
    return value


def _with_vars(flow: Flow, flow_ref: str, pairs: list[str], *, resume: bool) -> Flow:
    """``flow`` starting with the variables ``--var FIELD=VALUE`` sets (the others keep their
    defaults); refused for a flow without variables, and on ``--resume`` (a thread's variables
    come from its checkpoints)."""
    from statebound.bench.options import parse_pairs

    if flow.vars is None:
        raise DefinitionError(f"{flow_ref} declares no variables (Flow(vars=...)) for --var to set")
    if resume:
        raise DefinitionError("--var sets a new run's starting variables; a resumed thread's come from its checkpoints")
    given = parse_pairs(pairs, flag="--var")
    unknown = [name for name in given if name not in flow.vars.fields]
    if unknown:
        raise DefinitionError(f"--var {unknown[0]}: {flow.vars.kind.__name__} has no field {unknown[0]!r}."
                              f"{did_you_mean(unknown[0], flow.vars.fields)} Its fields: {', '.join(flow.vars.fields)}")
    return flow.replace(vars=flow.vars.load(given))


def load_deps(ref: str) -> Any:
    """What ``--deps path.py:name`` names: the object, or what the function (or class) there
    makes from no arguments."""
    if not is_file_ref(ref):
        raise DefinitionError(f"--deps {ref!r} is not path.py:name (an object in a Python file, or a function "
                              "or class there that makes it from no arguments)")
    value = load_ref(ref, "what the tools get as ctx.deps")
    if not (inspect.isfunction(value) or inspect.isclass(value)):
        return value
    try:
        inspect.signature(value).bind()
    except TypeError as error:
        raise DefinitionError(f"--deps {ref} cannot be called without arguments ({error})") from None
    except ValueError:  # a class whose signature Python cannot read: try it
        pass
    try:
        return value()
    except Exception as error:  # noqa: BLE001 - the user's code: one line naming what failed
        raise DefinitionError(f"--deps {ref}: making it failed: {type(error).__name__}: {error}") from None


def _makes_flow(value: Any) -> bool:
    """Whether ``value`` is a Flow, or a function of the user's file that builds one from no
    arguments (the two things ``path.py:name`` may name)."""
    from statebound.flow import Flow

    if isinstance(value, Flow):
        return True
    if not inspect.isfunction(value) or not value.__module__.startswith(USER_MODULE_PREFIX):
        return False  # imported functions are not the file's own
    try:
        inspect.signature(value).bind()
    except TypeError:
        return False
    return True


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
        self.console.print(inert_text(delta.text), end="")

    def close(self) -> bool:
        """End the streamed line; whether there was one."""
        if self.open:
            self.console.print()
            self.open = False
            return True
        return False


def _printer(console: Console, pieces: _Pieces | None = None) -> Callable[[Event], None]:
    from rich.text import Text

    from statebound.flow.choice import Picked
    from statebound.flow.events import refused_by_limit

    colours = {"task": "bold", "instruction": "cyan", "llm": "green", "tool": "yellow", "human": "magenta"}

    def show(event: Event) -> None:
        kind = event.kind
        if kind == "state_entered":
            console.rule(Text.assemble(inert_text(event.state, "bold", one_line=True),  # type: ignore[union-attr]
                                       f" (turn {event.turn}, visit {event.visit})"))  # type: ignore[union-attr]
        elif kind == "message_added":
            entry = event.entry  # type: ignore[union-attr]
            if entry.source == "llm" and pieces is not None and pieces.close():
                return  # shown already, piece by piece
            who = entry.source + (f" {entry.name}" if entry.name else "")
            status = "" if entry.ok is None else (" ok" if entry.ok else " failed")
            colour = colours.get(entry.source, "white")
            console.print(Text.assemble(inert_text(f"{who}{status}:", colour, one_line=True), " ",
                                        inert_text(entry.content)))
            if (picked := Picked.from_entry(entry)) is not None and picked.candidates:
                console.print(inert_text(f"   {_picked_line(picked)}", "dim"))
        elif kind == "speaker_selected":
            console.print(inert_text(f"-> speaker {event.role} ({event.how})", "magenta"))  # type: ignore[union-attr]
        elif kind == "transition_taken":
            console.print(inert_text(f"=> {event.target}: {event.reason}", "dim"))  # type: ignore[union-attr]
        elif kind == "budget_hit":
            said = refused_by_limit([event.to_dict()]) or f"{event.limit} {event.used}/{event.allowed} in {event.state}"  # type: ignore[union-attr]
            console.print(inert_text(f"limit reached: {said}", "red"))
        elif kind == "child_event":
            _show_child(console, event.to_dict())

    return show


def _show_child(console: Console, event: dict[str, Any]) -> None:
    """A sub-machine's or branch's step, one dim line under its path: the states it enters, the
    transitions it takes and the entries it adds."""
    inner, path = event["event"], event["path"]
    if inner["kind"] == "state_entered":
        said = f"{inner['state']} (turn {inner['turn']})"
    elif inner["kind"] == "transition_taken":
        said = f"=> {inner['target']}: {inner['reason']}"
    elif inner["kind"] == "message_added":
        said = f"{inner['source']}: {inner['content']}"
    else:
        return
    console.print(inert_text(f"  [{path}] {said}", "dim", one_line=True))


def _by_id(command: str, result: RunResult) -> str:
    """``command`` answering by id (``--answer ID=TEXT`` for each) when branches wait on questions."""
    from statebound.flow.pauses import questions

    waiting = [pause for pause in questions(result) if pause]
    if not waiting:
        return command
    by_id = [part for pause in waiting for part in ("--answer", f"{pause}=your answer")]
    return command.replace(shlex.join(["--input", "your answer"]), shlex.join(by_id))


def _answers(text: str | None, by_id: list[str]) -> str | dict[str, str] | None:
    """What ``--input TEXT`` or ``--answer ID=TEXT ...`` answer: text, or answers by id."""
    if not by_id:
        return text
    if text is not None:
        raise DefinitionError("give --input TEXT (one question waits) or --answer ID=TEXT (by id), not both")
    malformed = [item for item in by_id if "=" not in item]
    if malformed:
        raise DefinitionError(f"--answer takes ID=TEXT (the ids the paused run lists), not {malformed[0]!r}")
    return dict(item.split("=", 1) for item in by_id)


def _picked_line(picked: Picked) -> str:
    """How a pick chose, as an LLM-decided transition's line says it: ``picked by score among 4:
    billing 0.66, account -0.31, ...`` (the best five, best first)."""
    shown = ""
    if picked.scores is not None:
        order = sorted(range(len(picked.candidates)), key=lambda i: -picked.scores[i])  # type: ignore[index]
        more = len(order) - 5
        shown = ": " + ", ".join(f"{picked.candidates[i]} {picked.scores[i]:.2f}" for i in order[:5])
        shown += f", and {more} more" if more > 0 else ""
    return f"picked by {picked.method} among {len(picked.candidates)}{shown}"


def _print_usage(console: Console, result: RunResult) -> None:
    from rich.table import Table
    from rich.text import Text


    table = Table(title="Usage")
    for column in ("state", "LLM calls", "prompt tokens", "completion tokens"):
        table.add_column(column, justify="left" if column == "state" else "right")
    for state, usage in result.usage_by_state.items():
        table.add_row(inert_text(state, limit=CELL_LIMIT, one_line=True), str(usage.calls), str(usage.prompt_tokens),
                      str(usage.completion_tokens))
    u = result.usage
    table.add_row("[bold]run[/]", str(u.calls), str(u.prompt_tokens), str(u.completion_tokens))
    console.print(table)
    cost = "unknown" if result.cost is None else f"${result.cost:.4f}"
    if result.vars is not None:
        console.print(inert_text(f"vars: {result.vars!r}"))
    for state, output, field in result.unwritten:
        console.print(inert_text(f"note: in state {state}, {output} declares it writes {field!r} but did not write "
                                 "it in this run (drop it from writes=, or write it)", "yellow"))
    colour = "green" if result.ok else "red"
    console.print(Text.assemble(inert_text(f"exit: {result.exit_state} ({result.exit_reason.value})", colour),
                                f" after {result.turns} turns; cost {cost}"))
    if result.error is not None:
        console.print(inert_text(f"error: {type(result.error).__name__}: {result.error}", "red"))


PAUSED_EXIT = 3  # the run waits for a person: continue with --resume --input TEXT


def _check_thread_options(store: str | None, thread: str | None, resume: bool,
                          answer: str | dict[str, str] | None) -> None:
    if (store is None) != (thread is None):
        raise DefinitionError("--store and --thread go together: --store PATH --thread ID stores the run")
    if resume and thread is None:
        raise DefinitionError("--resume needs --store PATH --thread ID (the thread to continue)")
    if answer is not None and not resume:
        raise DefinitionError("--input and --answer answer a paused thread: add --resume")


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
    from statebound.flow.pauses import questions

    while result.exit_reason.value == "paused" and at_terminal():
        console.print(inert_text(f"{thread} is paused: {result.pending}", "magenta"))
        waiting = questions(result)
        answer: str | dict[str, str] = typer.prompt("answer") if list(waiting) == [""] else \
            {pause: typer.prompt(f"answer to [{pause}]") for pause in waiting}
        result = flow.resume_sync(thread, checkpointer=store, input=answer, **running)
    return result


@app.command("run")
def run_command(
    flow_ref: str = typer.Argument(..., metavar="FLOW", help=FLOW_HELP),
    task: str | None = typer.Option(None, "--task", "-t", help="The task (bundled examples have a default)."),
    model: str | None = typer.Option(None, "--model", "-m", help="Model name, as for statebound eval (default: $STATEBOUND_MODEL, the config file's model, smollm2)."),
    model_option: list[str] = typer.Option([], "--model-option", help="Option for the model, key=value; repeatable."),
    trace: Path | None = typer.Option(None, "--trace", help="Write every event to this JSONL file."),
    max_turns: int | None = typer.Option(None, "--max-turns", min=1, max=MAX_INT, help="Override the flow's turn limit."),
    store_path: str | None = typer.Option(None, "--store", help="Store the run as a thread: a SQLite file or a postgresql:// URL."),
    thread: str | None = typer.Option(None, "--thread", help="The thread's name in --store."),
    resume: bool = typer.Option(False, "--resume", help="Continue the stored --thread from its last checkpoint."),
    answer: str | None = typer.Option(None, "--input", help="With --resume: the answer to the question a paused thread asks."),
    by_id: list[str] = typer.Option([], "--answer", metavar="ID=TEXT", help="With --resume: the answer to one of the questions that parallel branches or sub-machines ask, by the id the paused run lists; repeatable."),
    switch_model: bool = typer.Option(False, "--switch-model", help="With --resume: go on with another model than the thread ran with."),
    tokens: bool | None = typer.Option(None, "--tokens/--no-tokens", help="Print each reply as the model writes it (default: when stdout is a terminal)."),
    var: list[str] = typer.Option([], "--var", metavar="FIELD=VALUE", help="A starting value of the flow's variables (Flow(vars=...)), e.g. --var team=billing; a value is read as JSON where it is JSON; repeatable."),
    deps: str | None = typer.Option(None, "--deps", metavar="PATH.PY:NAME", help="What the flow's tools get as ctx.deps: an object in a Python file, or a function there that makes it from no arguments."),
    mcp_config: Path | None = typer.Option(None, "--mcp-config", help=MCP_CONFIG_HELP),
    otel: bool = otel_option(),
    otel_content: bool = otel_content_option(),
) -> None:
    """Run a flow on a task and print its trajectory state by state, then the usage.

    With --store and --thread every step is checkpointed; the same command with --resume continues the thread after a crash, or answers its pending question (--input, or a prompt).

    Exit status: 0 final state, 1 another end, 2 a mistake, 3 paused for input.

    Example (the embedded model): statebound run arithmetic

    Example (no model: the scripted double replays these replies): statebound run arithmetic -m scripted --model-option 'replies=["I would guess", "Expression: 3*12-5"]'

    Example (a flow with typed variables and an environment for its tools): statebound run tickets.py:flow --task "I was charged twice" --var team=billing --deps tickets.py:desk"""
    from rich.console import Console

    from statebound.flow.live import open_checkpointer
    from statebound.flow.trace import JsonlTrace

    console = Console()
    start_tracing(otel, otel_content, secrets_of(model_option))
    with one_line_errors():
        reply = _answers(answer, by_id)
        _check_thread_options(store_path, thread, resume, reply)
        servers = mcp_servers(mcp_config)
        flow = load_flow(flow_ref)
        if max_turns is not None:
            flow = flow.replace(max_turns=max_turns)
        if var:
            flow = _with_vars(flow, flow_ref, var, resume=resume)
        running_deps = load_deps(deps) if deps is not None else None
        llm = open_flow_model(model, model_option)
        store = open_checkpointer(store_path) if store_path is not None else None
        pieces = _Pieces(console) if (tokens if tokens is not None else console.is_terminal) else None
        sinks: list = [_printer(console, pieces)]
        writer = JsonlTrace(trace, append=resume) if trace is not None else None
        if writer is not None:
            sinks.append(writer)
        running: dict[str, Any] = {"llm": llm, "deps": running_deps, "on_event": sinks, "record_events": False,
                                   "on_token": pieces}
        with servers:  # the servers mcp("name") finds in the flow
            try:
                if resume:
                    assert store is not None and thread is not None  # _check_thread_options
                    _check_resumable(store, thread, f"statebound run {flow_ref} --store {store_path} --thread {thread}",
                                     llm, switch_model)
                    console.print(inert_text(f"{thread}: continuing from its last checkpoint in {store.where}", "dim"))
                    result = flow.resume_sync(thread, checkpointer=store, input=reply, **running)
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
        console.print(inert_text(f"trace written to {trace}"))
    if result.exit_reason.value == "paused":
        from statebound.flow.live.hints import run_on_command

        console.print(inert_text(f"paused: {result.pending}", "magenta"))
        if thread is not None and store_path is not None and flow.origin is not None:
            command = run_on_command(flow.origin, store_path, thread, paused=True, model=llm.model)
            if mcp_config is not None:
                command += " " + shlex.join(["--mcp-config", str(mcp_config.resolve())])
            command = _by_id(command, result)
            console.print(inert_text(f"answer with: {command}", one_line=True), soft_wrap=True)
        raise typer.Exit(code=PAUSED_EXIT)
    if not result.ok:
        raise typer.Exit(code=1)


@flow_app.command("draw")
def draw_command(
    flow_ref: str = typer.Argument(..., metavar="FILE_OR_EXAMPLE", help=FLOW_HELP),
    out: Path = typer.Option(Path("."), "--out", "-o", help="Directory for NAME.mmd, NAME.dot (and NAME.svg)."),
    show_vars: bool = typer.Option(False, "--vars", help="Show on each state the flow variables it reads and writes."),
) -> None:
    """Write a flow's diagram as Mermaid (.mmd) and Graphviz (.dot), plus .svg if `dot` is installed.

    Example: statebound flow draw docs/examples/tickets.py:flow --vars --out diagrams/"""
    with one_line_errors():
        flow = load_flow(flow_ref)
        output_dir(out)
    written = []
    for suffix, text in ((".mmd", flow.to_mermaid(reads_writes=show_vars)), (".dot", flow.to_dot(reads_writes=show_vars))):
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
