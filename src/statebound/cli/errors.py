"""How a command ends on a mistake: one line on stderr naming the cause, and a known exit status.

Exit statuses shared by the commands (``statebound run`` adds 1 for a run that ended outside a
final state and 3 for a paused thread; an interrupted ``eval`` exits 130 or 143):

- 0: done.
- 1 (:data:`EXIT_CRASHED`): ``statebound eval`` finished, but crashed episodes are stored.
- 2 (:data:`EXIT_MISTAKE`): a mistake in the command, the config file or the environment (an
  unknown model, a refused key, a server that cannot be reached, a bad option or path), or a
  bad command line; nothing ran, or the run stopped and ``--resume`` continues it once fixed.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, NoReturn

import typer
from typer.core import TyperGroup

from statebound.errors import DefinitionError, StateboundError

__all__ = ["EXIT_CRASHED", "EXIT_MISTAKE", "OneLineMistakes", "fail", "one_line_errors", "output_dir"]

EXIT_CRASHED = 1
EXIT_MISTAKE = 2


def fail(message: str) -> NoReturn:
    """End the command with ``error: message`` on stderr and exit status 2 (the message on one
    line, its control characters escaped: it may quote a store, a model or a server)."""
    from statebound.report.inert import inert

    typer.secho(f"error: {inert(' '.join(message.split()), one_line=True)}", fg=typer.colors.RED, err=True)
    raise typer.Exit(EXIT_MISTAKE)


@contextmanager
def one_line_errors() -> Iterator[None]:
    """A statebound error ends the command with ``error: ...`` on stderr and exit status 2."""
    try:
        yield
    except StateboundError as exc:
        fail(str(exc))


def output_dir(path: Path, *, flag: str = "--out", create: bool = True) -> Path:
    """``path`` as a directory to write into, created if missing (unless ``create`` is false); a
    :class:`DefinitionError` naming ``flag`` when a file is in the way, it is read-only (a
    read-only file system, or permissions) or it cannot be created."""
    if path.exists() and not path.is_dir():
        raise DefinitionError(f"{flag} {path} is a file, not a directory: give a directory")
    if path.is_dir() and not os.access(path, os.W_OK):
        raise DefinitionError(f"{path} is read-only: give {flag} a directory this user may write")
    if not create:
        return path
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise DefinitionError(f"cannot create {flag} {path}: {error.strerror}") from None
    return path


# Click's UsageError as typer raises it (typer may vendor its own click): BadParameter's base.
_USAGE_ERROR: type[Exception] = next(c for c in typer.BadParameter.__mro__ if c.__name__ == "UsageError")


@contextmanager
def _one_line_usage_errors() -> Iterator[None]:
    try:
        yield
    except _USAGE_ERROR as error:
        if type(error).__name__ == "NoArgsIsHelpError":
            raise  # a bare group name: its help is shown
        context = getattr(error, "ctx", None)
        where = f" ({context.command_path} --help shows the usage)" if context is not None else ""
        fail(f"{error.format_message().rstrip('.')}{where}")  # type: ignore[attr-defined]


class OneLineMistakes(TyperGroup):
    """The root command's class (or a base of it): every subcommand's mistakes end in one line on
    stderr and exit status 2, never a traceback or a framed box: statebound's own errors, and bad
    command lines (an unknown flag or command, a missing argument, a value of the wrong type)."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        with _one_line_usage_errors():
            return super().parse_args(ctx, args)

    def invoke(self, ctx: Any) -> Any:
        with _one_line_usage_errors(), one_line_errors():
            return super().invoke(ctx)
