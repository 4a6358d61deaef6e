"""Tables as data: columns that say what they mean, and rows of rendered cells.

Every output draws the same :class:`Section` objects: ``report.md``, ``report.html``, the terminal
(fitted to its width by :mod:`statebound.report.terminal`) and the glossary of the columns shown.

```python
section = Section("Results", (Column("agent", key=True), Column("SR %", "share of episodes solved")),
                  (("react", "40.00"), ("stateflow", "60.00")))
print(to_markdown([section]))
```
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

__all__ = ["Column", "Section", "glossary", "lift_constant_keys", "to_markdown"]


@dataclass(frozen=True, slots=True)
class Column:
    """One column: its ``header``, the ``note`` the glossary gives for it, ``key`` when it names the
    group a row is about (agent, model, a breakdown's value: left-aligned and kept in every part
    of a table split to fit), ``essential`` when it stays in the first part of such a split.
    A key column holding one value in every row moves to the table's title in the terminal,
    unless it is ``pinned`` (the two sides of a comparison)."""

    header: str
    note: str = ""
    key: bool = False
    essential: bool = False
    pinned: bool = False


@dataclass(frozen=True, slots=True)
class Section:
    """A titled table; ``footer`` is a last row apart from the others (a total)."""

    title: str
    columns: tuple[Column, ...]
    rows: tuple[tuple[str, ...], ...]
    footer: tuple[str, ...] | None = None

    @property
    def header(self) -> list[str]:
        return [column.header for column in self.columns]

    def select(self, indices: Sequence[int], *, title: str | None = None) -> Section:
        """The section with only the columns at ``indices`` (in that order)."""
        return replace(
            self,
            title=self.title if title is None else title,
            columns=tuple(self.columns[i] for i in indices),
            rows=tuple(tuple(row[i] for i in indices) for row in self.rows),
            footer=None if self.footer is None else tuple(self.footer[i] for i in indices),
        )


def lift_constant_keys(section: Section) -> tuple[Section, list[str]]:
    """The section without the key columns that hold one value in every row, and those values as
    ``"model: smollm2"``; one key column stays when every key is constant (rows need a name)."""
    keys = [i for i, column in enumerate(section.columns) if column.key]
    constant = [i for i in keys if not section.columns[i].pinned and len({row[i] for row in section.rows}) == 1]
    if constant and len(constant) == len(keys):
        constant = constant[1:]
    if not constant:
        return section, []
    lifted = [f"{section.columns[i].header}: {section.rows[0][i]}" for i in constant if section.rows[0][i]]
    kept = [i for i in range(len(section.columns)) if i not in constant]
    return section.select(kept), lifted


def glossary(sections: Iterable[Section]) -> list[tuple[str, str]]:
    """(header, note) of every column with a note, once each, in order of appearance."""
    notes: dict[str, str] = {}
    for section in sections:
        for column in section.columns:
            if column.note:
                notes.setdefault(column.header, column.note)
    return list(notes.items())


def _markdown_row(cells: Iterable[str]) -> str:
    return "| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |"


def to_markdown(sections: Iterable[Section], *, with_glossary: bool = True) -> str:
    """The sections as Markdown tables, then (``with_glossary``) what each column means."""
    sections = list(sections)
    out = []
    for section in sections:
        out += [f"## {section.title}\n", _markdown_row(section.header), "|" + "---|" * len(section.columns)]
        out += [_markdown_row(row) for row in (*section.rows, *([section.footer] if section.footer else []))]
        out.append("")
    notes = glossary(sections)
    if with_glossary and notes:
        out += ["## Columns\n", *(f"- **{header}**: {note}" for header, note in notes), ""]
    return "\n".join(out)
