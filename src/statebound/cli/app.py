"""Assembles the Typer application from the subcommand modules.

Each module registers its commands on ``app`` (or a sub-app). Keep module-level imports light:
``statebound --help`` must not load a model, numpy or the OpenAI SDK.
"""

from __future__ import annotations

import typer

from statebound.cli.errors import OneLineMistakes
from statebound.cli.helptext import ReadableGroup


class _Root(OneLineMistakes, ReadableGroup):
    """Readable help (:class:`ReadableGroup`) and one-line mistakes (:class:`OneLineMistakes`)."""


app = typer.Typer(
    name="statebound",
    help="LLM agents bound by explicit state machines: flows, behaviour specs, benchmarks.\n\n"
         "Examples: statebound run arithmetic (a bundled flow on the embedded model); "
         "statebound eval toy --list-agents (a benchmark's agents and options); "
         "statebound COMMAND --help (each command's options, with an example).",
    no_args_is_help=True,
    pretty_exceptions_show_locals=False,
    add_completion=False,
    cls=_Root,
)


def _print_version(asked: bool) -> None:
    if asked:
        from importlib.metadata import version as dist_version

        typer.echo(f"statebound {dist_version('statebound')}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(False, "--version", help="Print the version and exit.", is_eager=True,
                                 callback=_print_version),
) -> None:
    """Runs before every command; --version is handled while the options are read."""


# Subcommand modules (each adds its commands to ``app`` when imported).
# Keep this list in sync when adding a module; order is the order in --help.
from statebound.cli import eval as _eval  # noqa: E402,F401  (harness: eval, report, show)
from statebound.cli import report as _report  # noqa: E402,F401
from statebound.cli import show as _show  # noqa: E402,F401
from statebound.cli import status as _status  # noqa: E402,F401
from statebound.cli import view as _view  # noqa: E402,F401  (web viewer of runs and threads)
from statebound.cli import models as _models  # noqa: E402,F401
from statebound.cli import run as _run  # noqa: E402,F401  (flow engine: run, flow draw)
from statebound.cli import threads as _threads  # noqa: E402,F401  (live flows: threads)
from statebound.cli import serve as _serve  # noqa: E402,F401  (live flows over HTTP: the Agent Protocol)
from statebound.cli import mcp as _mcp  # noqa: E402,F401  (MCP: serve flows, list a server's tools)
from statebound.cli import spec as _spec  # noqa: E402,F401  (behaviour specs: check, draw, show)
from statebound.cli import clean as _clean  # noqa: E402,F401  (leftovers of killed runs)
from statebound.cli import pack as _pack  # noqa: E402,F401  (compressed run stores)
from statebound.cli import induce as _induce  # noqa: E402,F401  (machines learnt from solved runs)
