"""``statebound models``: the models this installation can run, their context size and price."""

from __future__ import annotations

import typer

from statebound.cli.app import app

__all__ = ["models"]


def _price(info: object) -> str:
    price = getattr(info, "price", None)
    if price is None:
        return "unknown"
    if price.prompt_per_1k == price.completion_per_1k == 0:
        return "free"
    return f"${price.prompt_per_1k:g}/${price.completion_per_1k:g}"


@app.command()
def models(
    available: bool = typer.Option(False, "--available", help="Show only models ready to use."),
    probe: str | None = typer.Option(None, "--probe", metavar="URL",
                                     help="Ask the OpenAI-compatible server at URL what it is and what it can do."),
    model_option: list[str] = typer.Option([], "--model-option", metavar="KEY=VALUE",
                                           help="With --probe: an openai: model option (api_key, profile, ...)."),
) -> None:
    """List model names for --model: backend, availability, context size, price per 1K tokens.

    Example: statebound models --available; statebound models --probe http://127.0.0.1:8080/v1"""
    if probe is not None:
        _probe(probe, model_option)
        return
    from rich import box
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    from statebound.llm.config import config_path, default_model
    from statebound.llm.registry import list_models

    console = Console()
    wide = console.width >= 120  # else each model's notes go on the lines under its name
    table = Table(title="Models (price: USD per 1K prompt / completion tokens)",
                  box=box.SIMPLE_HEAD, collapse_padding=True, pad_edge=False)
    table.add_column("name" if wide else "name / notes", overflow="fold", min_width=29)
    for column in ("backend", "ready", "context", "price"):
        table.add_column(column, no_wrap=True)
    if wide:
        table.add_column("notes", overflow="fold")
    for info in list_models():
        if available and not info.available:
            continue
        notes = escape(info.description if info.available else str(info.unavailable_reason))
        cells = [
            info.backend,
            "[green]yes[/]" if info.available else "[red]no[/]",
            f"{info.context:,}" if info.context else "-",
            _price(info),
        ]
        if wide:
            table.add_row(info.name, *cells, notes)
        else:
            table.add_row(f"{info.name}\n[dim]{notes}[/]", *cells)
    console.print(table)
    console.print(f"default model: [bold]{default_model()}[/]   config file: {config_path()}")


def _probe(url: str, pairs: list[str]) -> None:
    """The server's profile and each capability: what statebound will use, and how it knows."""
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    from statebound.bench.options import parse_pairs
    from statebound.llm.registry import open_model

    options = parse_pairs(pairs, flag="--model-option")
    llm = open_model(f"openai:{options.pop('model', 'probe')}", base_url=url, **options)
    setup = llm.setup  # type: ignore[attr-defined]
    table = Table(title=f"{escape(url)}", show_lines=False)
    for column in ("capability", "used", "how it was established"):
        table.add_column(column, overflow="fold")
    for row in setup.report():
        table.add_row(*(escape(cell) for cell in row))
    console = Console()
    console.print(table)
    if setup.detection.fallback:
        console.print(f"[yellow]the probe fell back to the plain OpenAI profile: {escape(setup.detection.fallback)}[/]")
