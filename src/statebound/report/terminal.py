"""Tables in the terminal that fit its width, without cutting a number or a name (text from a store
is printed inert: never read as markup, control characters escaped, a cell past 300 characters cut).

A key column holding one value in every row (one model, one benchmark) leaves the table for its
title (:func:`~statebound.report.grid.lift_constant_keys`). Headers wrap between words. When the columns still do not fit, the table is split: each part
repeats the key columns, the first takes the essential columns and whatever else fits, the next
ones the rest (``wide=True`` draws every column in one table, as wide as it needs, for a pager).
"""

from __future__ import annotations

import textwrap
from collections.abc import Iterable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from statebound.report.grid import Section, glossary, lift_constant_keys
from statebound.report.inert import CELL_LIMIT, inert

if TYPE_CHECKING:
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

__all__ = ["fit", "inert_section", "natural_width", "print_glossary", "print_sections", "rich_table"]

def _cell_width(section: Section, index: int) -> int:
    from rich.cells import cell_len

    cells = [row[index] for row in section.rows] + ([section.footer[index]] if section.footer else [])
    return max((cell_len(cell) for cell in cells), default=0)


def _header(section: Section, index: int) -> str:
    """The header wrapped between words to its column's width (at least its longest word)."""
    header = section.columns[index].header
    longest_word = max((len(word) for word in header.split()), default=0)
    width = max(_cell_width(section, index), longest_word, 1)
    return "\n".join(textwrap.wrap(header, width=width, break_long_words=False)) or header


def rich_table(section: Section) -> Table:
    """``section`` as a rich table without its title: cells never wrap, headers wrap between words."""
    from rich import box
    from rich.table import Table
    from rich.text import Text

    table = Table(box=box.SIMPLE_HEAD, show_edge=False, collapse_padding=True, padding=(0, 1))
    for index, column in enumerate(section.columns):
        table.add_column(Text(_header(section, index)), justify="left" if column.key else "right",
                         no_wrap=True, overflow="fold")
    for row in section.rows:
        table.add_row(*map(Text, row))  # never read as markup
    if section.footer is not None:
        table.add_section()
        table.add_row(*map(Text, section.footer), style="bold")
    return table


def inert_section(section: Section) -> Section:
    """``section`` with its title and cells as :func:`~statebound.report.inert.inert` makes text
    from a store: on one line, control characters escaped, a cell past ``CELL_LIMIT`` cut."""
    def cells(row: Sequence[str]) -> tuple[str, ...]:
        return tuple(inert(cell, limit=CELL_LIMIT, one_line=True) for cell in row)

    return replace(section, title=inert(section.title, limit=CELL_LIMIT, one_line=True),
                   rows=tuple(map(cells, section.rows)), footer=None if section.footer is None else cells(section.footer))


def natural_width(section: Section) -> int:
    """The width ``section`` takes when no cell wraps (headers wrapped between words)."""
    from rich.console import Console
    from rich.measure import Measurement

    console = Console(width=1_000_000)
    return Measurement.get(console, console.options, rich_table(section)).maximum


def fit(section: Section, *, width: int) -> list[Section]:
    """``section`` in parts no wider than ``width`` where possible: every part has the key
    columns; the first the essential columns, then each part as many of the rest as fit."""
    keys = [i for i, column in enumerate(section.columns) if column.key]
    others = [i for i in range(len(section.columns)) if i not in keys]
    waiting = [i for i in others if section.columns[i].essential] + [i for i in others if not section.columns[i].essential]
    parts: list[list[int]] = []
    while waiting:
        chosen: list[int] = []
        for index in waiting:
            trial = sorted([*keys, *chosen, index])
            if not chosen or natural_width(section.select(trial)) <= width:
                chosen.append(index)
        parts.append(sorted([*keys, *chosen]))
        waiting = [i for i in waiting if i not in chosen]
    if len(parts) <= 1:
        return [section]
    return [section.select(part, title=section.title if n == 0 else f"{section.title} (continued)")
            for n, part in enumerate(parts)]


def _title(text: str, lifted: Sequence[str]) -> Text:
    from rich.text import Text

    return Text(f"{text} ({'; '.join(lifted)})" if lifted else text, style="bold")


def print_sections(sections: Iterable[Section], *, console: Console | None = None, wide: bool = False) -> None:
    """Print ``sections`` fitted to the console's width (``wide``: each in one table, unfitted).
    Each title is a line of its own, wrapped at the console's width, not the table's."""
    from rich.console import Console

    console = console or Console()
    for section in sections:
        shown, lifted = lift_constant_keys(inert_section(section))
        console.print(_title(shown.title, lifted))
        if wide:
            console.print(rich_table(shown), width=max(console.width, natural_width(shown)), crop=False)
            continue
        for number, part in enumerate(fit(shown, width=console.width)):
            if number:
                console.print(_title(part.title, ()))
            console.print(rich_table(part))
        console.print()


def print_glossary(sections: Iterable[Section], *, console: Console | None = None) -> None:
    """What each column of ``sections`` means, one column a paragraph (``--explain``)."""
    from rich.console import Console
    from rich.text import Text

    console = console or Console()
    notes = glossary(sections)
    if notes:
        console.print(Text("Columns", style="bold"))
    for header, note in notes:
        console.print(Text.assemble((header, "bold"), f": {note}"))
