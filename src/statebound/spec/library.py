"""Load the bundled specs by name (``load_bundled("react")``)."""

from __future__ import annotations

from functools import cache
from importlib import resources

from statebound.errors import DefinitionError
from statebound.spec.model import Spec
from statebound.spec.parser import parse

__all__ = ["BUNDLED", "bundled_text", "load_bundled"]

BUNDLED: tuple[str, ...] = ("react", "rewoo", "reflexion", "cot", "direct", "pass",
                            "react-paper", "rewoo-paper", "reflexion-paper", "pass-paper")
"""``react`` etc. carry the authors' loop bounds (IBM's ``until_5``; Reflexion ``until_2``/``until_3``);
``react-paper`` etc. the paper's figures, with unbounded ``until``."""


def bundled_text(name: str) -> str:
    """The source text of a bundled spec."""
    key = name.lower().removesuffix("-agent")
    if key not in BUNDLED:
        raise DefinitionError(f"no bundled spec {name!r}: choose one of {', '.join(BUNDLED)}")
    return resources.files("statebound.spec.bundled").joinpath(f"{key}.spec").read_text("utf-8")


def load_bundled(name: str) -> Spec:
    """Parse a bundled spec by name (see :data:`BUNDLED`; parsed once, shared)."""
    return _load(name.lower().removesuffix("-agent"))


@cache
def _load(key: str) -> Spec:
    return parse(bundled_text(key), source_name=f"bundled:{key}.spec")
