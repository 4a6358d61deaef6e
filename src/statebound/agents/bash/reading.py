"""What a Bash task's question supplies to the slots of the scoped machine's stage templates.

Read from the question's words alone (no model): the paths it names, the strings it quotes, the
numbers it gives and the file patterns it implies (``'*.php'`` for "php files" when the sandbox
holds ``.php`` files, or for ``".php"``). :func:`slot_values` is what the machine fills the
templates of :mod:`statebound.agents.bash.vocabulary` with.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from statebound.agents.question_text import BASH_QUOTES, quoted_strings

__all__ = [
    "SlotValues", "asks_for_change", "extensions", "named_or_listed", "named_paths", "numbers", "patterns", "quoted", "slot_values",
    "words_outside_paths",
]

# Questions that ask for a change to the files: their command may well print nothing.
_CHANGES = re.compile(r"\b(?:remove|delete|create|make|copy|copies|move|rename|compress|archive|uncompress|unpack|"
                      r"unzip|extract|change|chmod|append|write|save|split|touch|link|unhide|concatenate|"
                      r"backup|store)", re.IGNORECASE)
_PATH = re.compile(r"(?<![\w$:/])(~?/[\w./~-]*[\w/]|[\w.-]+/[\w./-]*\w)")  # not a URL's //host
_NUMBER = re.compile(r"(?<![\w.])(\d+)(?![\w.]*\d)")  # a unit may follow ("1KB"); not part of a name or version
_GLOB = re.compile(r"(?<![\w])(\*?\.?[\w*?-]*[*?][\w.*?-]*)")
_EXTENSION = re.compile(r"(?<![\w*])\.(\w{1,5})\b")
_WORD = re.compile(r"[A-Za-z]+")


@dataclass(frozen=True, slots=True)
class SlotValues:
    """The values each kind of slot may take for one question (and the sandbox's files)."""

    paths: tuple[str, ...]
    patterns: tuple[str, ...]
    texts: tuple[str, ...]
    numbers: tuple[str, ...]


def quoted(question: str) -> list[str]:
    """The strings the question quotes with ``"``, ``'`` or a backquote, in order."""
    return quoted_strings(question, BASH_QUOTES, as_word=True)


def asks_for_change(question: str) -> bool:
    """The question asks for a change to the files (its command may well print nothing)."""
    return _CHANGES.search(question) is not None


def named_paths(question: str) -> list[str]:
    """The paths the question names (``/testbed/dir1``, ``testbed/dir2``), in order, each once;
    a relative one also as an absolute path."""
    found: dict[str, None] = {}
    for path in _PATH.findall(question):
        path = path.rstrip("/.") or path
        found[path] = None
        if not path.startswith(("/", "~", ".")):
            found["/" + path] = None
    return list(found)


def words_outside_paths(question: str) -> set[str]:
    """The question's words that are not part of a path it writes ("testbed" in "the testbed
    directory", not in "testbed/dir1")."""
    return set(re.findall(r"[\w.-]+", _PATH.sub(" ", question)))


def numbers(question: str) -> list[str]:
    """The whole numbers the question gives, in order, each once: "5" of "the 5 largest", "1"
    of "greater than 1KB"; not those in names or versions ("file1", "2.5", "v1.2")."""
    return list(dict.fromkeys(_NUMBER.findall(question)))


def extensions(paths: Iterable[str]) -> set[str]:
    """The file-name extensions among ``paths`` (``php`` for ``/testbed/hello.php``)."""
    return {name.rsplit(".", 1)[1] for path in paths if "." in (name := path.rsplit("/", 1)[-1])[1:]}


def patterns(question: str, known_extensions: Iterable[str] = ()) -> list[str]:
    """File patterns the question implies: its globs (``*.php``, ``foo??``), ``*.ext`` for each
    ``.ext`` it writes, and for each word that is one of ``known_extensions`` (``php files``)."""
    found: dict[str, None] = {}
    for text in [*quoted(question), *question.split()]:
        glob = _GLOB.fullmatch(text.strip(".,;:()\"'`"))
        if glob and any(c.isalnum() for c in glob[1]):
            found[glob[1]] = None
    for extension in _EXTENSION.findall(question):
        found[f"*.{extension}"] = None
    known = {e.lower(): e for e in known_extensions}
    for word in _WORD.findall(_PATH.sub(" ", question)):  # not the words of a path (long.txt)
        if word.lower() in known and len(word) > 1:
            found[f"*.{known[word.lower()]}"] = None
    return list(found)


def slot_values(question: str, listed: Iterable[str] = ()) -> SlotValues:
    """The slot values for ``question``; ``listed``: the paths the sandbox holds."""
    listed = list(listed)
    paths = list(dict.fromkeys([*named_paths(question), *listed]))
    texts = [text for text in quoted(question) if not _GLOB.fullmatch(text) and not text.startswith(("/", "."))]
    return SlotValues(tuple(paths), tuple(patterns(question, extensions(listed))), tuple(dict.fromkeys(texts)),
                      tuple(numbers(question)))


def named_or_listed(question: str, listed: Sequence[str]) -> list[str]:
    """The paths ``question`` names: as it writes them (absolute), or listed in the sandbox
    (``testbed/dir1`` as ``/testbed/dir1``, "the testbed directory" as ``/testbed``)."""
    words = words_outside_paths(question)
    paths = named_paths(question)
    named = [p for p in paths if p.startswith(("/", "~")) and p in question]
    return list(dict.fromkeys([*named, *(p for p in listed if p in paths or p.rsplit("/", 1)[-1] in words)]))
