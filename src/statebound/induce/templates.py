"""Action templates with typed slots: what the actions of one role have in common.

An action is read word by word. A word is typed by where it comes from: a number is an instance
(``{n}``), a word of the task's own slots is that slot (``{object}``: ALFWorld's goal object),
and any other word is kept as written (a learnt constant, such as the ``microwave`` of heating)
when every action of the role has it, else generalised: to ``{seen}`` when it was always a word
the environment had shown (in the task text or an observation before the action), else to
``{any}``. ``take {object} {n} from {seen} {n}`` matches ``take apple 2 from
countertop 1`` in a task about an apple, after an observation naming the countertop.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

from statebound.errors import DefinitionError

__all__ = ["ANY", "NUMBER", "SEEN", "Occurrence", "Template", "generalise", "read_words", "skeleton_of", "typed_words"]

NUMBER = "{n}"
ANY = "{any}"
SEEN = "{seen}"
_FREE = (NUMBER, ANY, SEEN)
_SLOT = re.compile(r"^\{([a-z][a-z0-9_]*)\}$")
_WORD = re.compile(r"[\w/'.,:-]+")


def read_words(text: str) -> set[str]:
    """The words of an observation (or task text), for ``{seen}`` slots."""
    return set(_WORD.findall(text.lower()))


def typed_words(action: str, slots: Mapping[str, str]) -> tuple[str, ...]:
    """``action``'s words with numbers as ``{n}`` and the task's slot values as ``{slot}``."""
    by_value = {value: f"{{{name}}}" for name, value in slots.items() if value}
    return tuple(NUMBER if word.isdigit() else by_value.get(word, word) for word in action.split())


def skeleton_of(action: str) -> tuple[str, int]:
    """An action's first word and length (``("go", 4)`` for ``go to drawer 1``): its kind."""
    words = action.split()
    return (words[0] if words else "", len(words))


@dataclass(frozen=True, slots=True)
class Template:
    """A role's action shape: literal words, ``{slot}`` (the task's), ``{n}``, ``{seen}``, ``{any}``;
    ``prefer``: the words that filled its ``{seen}``/``{any}`` slots in the traces (the places an
    object was found), offered before the others."""

    text: str
    prefer: frozenset[str] = frozenset()

    def __post_init__(self) -> None:
        if not self.text.strip():
            raise DefinitionError("a template needs at least one word, e.g. 'go to {any} {n}'")

    @property
    def words(self) -> tuple[str, ...]:
        return tuple(self.text.split())

    @property
    def slots(self) -> tuple[str, ...]:
        """The task slots it names (``object`` for ``{object}``)."""
        return tuple(m[1] for w in self.words if w not in _FREE and (m := _SLOT.match(w)))

    @property
    def specificity(self) -> int:
        """How many of its words must be a given word (literals and task slots)."""
        return sum(1 for w in self.words if w not in _FREE)

    @property
    def skeleton(self) -> tuple[str, int]:
        """Its first word and length: actions of one kind (what a milestone counts)."""
        return skeleton_of(self.text)

    def fillers(self, action: str) -> tuple[str, ...]:
        """The words of ``action`` in this template's ``{seen}``/``{any}`` slots (it must match)."""
        return tuple(word for pattern, word in zip(self.words, action.split()) if pattern in (SEEN, ANY))

    def preferred(self, action: str) -> bool:
        """Whether ``action``'s slot fillers are all words the traces filled them with."""
        return not self.prefer or all(word in self.prefer for word in self.fillers(action))

    def matches(self, action: str, slots: Mapping[str, str], seen: set[str] | None = None) -> bool:
        """Whether ``action`` fits (``seen``: the words a ``{seen}`` slot may take; None: any)."""
        words = action.split()
        if len(words) != len(self.words):
            return False
        for pattern, word in zip(self.words, words):
            if pattern == NUMBER:
                if not word.isdigit():
                    return False
            elif pattern == SEEN:
                if seen is not None and word.lower() not in seen:
                    return False
            elif pattern != ANY and (slots.get(pattern[1:-1]) if _SLOT.match(pattern) else pattern) != word:
                return False
        return True


@dataclass(frozen=True, slots=True)
class Occurrence:
    """One action of a role: its words as sent, typed (:func:`typed_words`), the words the
    environment had shown before it (the task text and every observation since) and the words of
    the observation that answered it."""

    words: tuple[str, ...]
    typed: tuple[str, ...]
    shown: frozenset[str]
    answer: frozenset[str] = frozenset()


def generalise(occurrences: Sequence[Occurrence], *, agree: float = 0.95, min_constant: int = 3,
               fixed: Collection[int] = (0,)) -> Template:
    """The template of one role's actions: a position keeps the typed word at least ``agree`` of
    them share (a literal word only if at least ``min_constant`` actions have it, or at a ``fixed``
    position: one where every action of this kind has the same word, such as its verb), else
    becomes ``{seen}`` when the word was always one already shown, else ``{any}``."""
    if not occurrences:
        raise DefinitionError("a role needs at least one action to make its template from")
    words = []
    for position in range(len(occurrences[0].typed)):
        word, count = Counter(o.typed[position] for o in occurrences).most_common(1)[0]
        literal = not word.startswith("{")
        if count >= agree * len(occurrences) and (not literal or count >= min_constant or position in fixed):
            words.append(word)
        elif all(o.words[position].lower() in o.shown for o in occurrences):
            words.append(SEEN)
        else:
            words.append(ANY)
    return Template(" ".join(words))
