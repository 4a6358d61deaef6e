"""Pauses raised inside sub-machines and parallel branches: each has an id, the path of the
branch that asks (``Review.1/b2``: the state and its visit, then the branch; deeper ones add
their own), and they are listed together as the run's one pending question.

``result.pending`` of a run paused in branches is that listing; :func:`questions` reads it back as
``{id: question}``. A person answers with ``flow.resume(thread, input={id: answer, ...})`` (some
of them, or all at once; the run goes on when the last is answered) or with plain text when only
one waits.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any

from statebound.errors import DefinitionError
from statebound.flow.result import RunResult

__all__ = ["Answers", "answers_for", "listing", "misfit", "questions", "read_listing"]

Answers = str | Mapping[str, str] | None  # what resumes a pause: text, or answers by id
HEADER = ("questions wait, each with its id (answer by id: input={id: answer}, statebound run --answer ID=TEXT; "
          "or with text when one waits):")


def listing(pauses: Mapping[str, str]) -> str:
    """The pending text of a run paused in its branches: one ``[id] question`` line per pause (a
    question's own line breaks are indented under it)."""
    lines = [HEADER]
    for pause, question in pauses.items():
        lines.append(f"[{pause}] " + question.replace("\n", "\n    "))
    return "\n".join(lines)


def read_listing(pending: str) -> dict[str, str] | None:
    """The pauses a :func:`listing` names, or None when ``pending`` is one plain question."""
    head, _, rest = pending.partition("\n")
    if head != HEADER:
        return None
    found: dict[str, str] = {}
    current = None
    for line in rest.split("\n"):
        if line.startswith("[") and "] " in line:
            current, _, question = line[1:].partition("] ")
            found[current] = question
        elif current is not None:
            found[current] += "\n" + line.removeprefix("    ")
    return found


def questions(result: RunResult[Any]) -> dict[str, str]:
    """The questions a paused run waits on, by id (``{}`` when it waits on none; a flow's own
    ``AskHuman`` has the id ``""``: answer it with text)."""
    pending = result.pending
    if pending is None:
        return {}
    return read_listing(pending) or {"": pending}


def misfit(pending: str, answers: Answers) -> str | None:
    """Why ``answers`` cannot answer a run that waits on ``pending`` (None: they can), so a
    resume is refused before anything runs."""
    waiting = read_listing(pending)
    if waiting is None:
        return None if not isinstance(answers, Mapping) else "it waits on one question: answer it with text"
    if isinstance(answers, str):
        return None if len(waiting) == 1 else (f"{len(waiting)} questions wait ({', '.join(waiting)}); answer each "
                                               "by its id: input={id: answer}")
    unknown = [pause for pause in answers or {} if pause not in waiting]
    if unknown:
        return f"no question waits with the id {unknown[0]!r}; those waiting: {', '.join(waiting)}"
    return None


def answers_for(answers: Answers, keys: Collection[str], waiting: Collection[str]) -> dict[str, Answers]:
    """Route a resumed run's answers to the branches that wait (``keys``: every branch's id,
    ``waiting``: those paused): an id names a branch (its answer is text) or a pause inside it
    (its answers go on, by the rest of the id). Text answers the one branch that waits. An answer
    for a branch that no longer waits is dropped: a run that died after handing it over left it
    stored in that branch, which goes on from there."""
    if answers is None:
        return {}
    if isinstance(answers, str):
        if len(waiting) > 1:
            raise DefinitionError(f"{len(waiting)} questions wait ({', '.join(sorted(waiting))}); answer each by its "
                                  "id: input={id: answer}")
        return {key: answers for key in waiting}
    routed: dict[str, Answers] = {}
    for pause, answer in answers.items():
        key = next((k for k in keys if pause == k or pause.startswith(k + "/")), None)
        if key is None:
            raise DefinitionError(f"no question waits with the id {pause!r}; those waiting: "
                                  f"{', '.join(sorted(waiting)) or 'none'}")
        if key not in waiting:
            continue
        inner = routed.get(key)
        if pause == key or isinstance(inner, str):
            if inner is not None:
                raise DefinitionError(f"{key!r} waits on one question: answer it as {{{key!r}: text}}")
            routed[key] = answer
        else:
            routed[key] = {**(inner or {}), pause[len(key) + 1:]: answer}
    return routed
