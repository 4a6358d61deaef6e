"""The command vocabulary of the scoped Bash machine: stage templates drawn from gold commands.

A gold command such as ``find /testbed -name '*.php' -type f | xargs cat | wc -l`` is cut at its
top-level pipes into stages, and each stage becomes a template by putting slots where the task's
own details were (:func:`stage_template`):

- ``@PATH@``: the stage's one file or directory operand (``/testbed``, ``testbed/dir1``, ``.``);
- ``@PATTERN@``: a glob operand (``'*.php'``, ``'foo??'``); ``@PATH@/@PATTERN@`` a glob in a
  directory, left for the shell to expand (``/testbed/*.java``);
- ``@TEXT@``: an operand the question quotes or names (``grep -l FAIL`` for "... match 'FAIL'");
- ``@N@``: a number the question gives (``head -5`` for "the 5 largest files", ``-mtime +7``).

Everything else stays as written: programs, flags, ``awk``/``sed`` scripts, ``-exec`` commands.
The first stage of a command is a *head* (it reads the file system or prints), the others are
*pipe* stages (they read the stage before). A stage with several paths, a redirection, a command
substitution or a process substitution is left out, as are commands joined by ``;``, ``&&`` or
``&``: their details cannot be slotted. :func:`vocabulary` collects the templates of many tasks;
:func:`bundled_vocabulary` those of the bundled InterCode-Bash tasks, leaving out the task at
hand, so that no task is offered its own gold command's stages.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache

from statebound.agents.bash.reading import numbers as question_numbers
from statebound.envs.bash.testbed import BashTask, load_tasks

__all__ = [
    "NUMBER",
    "PATH",
    "PATTERN",
    "GLOB_IN_PATH",
    "SLOTS",
    "TEXT",
    "Vocabulary",
    "bundled_vocabulary",
    "find_clauses",
    "split_pipeline",
    "stage_template",
    "vocabulary",
]

PATH, PATTERN, TEXT, NUMBER = "@PATH@", "@PATTERN@", "@TEXT@", "@N@"
SLOTS = (PATH, PATTERN, TEXT, NUMBER)
GLOB_IN_PATH = f"{PATH}/{PATTERN}"  # an unquoted glob in a directory (/testbed/*.java), expanded by the shell
_EXEC = frozenset({"-exec", "-execdir", "-ok"})
_EXEC_END = frozenset({"\\;", ";", "+", "\\+"})
_NUMBER = re.compile(r"^([+-]?)(\d+)([a-zA-Z]*)$")
_FLAG_NUMBER = re.compile(r"^(-[a-zA-Z]?)(\d+)$")  # head -5, head -n1
_PATH_CHARS = re.compile(r"^[\w./~-]+$")
_GLOB_PATH = re.compile(r"^(.+)/[\w.-]*[*?][\w.*?-]*$")  # /testbed/*.java
_UNSLOTTABLE = ("$(", "`", "<(", ">(")
# find's primaries and operators that take no argument
_FIND_BARE = frozenset({"-print", "-print0", "-delete", "-empty", "-ls", "-prune", "-depth", "-daystart", "-nouser",
                        "-nogroup", "-not", "-o", "-or", "-a", "-and", "-quit", "-xdev", "-mount", "-follow",
                        "-readable", "-writable", "-executable", "-true", "-false"})


@dataclass(frozen=True, slots=True)
class Vocabulary:
    """Stage templates, each once, in the order first seen: ``heads`` start a command, ``pipes``
    follow a ``|``."""

    heads: tuple[str, ...]
    pipes: tuple[str, ...]

    @property
    def programs(self) -> tuple[str, ...]:
        """The programs the heads start with, in order of first use."""
        return tuple(dict.fromkeys(program_of(head) for head in self.heads))

    @property
    def clauses(self) -> tuple[str, ...]:
        """The clauses of the ``find @PATH@ ...`` heads (:func:`find_clauses`), each once."""
        return _clauses(self.heads)


def program_of(template: str) -> str:
    """The first word of a stage template."""
    return template.split(maxsplit=1)[0]


def find_clauses(template: str) -> list[str] | None:
    """The clauses of a ``find @PATH@ ...`` head template, each a primary with its argument
    (``-name @PATTERN@``, ``-size +@N@k``), an ``-exec`` up to its end, or an operator (``-o``,
    ``\\(``); None for any other template."""
    words = _words(template)
    if not words or words[:2] != ["find", PATH]:
        return None
    clauses, i = [], 2
    while i < len(words):
        end = i + 1
        if words[i] in _EXEC:
            while end < len(words) and words[end - 1] not in _EXEC_END:
                end += 1
        elif words[i].startswith("-") and words[i] not in _FIND_BARE and end < len(words):
            end += 1  # the primary's argument: -name @PATTERN@, -mtime -@N@
        clauses.append(" ".join(words[i:end]))
        i = end
    return clauses


@cache
def _clauses(heads: tuple[str, ...]) -> tuple[str, ...]:
    """Worked out once per vocabulary: every composed find's clause pick asks for them."""
    return tuple(dict.fromkeys(c for head in heads for c in find_clauses(head) or ()))


def split_pipeline(command: str) -> list[str] | None:
    """The stages of ``command`` at its top-level pipes, or None when it cannot be slotted:
    commands joined by ``;``, ``&&``, ``||`` or ``&`` and redirections (outside quotes)."""
    stages, current, quote, depth, i = [], [], "", 0, 0
    while i < len(command):
        char = command[i]
        if quote:
            if char == "\\" and quote == '"':
                current.append(command[i:i + 2])
                i += 2
                continue
            quote = "" if char == quote else quote
        elif char == "\\":
            current.append(command[i:i + 2])
            i += 2
            continue
        elif char in "'\"":
            quote = char
        elif char in "({":
            depth += 1
        elif char in ")}":
            depth -= 1
        elif depth == 0 and char == "|" and command[i + 1:i + 2] != "|":
            stages.append("".join(current).strip())
            current = []
            i += 1
            continue
        elif depth == 0 and (char in ";&>" or command[i:i + 2] == "||"):
            return None
        current.append(char)
        i += 1
    stages.append("".join(current).strip())
    return stages if all(stages) else None


def _words(stage: str) -> list[str] | None:
    lexer = shlex.shlex(stage, posix=False)
    lexer.whitespace_split = True
    lexer.commenters = ""
    try:
        return list(lexer)
    except ValueError:  # an unclosed quote
        return None


def _unquoted(word: str) -> str:
    if len(word) >= 2 and word[0] == word[-1] and word[0] in "'\"":
        return word[1:-1]
    return word


def _is_path(word: str) -> bool:
    text = _unquoted(word)
    if text in (".", "~") or text.startswith(("/", "~/", "./")):
        return bool(_PATH_CHARS.match(text))
    return "/" in text and word == text and bool(_PATH_CHARS.match(text)) and not text.startswith("-")


def _in_question(text: str, question: str) -> bool:
    return len(text) >= 2 and text.lower() in question.lower()


def _slotted(word: str, question: str, numbers: set[str]) -> str | None:
    """``word`` with its task detail replaced by a slot, or None for a path (the caller decides)."""
    if _is_path(word):
        return None
    if word == _unquoted(word) and (glob := _GLOB_PATH.match(word)) and _is_path(glob[1]):
        return GLOB_IN_PATH
    if (flag := _FLAG_NUMBER.match(word)) and flag[2] in numbers:
        return flag[1] + NUMBER
    if (number := _NUMBER.match(word)) and number[2] in numbers:
        return number[1] + NUMBER + number[3]
    text = _unquoted(word)
    if "*" in text or "?" in text:
        return PATTERN if not text.startswith(("{", "'{")) and " " not in text else word
    if not word.startswith("-") and _in_question(text, question) and not _NUMBER.match(text):
        return TEXT
    return word


def stage_template(stage: str, question: str, *, head: bool) -> str | None:
    """The template of one pipeline stage (module docstring), or None when it cannot be slotted.
    A head may have one path operand (``@PATH@``); a pipe stage none."""
    if any(mark in stage for mark in _UNSLOTTABLE):
        return None
    words = _words(stage)
    if not words or "=" in words[0] or _is_path(words[0]):
        return None
    numbers = set(question_numbers(question))
    out, paths, in_exec = [words[0]], 0, False
    for word in words[1:]:
        if in_exec:
            out.append(word)
            in_exec = word not in _EXEC_END
            continue
        if word in _EXEC:
            out.append(word)
            in_exec = True
            continue
        slotted = _slotted(word, question, numbers)
        if slotted is None or slotted == GLOB_IN_PATH:
            paths += 1
        out.append(slotted or PATH)
    if paths > (1 if head else 0):
        return None
    return " ".join(out)


def vocabulary(tasks: Iterable[tuple[str, str]]) -> Vocabulary:
    """The stage templates of ``(question, gold command)`` pairs."""
    heads: dict[str, None] = {}
    pipes: dict[str, None] = {}
    for question, gold in tasks:
        stages = split_pipeline(gold)
        if not stages:
            continue
        head = stage_template(stages[0], question, head=True)
        if head is not None:
            heads[head] = None
        for stage in stages[1:]:
            if (pipe := stage_template(stage, question, head=False)) is not None:
                pipes[pipe] = None
    return Vocabulary(tuple(heads), tuple(pipes))


def bundled_vocabulary(*, leave_out: str | None = None) -> Vocabulary:
    """The vocabulary of the bundled InterCode-Bash tasks' gold commands, without the task
    ``leave_out`` (an ID such as ``"1-20"``): a task is never offered its own gold stages."""
    return _bundled(leave_out)


@cache
def _bundled(leave_out: str | None) -> Vocabulary:
    tasks: tuple[BashTask, ...] = load_tasks()
    return vocabulary((task.query, task.gold) for task in tasks if task.id != leave_out)
