"""``statebound induce``: learn a machine from the solved episodes of run directories; with
``--folds K``, one machine per fold, each evaluated on the tasks it kept out beside its random
control and the benchmark's hand-written machine (docs/induce.md)."""

from __future__ import annotations

from pathlib import Path

import typer

from statebound.cli.app import app

__all__ = ["induce_command"]


@app.command("induce")
def induce_command(
    runs: list[Path] = typer.Argument(..., metavar="RUN_DIR...", help="Run directories whose solved episodes teach."),
    benchmark: str = typer.Option(..., "--benchmark", "-b", help="The benchmark the runs are of."),
    out: Path = typer.Option(..., "--out", "-o", help="machine.py or machine.json; with --folds, a directory."),
    tasks: str | None = typer.Option(None, "--tasks", help="Learn only from these comma-separated task ids."),
    folds: int | None = typer.Option(None, "--folds", min=2, help="Learn on all folds but one, evaluate on that one, each way."),
    file_format: str = typer.Option("json", "--format", help="With --folds: the machines' files, json or py."),
    stratify_by: str = typer.Option("task_type", "--stratify-by", help="With --folds: the task meta key each fold gets its share of."),
    evaluate: bool = typer.Option(True, "--eval/--no-eval", help="With --folds: run the evaluation (else write the machines and their offline figures)."),
    model: list[str] = typer.Option([], "--model", "-m", help="Model the machines choose with; repeatable (default: as statebound eval)."),
    max_turns: int | None = typer.Option(None, "--max-turns", min=1, help="Actions per episode in the evaluation (default: the benchmark's)."),
    option: list[str] = typer.Option([], "--option", "-O", metavar="KEY=VALUE", help="Benchmark option for the evaluation (e.g. choice=score)."),
    model_option: list[str] = typer.Option([], "--model-option", metavar="KEY=VALUE", help="Option for every model."),
    seed: list[int] = typer.Option([], "--seed", help="Seed; repeat for several (default 0)."),
    beside: list[str] = typer.Option([], "--beside", help="With --folds: an agent to evaluate beside the machines; repeatable (default: the benchmark's hand-written machine and its control, for alfworld stateflow-scoped and stateflow-scoped-random)."),
    no_beside: bool = typer.Option(False, "--no-beside", help="Evaluate the machines and their control alone."),
    concurrency: int = typer.Option(1, "--concurrency", "-j", help="Episodes in flight at once."),
    resume: bool = typer.Option(False, "--resume", help="With --folds: keep the machines in --out and continue (or start) their evaluation at --max-turns."),
    no_progress: bool = typer.Option(False, "--no-progress", help="Hide the progress bar."),
    no_plots: bool = typer.Option(False, "--no-plots", help="Skip the plots."),
) -> None:
    """Learn a machine from solved runs: a state per role an action played, per task type, the model picking among the offered actions that fit.

    Example (one machine): statebound induce runs/aw-walkthrough --benchmark alfworld --out machine.py

    Example (held out, 2 folds, 12 steps): statebound induce runs/aw-walkthrough --benchmark alfworld --folds 2 --out runs/aw-induced -m smollm2 -O choice=score --max-turns 12"""
    from statebound.cli.errors import one_line_errors

    with one_line_errors():
        if folds is None:
            _one_machine(runs, benchmark, out, tasks)
            return
        _folds(runs, benchmark, out, folds, file_format, stratify_by, resume=resume)
    if evaluate:
        _evaluate(out, benchmark, model=model, max_turns=max_turns, option=option, model_option=model_option,
                  seed=seed, beside=[] if no_beside else beside or None, concurrency=concurrency, resume=resume,
                  progress=not no_progress, plots=not no_plots)


def _one_machine(runs: list[Path], benchmark: str, out: Path, tasks: str | None) -> None:
    from statebound.errors import DefinitionError
    from statebound.induce import induce_machine, write_machine
    from statebound.induce.files import SUFFIXES

    if out.suffix not in SUFFIXES:
        raise DefinitionError(f"--out {out}: a machine is written as .py or .json (with --folds, --out is a directory)")

    chosen = {t.strip() for t in tasks.split(",") if t.strip()} if tasks is not None else None
    machine = induce_machine(runs, benchmark=benchmark, tasks=chosen)
    path = write_machine(machine, out)
    trained = machine.trained
    typer.echo(f"{path}: {len(machine.graphs)} task types, {sum(len(g.roles) for g in machine.graphs)} roles, "
               f"learnt from {trained.episodes} solved episodes ({trained.steps} steps, {trained.tokens} model tokens) "
               f"in {trained.seconds:.2f} s")
    typer.echo(f"run it: statebound eval {benchmark} -a induced:{path}; draw it: statebound flow draw induced:{path}")


def _folds(runs: list[Path], benchmark: str, out: Path, folds: int, file_format: str, stratify_by: str, *,
           resume: bool) -> None:
    from statebound.cli.errors import output_dir
    from statebound.errors import DefinitionError
    from statebound.induce.folds import offline_coverage, read_folds, summary, write_folds

    if file_format not in ("json", "py"):
        raise DefinitionError(f"--format must be json or py, not {file_format!r}")
    output_dir(out)
    existing = sorted(out.glob("fold-*"))
    if existing and not resume:
        raise DefinitionError(f"{out} already holds machines ({', '.join(p.name for p in existing)}); pass --resume "
                              "to evaluate them, or choose another --out")
    if not existing:
        write_folds(runs, benchmark=benchmark, folds=folds, out_dir=out, suffix=f".{file_format}",
                    stratify_by=stratify_by)
    machines = read_folds(out)
    if len(machines) != folds:
        raise DefinitionError(f"{out} holds {len(machines)} fold machines, not {folds}")
    text = summary(machines, offline_coverage([m for _, m in machines], runs))
    (out / "induction.md").write_text(f"# Machines induced from {', '.join(map(str, runs))}\n\n{text}", encoding="utf-8")
    typer.echo(text)


def _evaluate(out: Path, benchmark: str, *, model: list[str], max_turns: int | None, option: list[str],
              model_option: list[str], seed: list[int], beside: list[str] | None, concurrency: int, resume: bool,
              progress: bool, plots: bool) -> None:
    from statebound.bench.evaluate import Execution, execute_run
    from statebound.bench.interrupt import RunInterrupted, SignalStop
    from statebound.bench.options import parse_pairs
    from statebound.bench.packed import has_store
    from statebound.bench.registry import benchmark_class
    from statebound.cli.errors import one_line_errors
    from statebound.induce.folds import fold_run
    from statebound.llm.config import default_model
    from statebound.report.finish import finish_run
    from statebound.report.tables import print_report

    run_dir = out
    with SignalStop() as stop:
        try:
            with one_line_errors():
                turns = max_turns or benchmark_class(benchmark).default_max_turns or 50
                config, loaded, run_dir = fold_run(
                    out, benchmark=benchmark, models=model or [default_model()], max_turns=turns,
                    options=parse_pairs(option), seeds=seed or (0,), beside=beside)
                if model_option:
                    from dataclasses import replace

                    from statebound.bench.models import ModelSpec

                    options = parse_pairs(model_option, flag="--model-option")
                    config = replace(config, models=tuple(ModelSpec(m.name, options) for m in config.models))
                execution = Execution(concurrency=concurrency, resume=resume and has_store(run_dir), progress=progress)
                stop.run(execute_run(config, out_dir=run_dir, benchmark=loaded, execution=execution))
                report, _ = finish_run([run_dir], out_dir=run_dir, plots=plots)
            print_report(report)
            typer.echo(f"evaluation: {run_dir} (report.md); the machines' cost and offline figures: {out / 'induction.md'}")
        except RunInterrupted as interrupted:
            typer.echo(f"interrupted; continue with the same command and --resume ({run_dir})", err=True)
            stop.exit(interrupted.exit_code)
