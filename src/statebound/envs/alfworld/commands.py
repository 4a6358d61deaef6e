"""Put syntax between what the prompts teach and what the engine accepts (pure functions).

ALFWorld 0.4's game grammar places an object with ``move X to Y`` and answers
``You move the X to the Y.``. The ReAct and StateAct prompts were written for the older engine,
whose form was ``put X in/on Y`` (answered ``You put the X in/on the Y.``). The environment speaks
that older form in both directions (``legacy`` rewrites, always on by default) so the published
prompts keep working unchanged. StateAct's correction (section 4.1.1) is a separate option: it also
accepts ``put X in Y`` and ``put X on Y``, the near misses models write, and each use is counted.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

__all__ = ["PutRewrite", "Rewrite", "legacy_command", "legacy_observation", "rewrite_action", "strip_arrival"]

PutRewrite = Literal["legacy", "correction"]

_PUT = re.compile(r"^put (?P<obj>.+?) (?P<prep>in/on|in|on) (?P<receptacle>\S.*)$")
_MOVE = re.compile(r"^move (?P<obj>.+?) to (?P<receptacle>\S.*)$")
_MOVED = re.compile(r"^You move the (?P<obj>.+?) to the (?P<receptacle>.+?)\.$")
_ARRIVAL = re.compile(r"^You arrive at [^.]+\. ")


@dataclass(frozen=True, slots=True)
class Rewrite:
    """The command sent to the engine and which rewrite (if any) produced it."""

    command: str
    kind: PutRewrite | None = None


def rewrite_action(action: str, *, legacy_put: bool = True, correct_put: bool = False) -> Rewrite:
    """Turn the agent's action into the engine's command.

    ``put X in/on Y`` becomes ``move X to Y`` when ``legacy_put``; ``put X in Y`` and
    ``put X on Y`` do too when ``correct_put`` (StateAct's correction). Anything else passes
    through stripped of surrounding whitespace.
    """
    command = " ".join(action.split())
    match = _PUT.match(command)
    if match is None:
        return Rewrite(command)
    engine_form = f"move {match['obj']} to {match['receptacle']}"
    if match["prep"] == "in/on":
        return Rewrite(engine_form, "legacy") if legacy_put else Rewrite(command)
    return Rewrite(engine_form, "correction") if correct_put else Rewrite(command)


def legacy_command(command: str) -> str:
    """Say the engine's command ``move X to Y`` the prompts' way, ``put X in/on Y`` (the inverse
    of the legacy rewrite); other commands are returned unchanged."""
    return _MOVE.sub(r"put \g<obj> in/on \g<receptacle>", command.strip())


def legacy_observation(observation: str) -> str:
    """Say the engine's ``You move the X to the Y.`` the older way: ``You put the X in/on the Y.``."""
    return _MOVED.sub(r"You put the \g<obj> in/on the \g<receptacle>.", observation.strip())


def strip_arrival(observation: str) -> str:
    """Drop a leading ``You arrive at X. ``: the prompts' observations start at ``On the X, ...``."""
    return _ARRIVAL.sub("", observation.strip())
