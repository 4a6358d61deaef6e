"""A user's Python file as a source of flows, benchmarks and agents: ``path.py:name``.

The file runs once per process as a module of its own (registered in ``sys.modules``, so
dataclasses and pydantic models defined there work), with its folder first on ``sys.path`` while
it loads (so it may import its neighbours); what it raises becomes one
:class:`~statebound.errors.DefinitionError` naming the file and line.
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
from typing import Any

from statebound.errors import DefinitionError, StateboundError, did_you_mean

__all__ = ["USER_MODULE_PREFIX", "is_file_ref", "load_file", "load_ref", "names_in"]

USER_MODULE_PREFIX = "_statebound_user_"  # the module name a user's file loads under starts so
_REF = re.compile(r"^(?P<path>.+\.py):(?P<name>[A-Za-z_][\w.]*)$")


def is_file_ref(ref: str) -> bool:
    """``ref`` has the form ``path.py:name``."""
    return _REF.match(ref) is not None


@cache
def _load(resolved: str) -> ModuleType:
    path = Path(resolved)
    name = f"{USER_MODULE_PREFIX}{path.stem}_{hashlib.sha1(resolved.encode()).hexdigest()[:8]}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise DefinitionError(f"cannot import {path}; is it a Python file?")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    sys.path.insert(0, str(path.parent))
    try:
        spec.loader.exec_module(module)
    except SyntaxError as exc:
        del sys.modules[name]
        raise DefinitionError(f"{path}:{exc.lineno}: {exc.msg} (a Python syntax error)") from None
    except StateboundError:
        del sys.modules[name]
        raise
    except Exception as exc:
        del sys.modules[name]
        frames = [f for f in traceback.extract_tb(exc.__traceback__) if Path(f.filename) == path]
        where = f"{path}:{frames[-1].lineno}" if frames else str(path)
        raise DefinitionError(f"{where}: {type(exc).__name__}: {exc} (while loading the file)") from None
    finally:
        sys.path.remove(str(path.parent))
    return module


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
    module = load_file(Path(match["path"]))
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
