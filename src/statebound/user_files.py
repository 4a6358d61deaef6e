"""A user's Python file as a source of flows, benchmarks and agents: ``path.py:name``.

The file runs once per process as a module of its own (registered in ``sys.modules``, so
dataclasses and pydantic models defined there work), with its folder first on ``sys.path`` while
it loads (so it may import its neighbours); what it adds to ``sys.path`` stays, what it removes of
the process's own entries comes back. Whatever it raises, loading or later in what it
defines (:func:`call`: a flow factory, a benchmark's ``tasks()``), becomes one
:class:`~statebound.errors.DefinitionError` naming the file and line.

A run keeps where its files were (:func:`file_of`); ``statebound eval --resume`` from another
directory finds them again through :func:`relocate`. Nothing that only reads a run loads its files.
"""

from __future__ import annotations

import hashlib
import importlib.util
import re
import sys
import traceback
from collections.abc import Callable
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import Any, TypeVar

from statebound.errors import DefinitionError, StateboundError, did_you_mean

__all__ = ["USER_MODULE_PREFIX", "call", "file_of", "is_file_ref", "load_file", "load_ref", "names_in", "relocate"]

USER_MODULE_PREFIX = "_statebound_user_"  # the module name a user's file loads under starts so
_REF = re.compile(r"^(?P<path>.+\.py):(?P<name>[A-Za-z_][\w.]*)$")
_RELOCATED: dict[str, Path] = {}
T = TypeVar("T")


def is_file_ref(ref: str) -> bool:
    """``ref`` has the form ``path.py:name``."""
    return _REF.match(ref) is not None


def file_of(ref: str) -> Path:
    """The file ``path.py:name`` names, as it would be loaded now (absolute)."""
    match = _REF.match(ref)
    if match is None:
        raise DefinitionError(f"{ref!r} is not path.py:name")
    return _RELOCATED.get(match["path"], Path(match["path"])).absolute()


def relocate(written: str, actual: Path) -> None:
    """Load the file written ``written`` in a ``path.py:name`` from ``actual`` (a run resumed from
    another directory than the one it was made in)."""
    _RELOCATED[written] = actual


def _where(path: Path, error: BaseException) -> str:
    """``path:line`` of the last line of ``path`` that ``error`` passed through (else the file,
    else the last line it passed through anywhere)."""
    frames = traceback.extract_tb(error.__traceback__)
    inside = [f for f in frames if Path(f.filename) == path]
    if inside:
        return f"{path}:{inside[-1].lineno}"
    return str(path) if not frames else f"{path} (at {frames[-1].filename}:{frames[-1].lineno})"


def _failure(path: Path, error: BaseException, doing: str) -> DefinitionError:
    cause = " ".join(str(error).split())
    return DefinitionError(f"{_where(path, error)}: {type(error).__name__}{': ' + cause if cause else ''} ({doing})")


@cache
def _load(resolved: str) -> ModuleType:
    path = Path(resolved)
    name = f"{USER_MODULE_PREFIX}{path.stem}_{hashlib.sha1(resolved.encode()).hexdigest()[:8]}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise DefinitionError(f"cannot import {path}; is it a Python file?")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    folder, search, before = str(path.parent), sys.path, list(sys.path)
    sys.path.insert(0, folder)
    try:
        spec.loader.exec_module(module)
    except SyntaxError as exc:
        del sys.modules[name]
        raise DefinitionError(f"{path}:{exc.lineno}: {exc.msg} (a Python syntax error)") from None
    except StateboundError:
        del sys.modules[name]
        raise
    except BaseException as exc:  # SystemExit and KeyboardInterrupt from a file are its failures too
        del sys.modules[name]
        if isinstance(exc, KeyboardInterrupt):
            raise
        raise _failure(path, exc, "while loading the file") from None
    finally:
        sys.path = _restored(search, before, folder)
    return module


def _restored(search: list[str], before: list[str], folder: str) -> list[str]:
    """``search`` (the process's ``sys.path``, even if a file bound ``sys.path`` to another list)
    holding what ``sys.path`` holds now without ``folder``, and every entry it held ``before``: a
    file's own additions stay, and what the process imports from later can still be found."""
    now = list(sys.path)
    if folder in now:
        now.remove(folder)
    search[:] = now + [entry for entry in before if entry not in now]
    return search


def load_file(path: Path) -> ModuleType:
    """The module the file at ``path`` defines (loaded once per process)."""
    if not path.is_file():
        raise DefinitionError(f"no such file {path}; give path.py:name, e.g. my_flows.py:flow")
    return _load(str(path.resolve()))


def load_ref(ref: str, what: str, *, fits: Callable[[Any], bool] | None = None) -> Any:
    """The object ``path.py:name`` names (dots after the colon walk attributes); ``what`` says
    what is wanted, for errors, which list the file's names whose values ``fits`` (every public
    name when it is not given) with the closest to the one asked for."""
    match = _REF.match(ref)
    if match is None:
        raise DefinitionError(f"{ref!r} is not path.py:name")
    module = load_file(file_of(ref))
    target: Any = module
    for part in match["name"].split("."):
        if not hasattr(target, part):
            offered = names_in(module, fits)
            kind = "Names" if fits is None else f"What could be {what}"
            listed = f"{kind} there: {', '.join(offered)}" if offered else f"It defines nothing that could be {what}"
            raise DefinitionError(f"{match['path']} has no variable {part!r} ({what}).{did_you_mean(part, offered)} "
                                  f"{listed}")
        target = getattr(target, part)
    return target


def names_in(module: ModuleType, fits: Callable[[Any], bool] | None = None) -> list[str]:
    """The public names of ``module`` (those whose values ``fits``, when given), sorted."""
    return sorted(name for name, value in vars(module).items()
                  if not name.startswith("_") and (fits is None or fits(value)))
def call(ref: str, doing: str, function: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """``function(*args, **kwargs)``, code that ``ref`` (``path.py:name``, or a registered name)
    defines; what it raises becomes one :class:`DefinitionError` naming the file and line and
    what was ``doing`` (statebound's own errors pass as they are)."""
    try:
        return function(*args, **kwargs)
    except StateboundError:
        raise
    except Exception as exc:  # noqa: BLE001 - a user's code may raise anything
        if is_file_ref(ref):
            raise _failure(file_of(ref).resolve(), exc, doing) from None
        frames = traceback.extract_tb(exc.__traceback__)
        where = f"{frames[-1].filename}:{frames[-1].lineno}" if frames else ref
        cause = " ".join(str(exc).split())
        raise DefinitionError(f"{where}: {type(exc).__name__}{': ' + cause if cause else ''} ({ref}, {doing})") from None
