"""``statebound eval``: run a benchmark over agents x models x seeds into a resumable run directory."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer
from typer.core import TyperCommand

from statebound.cli.app import app
from statebound.cli.otel import otel_content_option, otel_option, secrets_of, start_tracing
from statebound.web.forms import MAX_INT

if TYPE_CHECKING:
    from statebound.bench.plan import RunConfig
    from statebound.bench.runner import RunOutcome


MAX_CONCURRENCY = 1024  # episodes in flight at once: beyond it, only memory and file handles run out
MAX_TIMEOUT = 1e7  # seconds (about 4 months): a finite limit a store keeps


def _default_out(benchmark: str) -> Path:
    return Path("runs") / f"{benchmark}-{time.strftime('%Y%m%d-%H%M%S')}"


class _ListsRegistered(TyperCommand):
    """``statebound eval --help`` ends with the benchmarks registered now (read only for the help)."""

    def format_help(self, ctx: Any, formatter: Any) -> None:  # typer's own click types
        from statebound.bench.registry import benchmark_class, benchmark_names

        lines = [f"{name}: {benchmark_class(name).summary}" for name in benchmark_names()]
        self.epilog = "Registered benchmarks (agents: statebound eval BENCHMARK --list-agents):\n\n" + "\n\n".join(lines)
        super().format_help(ctx, formatter)


@app.command("eval", cls=_ListsRegistered)
def eval_command(
    benchmark: str | None = typer.Argument(None, help="Benchmark name (listed at the end of this help); with --out DIR --resume, the stored one."),
    agent: list[str] = typer.Option([], "--agent", "-a", help="Agent to run; repeat for several (--list-agents shows them)."),
    model: list[str] = typer.Option([], "--model", "-m", help="Model name (statebound models lists them); repeat for several (default: $STATEBOUND_MODEL, the config file's model, smollm2)."),
    seed: list[int] = typer.Option([], "--seed", min=-MAX_INT - 1, max=MAX_INT, help="Seed; repeat for several (default 0)."),
    limit: int | None = typer.Option(None, "--limit", min=1, max=MAX_INT, help="Run only the first N selected tasks."),
    tasks: str | None = typer.Option(None, "--tasks", help="Comma-separated task ids (default: every task; a replay agent's: its file's)."),
    hardness: str | None = typer.Option(None, "--hardness", help="Only tasks with this meta hardness."),
    task_type: str | None = typer.Option(None, "--task-type", help="Only tasks with this meta task_type."),
    stratified: int | None = typer.Option(None, "--stratified", min=1, max=MAX_INT, help="A fixed stratified sample of N tasks (by --stratify-by)."),
    stratify_by: str = typer.Option("hardness", "--stratify-by", help="Task meta key for --stratified (hardness, task_type, fs, ...)."),
    max_turns: int | None = typer.Option(None, "--max-turns", min=1, max=MAX_INT, help="Turn limit per episode: actions sent to the environment (default: the benchmark's own, e.g. 10 for InterCode, 50 for ALFWorld)."),
    max_tokens: int | None = typer.Option(None, "--max-tokens", min=1, max=MAX_INT, help="Token limit per episode (prompt + completion)."),
    timeout: float | None = typer.Option(None, "--timeout", help="Wall-clock limit per episode, seconds (more than 0)."),
    concurrency: int = typer.Option(4, "--concurrency", "-j", min=1, max=MAX_CONCURRENCY, help="Episodes in flight at once."),
    out: Path | None = typer.Option(None, "--out", "-o", help="Run directory (default runs/<benchmark>-<timestamp>)."),
    resume: bool = typer.Option(False, "--resume", help="Continue the run in --out: its stored configuration, plus any agents, models or seeds given (only their episodes run)."),
    retry_errors: bool = typer.Option(False, "--retry-errors", help="With --resume, run crashed episodes again."),
    executor: str = typer.Option("local", "--executor", help="local or ray."),
    ray_address: str | None = typer.Option(None, "--ray-address", help="Existing Ray cluster (default $RAY_ADDRESS, else a local one)."),
    option: list[str] = typer.Option([], "--option", "-O", metavar="KEY=VALUE", help="Benchmark option key=value (e.g. db=sqlite); repeatable."),
    model_option: list[str] = typer.Option([], "--model-option", metavar="KEY=VALUE", help="Option for every model, key=value; repeatable."),
    no_progress: bool = typer.Option(False, "--no-progress", help="Hide the progress bar."),
    no_plots: bool = typer.Option(False, "--no-plots", help="Skip the plots."),
    list_agents: bool = typer.Option(False, "--list-agents", help="List BENCHMARK's agents and options, then exit."),
    wide: bool = typer.Option(False, "--wide", help="Print each table whole, however wide (default: fitted to the terminal)."),
    explain: bool = typer.Option(False, "--explain", help="Print what each column means under the tables (it is always written into report.md and report.html)."),
    otel: bool = otel_option(),
    otel_content: bool = otel_content_option(),
) -> None:
    """Run BENCHMARK and write the store, results.jsonl, trajectories, report and plots into --out.

    Ctrl-C (SIGINT) or SIGTERM stops the run, keeping the episodes that finished (exit status 130 or 143); --resume continues it. A second one exits at once.

    Exit status: 0 done; 1 crashed episodes are stored (--resume --retry-errors runs them again); 2 a mistake in the command, the config file or the model's settings (a refused key, an unknown model, a server that cannot be reached): nothing ran, or the run stopped and --resume continues it once fixed.

    Example (seconds, a model-free responder): statebound eval toy -a direct -a verify -m function:statebound.benchmarks.toy:oracle --out runs/toy

    Example (the embedded model, about 4 minutes on 2 cores): statebound eval intercode-sql -a stateflow -a react -m smollm2 -O format=grammar --limit 3 --out runs/sql

    Example (continue that run, adding an agent): statebound eval --out runs/sql --resume -a plan-solve"""
    from dataclasses import replace

    from statebound.bench.evaluate import Execution, execute_run, prepare_run
    from statebound.bench.identity import additions
    from statebound.bench.interrupt import RunInterrupted, SignalStop
    from statebound.bench.models import ModelSpec
    from statebound.bench.options import parse_pairs
    from statebound.bench.plan import TaskSelection
    from statebound.bench.run_lock import RunLock
    from statebound.bench.store import check_run_dir
    from statebound.cli.errors import EXIT_CRASHED, fail
    from statebound.cli.stored_run import (
        describe,
        limits_or_stored,
        locate_stored_files,
        stored_config,
        stored_models,
    )
    from statebound.contract.benchmark import EpisodeLimits
    from statebound.errors import StateboundError
    from statebound.llm.config import default_model
    from statebound.llm.model_options import secret_values
    from statebound.llm.secrets import redact
    from statebound.report.finish import finish_run
    from statebound.report.inert import inert
    from statebound.report.tables import print_report

    if list_agents:
        if benchmark is None:
            raise typer.BadParameter("give the benchmark whose agents to list, e.g. statebound eval toy --list-agents")
        _list_agents(benchmark)
        return
    if resume and out is None:
        raise typer.BadParameter("--resume needs --out DIR (the run directory to continue)")
    if out is not None:  # another run writing it: say so before reading what it has stored so far
        RunLock.refuse_if_held(out)
    stored = stored_config(out) if resume and out is not None else None
    if stored is not None and out is not None:  # its user files, from any directory: say which
        for line in locate_stored_files(out):
            typer.echo(inert(line))
    benchmark = _benchmark_to_run(benchmark, stored, out, resume=resume)
    if not agent and stored is None:
        raise typer.BadParameter(_agents_hint(benchmark))
    task_ids = _task_ids(tasks)
    if timeout is not None and not 0 < timeout <= MAX_TIMEOUT:
        raise typer.BadParameter(f"--timeout must be more than 0 seconds (and at most {MAX_TIMEOUT:g}), got {timeout:g}")
    chosen = any(value is not None for value in (tasks, hardness, task_type, stratified, limit))
    out_dir = out or _default_out(benchmark)
    start_tracing(otel, otel_content, secrets_of(model_option))
    config = None
    with SignalStop() as stop:
        try:
            try:
                model_options = parse_pairs(model_option, flag="--model-option")
                models = [ModelSpec(name, model_options) for name in model]
                if not models:
                    models = (stored_models(stored, model_options) if stored is not None
                              else [ModelSpec(default_model(), model_options)])
                selection = TaskSelection(ids=task_ids, hardness=hardness, task_type=task_type,
                                          stratified=stratified, stratify_by=stratify_by, limit=limit)
                if stored is not None and not chosen:
                    selection = TaskSelection(ids=stored.task_ids)
                given_options = parse_pairs(option)
                config, bench = prepare_run(
                    benchmark,
                    agents=agent or (stored.agents if stored is not None else ()),
                    models=models,
                    seeds=seed or (stored.seeds if stored is not None else (0,)),
                    selection=selection,
                    limits=limits_or_stored(stored, EpisodeLimits(max_turns=max_turns, max_tokens=max_tokens,
                                                                  timeout_s=timeout)),
                    benchmark_options={**(stored.benchmark_options if stored is not None else {}), **given_options},
                )
                if stored is not None:
                    if not chosen:  # the stored tasks in the stored order
                        config = replace(config, task_ids=stored.task_ids)
                    to_run = check_run_dir(out_dir, config, resume=resume)
                    typer.echo(inert(describe(to_run, out_dir, added=additions(stored, to_run))))
                execution = Execution(
                    concurrency=concurrency, executor=executor, ray_address=ray_address,
                    resume=resume, retry_errors=retry_errors, progress=not no_progress,
                )
                outcome = stop.run(execute_run(config, out_dir=out_dir, benchmark=bench, execution=execution))
                report, files = finish_run([out_dir], out_dir=out_dir, plots=not no_plots)
            except StateboundError as exc:
                given = dict(pair.partition("=")[::2] for pair in model_option)  # as typed, even if malformed
                fail(redact(_stopped(exc, config, out_dir), *secret_values(given)))
            print_report(report, wide=wide, explain=explain, written_to=out_dir)
            typer.echo(
                f"{outcome.ran} episodes run, {outcome.skipped} already stored, {outcome.crashed} crashed, "
                f"{outcome.wall_seconds:.1f}s. Run directory: {out_dir} ({len(files)} files written)"
            )
            _notes(outcome, config)
            if outcome.crash_causes:
                raise typer.Exit(EXIT_CRASHED)
        except RunInterrupted as interrupted:
            typer.echo(_interrupted(config, out_dir), err=True)
            stop.exit(interrupted.exit_code)


def _agents_hint(benchmark: str) -> str:
    """Why ``-a`` is needed, naming the benchmark's agents (or why the benchmark is unknown)."""
    from statebound.bench.registry import benchmark_class, load_agents
    from statebound.errors import StateboundError

    try:
        benchmark_class(benchmark)
        agents = list(load_agents(benchmark))
    except StateboundError as exc:
        return str(exc)
    return (f"give at least one --agent; {benchmark}'s agents: {', '.join(agents)} "
            f"(statebound eval {benchmark} --list-agents says what each does)")


def _list_agents(benchmark: str) -> None:
    """Print a benchmark's agents (and the agent kinds any benchmark takes) and options
    (``statebound eval BENCH --list-agents``)."""
    from statebound.bench.registry import (
        agent_kind_summary,
        agent_kinds,
        benchmark_class,
        load_agents,
    )
    from statebound.cli.errors import fail
    from statebound.errors import StateboundError

    try:
        cls, agents = benchmark_class(benchmark), load_agents(benchmark)
    except StateboundError as exc:
        fail(str(exc))
    typer.echo(f"{benchmark}: {cls.summary}\n\nagents:")
    width = max(map(len, agents), default=0)
    for name, spec in agents.items():
        typer.echo(f"  {name.ljust(width)}  {spec.summary}")
    for kind in agent_kinds():
        typer.echo(f"  {kind}:PATH  {agent_kind_summary(kind)}")
    typer.echo("\noptions (-O key=value):")
    for name, field in cls.Options.model_fields.items():
        allowed = _allowed_values(field.annotation)
        values = f" (one of {', '.join(allowed)})" if allowed else ""
        typer.echo(f"  {name}={field.default!r}{values}  {field.description or ''}".rstrip())


def _allowed_values(annotation: Any) -> list[str]:
    """The values an option's type allows, when it names them (a Literal, an Enum, a bool)."""
    import enum
    from typing import Literal, get_args, get_origin

    if annotation is bool:
        return ["true", "false"]
    if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
        return [str(member.value) for member in annotation]
    if get_origin(annotation) is Literal:
        return [str(value) for value in get_args(annotation)]
    return [value for arg in get_args(annotation) if arg is not type(None) for value in _allowed_values(arg)]


def _notes(outcome: RunOutcome, config: RunConfig) -> None:
    """The lines after the summary: transport settings changed on --resume, models without a
    price, and the crashed episodes grouped by cause."""
    from statebound.llm.pricing import is_priced
    from statebound.report.inert import inert

    if outcome.transport_changes:
        typer.echo(inert(f"resumed with other transport settings: {'; '.join(outcome.transport_changes)}"))
    unpriced = [model.name for model in config.models if not is_priced(model.name)]
    if unpriced:
        typer.echo(inert(f"price unknown for {', '.join(unpriced)}: reports show its cost as unknown "
                         "(statebound.llm.pricing.register_price adds one)"))
    if (summary := outcome.crash_summary()) is not None:  # the errors may quote a model or a sandbox
        typer.secho(inert(summary, one_line=True), fg=typer.colors.YELLOW)


def _stopped(error: Exception, config: RunConfig | None, out_dir: Path) -> str:
    """The error line; for an error that stopped a started run, what is kept and how to go on."""
    from statebound.bench.episode import RUN_STOPPING
    from statebound.bench.packed import has_store

    if config is None or not isinstance(error, RUN_STOPPING) or not has_store(out_dir):
        return str(error)
    return f"{error}. The run stopped, {_stored_of(config, out_dir)}: fix the cause and continue with {_resume_command(out_dir)}"


def _stored_of(config: RunConfig, out_dir: Path) -> str:
    """``37 of 200 episodes stored`` for the run in ``out_dir``."""
    from statebound.bench.store import RunStore
    from statebound.errors import StateboundError

    planned = len(config.models) * len(config.agents) * len(config.seeds) * len(config.task_ids)
    try:
        with RunStore(out_dir, read_only=True) as store:
            stored = len(store.finished())
    except (StateboundError, sqlite3.Error):  # no store yet
        stored = 0
    return f"{stored} of {planned} episodes stored"


def _interrupted(config: RunConfig | None, out_dir: Path) -> str:
    """The line printed when a signal stopped the command."""
    if config is None:
        return "interrupted before the run started"
    return f"interrupted: {_stored_of(config, out_dir)}; {_resume_command(out_dir)} continues it"


def _resume_command(out_dir: Path) -> str:
    return f"statebound eval --out {out_dir} --resume"


def _benchmark_to_run(given: str | None, stored: RunConfig | None, out: Path | None, *, resume: bool) -> str:
    """The benchmark named, or the stored run's (``--out DIR --resume``); they must agree."""
    if stored is None:
        if given is None and resume:
            raise typer.BadParameter(f"nothing to resume in {out}: it holds no run; give a BENCHMARK to start one there")
        if given is None:
            raise typer.BadParameter("give a BENCHMARK (statebound eval --help lists them), "
                                     "or --out DIR --resume to continue a stored run")
        return given
    if given is not None and given != stored.benchmark:
        raise typer.BadParameter(f"{out} holds a {stored.benchmark} run, not {given}: drop {given} "
                                 f"(statebound eval --out {out} --resume) or choose another --out")
    return stored.benchmark


def _task_ids(tasks: str | None) -> tuple[str, ...]:
    """``--tasks 1,2, 3`` as ids; a value that names no task is refused (it would run every one)."""
    if tasks is None:
        return ()
    ids = tuple(task.strip() for task in tasks.split(",") if task.strip())
    if not ids:
        raise typer.BadParameter(f"--tasks {tasks!r} names no task: give comma-separated ids, e.g. --tasks 1,2,3")
    return ids

