"""``statebound spec``: check, draw, show specs and validate few-shot examples against them.

FILE may be a path to a ``.spec`` file or the name of a bundled spec (react, rewoo, reflexion,
cot, direct, pass).
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import typer

from statebound.cli.app import app

spec_app = typer.Typer(help="Behaviour specs: check, draw, show, validate few-shot examples.",
                       no_args_is_help=True)
app.add_typer(spec_app, name="spec")


def _load(file: str):  # -> Spec; imports stay inside commands to keep --help light
    from statebound.errors import SpecError
    from statebound.spec import BUNDLED, load_bundled, parse

    path = Path(file)
    if not path.exists() and file.lower() in BUNDLED:
        return load_bundled(file)
    if not path.exists():
        typer.echo(f"error: no spec file {file!r} (bundled specs: {', '.join(BUNDLED)})", err=True)
        raise typer.Exit(2)
    try:
        return parse(path.read_text(encoding="utf-8"), source_name=str(path))
    except SpecError as exc:
        typer.echo(f"{exc}", err=True)
        raise typer.Exit(1) from None


@spec_app.command("check")
def check_command(
    file: str = typer.Argument(..., help="Spec file or bundled spec name."),
    strict: bool = typer.Option(False, "--strict", help="Fail on warnings too (not on info notes)."),
) -> None:
    """Static checks: unreachable states, runs that cannot complete, weak markers (errors and warnings), unbounded loops (info).

    Example: statebound spec check react --strict"""
    from statebound.spec import check_spec

    spec = _load(file)
    diagnostics = check_spec(spec)
    for diagnostic in diagnostics:
        typer.echo(diagnostic.format(spec.source_name))
    errors = sum(d.severity == "error" for d in diagnostics)
    warnings = sum(d.severity == "warning" for d in diagnostics)
    notes = len(diagnostics) - errors - warnings
    typer.echo(f"{spec.name}: {errors} error(s), {warnings} warning(s), {notes} info")
    if errors or (strict and warnings):
        raise typer.Exit(1)


@spec_app.command("draw")
def draw_command(
    file: str = typer.Argument(..., help="Spec file or bundled spec name."),
    out: Path | None = typer.Option(None, "--out", "-o", help="Directory for the diagram files (default: here)."),
    old_out: Path | None = typer.Option(None, "--out-dir", hidden=True, help="The old name of --out."),
) -> None:
    """Write NAME.mmd (Mermaid) and NAME.dot (Graphviz), and NAME.svg when `dot` is installed.

    Example: statebound spec draw react --out diagrams/"""
    from statebound.cli.errors import output_dir
    from statebound.spec import to_dot, to_mermaid

    if out is not None and old_out is not None:
        raise typer.BadParameter("give --out once (--out-dir is its old name)")
    out_dir = out or old_out or Path(".")
    spec = _load(file)
    automaton = spec.compile()
    output_dir(out_dir, flag="--out")
    mermaid, dot = out_dir / f"{spec.name}.mmd", out_dir / f"{spec.name}.dot"
    mermaid.write_text(to_mermaid(spec, automaton), encoding="utf-8")
    dot.write_text(to_dot(spec, automaton), encoding="utf-8")
    written = [mermaid, dot]
    if shutil.which("dot"):
        svg = out_dir / f"{spec.name}.svg"
        subprocess.run(["dot", "-Tsvg", str(dot), "-o", str(svg)], check=True)
        written.append(svg)
    else:
        typer.echo("note: Graphviz `dot` not found; skipped the SVG (apt-get install graphviz)")
    for path in written:
        typer.echo(str(path))


@spec_app.command("show")
def show_command(file: str = typer.Argument(..., help="Spec file or bundled spec name.")) -> None:
    """Print the states, the behaviour and the automaton's transition table.

    Example: statebound spec show my_agent.spec"""
    spec = _load(file)
    automaton = spec.compile()
    typer.echo(spec.to_text())
    typer.echo(f"automaton: {len(automaton.nodes)} nodes, accepting {sorted(automaton.accepting)}")
    for node, out in automaton.edges.items():
        edges = ", ".join(f"{state} -> {target}" for state, target in out.items()) or "(end)"
        typer.echo(f"  {node}: {edges}")


@spec_app.command("validate-examples")
def validate_examples_command(
    file: str = typer.Argument(..., help="Spec file or bundled spec name."),
    prompt: Path = typer.Argument(..., help="Text file holding the few-shot prompt."),
    closed: bool = typer.Option(False, "--closed", help="The last example must be complete too."),
    loop_bounds: bool = typer.Option(False, "--loop-bounds", help="Hold the spec's loop counts (until_5) against the examples too (the authors' monitor does not)."),
) -> None:
    """Check that every example in a few-shot prompt follows the spec; report where one deviates.

    Example: statebound spec validate-examples react prompts/react_fewshot.txt"""
    from statebound.spec import validate_examples

    spec = _load(file)
    if not prompt.exists():
        typer.echo(f"error: no prompt file {str(prompt)!r}", err=True)
        raise typer.Exit(2)
    deviations = validate_examples(spec, prompt.read_text(encoding="utf-8"), last_may_be_open=not closed,
                                   loop_bounds=loop_bounds)
    for deviation in deviations:
        typer.echo(f"{prompt}:{deviation.line}:{deviation.column}: {deviation}")
    typer.echo(f"{len(deviations)} deviation(s)")
    if deviations:
        raise typer.Exit(1)
