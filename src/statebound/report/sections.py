"""A report as the tables every format shows (:class:`~statebound.report.grid.Section`), each column
with the note the glossary gives for it.

The tables, in order: the results (the papers' Table 1 columns and the benchmark's own), one per
breakdown key, how the episodes ended (when some did not end by the agent's choice), the paired
comparisons, and the repeated replies.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from statebound.contract.columns import CHOICES, MetaColumn
from statebound.exits import ExitReason
from statebound.report.grid import Column, Section, glossary
from statebound.report.metrics import COLUMNS, EXIT_NOTES, StandardColumn, Summary
from statebound.report.repetition import STUCK_RUN

if TYPE_CHECKING:
    from statebound.report.tables import Comparison, Report

__all__ = ["KEY_NOTES", "comparison_section", "sections", "standard_glossary"]

KEY_NOTES = {
    "run": "the run directory the episodes come from",
    "agent": "the agent (statebound eval BENCH --list-agents says what each does)",
    "model": "the model the agent called",
    "n": "episodes in the group (crashed ones included)",
}
_CI = Column("SR 95% CI", "Wilson 95% confidence interval of SR %")
_CRASHED = Column("crashed", "episodes that crashed (an exception escaped the agent); they count as failures",
                  essential=True)


def _keys(keys: Sequence[str]) -> tuple[Column, ...]:
    return tuple(Column(key, KEY_NOTES.get(key, f"the episodes' {key} (a breakdown key)"), key=True) for key in keys)


def _standard(column: StandardColumn, rows: Sequence[Summary]) -> Column:
    """``column`` with, when some row's value is unknown, what that means in its note."""
    unknown = column.unknown_note and any(getattr(row, column.field) is None for row in rows)
    return Column(column.header, f"{column.note}; {column.unknown_note}" if unknown else column.note,
                  essential=column.essential)


NOT_CALLED = " (not called)"  # after the model of a group that made no model call (a model-free control)


def _key_cell(row: Summary, key: str) -> str:
    """A row's ``key`` value; a model that none of the group's episodes called says so."""
    value = str(row.group[key])
    return value + NOT_CALLED if key == "model" and not row.model_used else value


def _results(title: str, rows: Sequence[Summary], keys: Sequence[str], columns: Sequence[MetaColumn]) -> Section:
    header = (
        *_keys(keys), Column("n", KEY_NOTES["n"], essential=True),
        *(_standard(c, rows) for c in COLUMNS),
        *(Column(c.header, c.note, essential=c.essential) for c in columns),
        _CI, _CRASHED,
    )
    body = tuple(
        (
            *(_key_cell(row, k) for k in keys),
            str(row.episodes),
            *(c.render(getattr(row, c.field)) for c in COLUMNS),
            *(c.render(row.extra.get(c.key)) for c in columns),
            f"{row.sr_low:.1f}-{row.sr_high:.1f}",
            str(row.crashed),
        )
        for row in rows
    )
    return Section(title, header, body)


def _exits(rows: Sequence[Summary], keys: Sequence[str]) -> Section | None:
    """% of each group's episodes per way of ending; ``None`` when every episode ended as the agent chose."""
    seen = {reason for row in rows for reason in row.exits}
    if seen <= {ExitReason.FINAL.value}:
        return None
    reasons = [reason for reason in ExitReason if reason.value in seen and reason is not ExitReason.BUDGET]
    header = (*_keys(keys), *(Column(f"{r.value.replace('_', ' ')} %", EXIT_NOTES[r], essential=True) for r in reasons))
    body = tuple(
        (*(_key_cell(row, k) for k in keys),
         *(f"{100 * row.exits.get(r.value, 0) / row.episodes:.1f}" if row.episodes else "" for r in reasons))
        for row in rows
    )
    return Section("How episodes ended (% of episodes)", header, body)


def _sides(a: Mapping[str, Any], b: Mapping[str, Any]) -> tuple[str, str, str]:
    """(A, B, shared): each side names what differs; shared names what both have."""
    differ = [key for key in a if a[key] != b.get(key)]
    shared = "; ".join(f"{key} {a[key]}" for key in a if key not in differ)
    return " / ".join(str(a[k]) for k in differ), " / ".join(str(b[k]) for k in differ), shared


def comparison_section(comparisons: Sequence[Comparison]) -> Section:
    """The paired comparisons: McNemar on success, bootstrap on reward, the prompt-token ratio."""
    header: tuple[Column, ...] = (
        Column("A", "one group of the pair (what differs from B)", key=True, pinned=True),
        Column("B", "the other group", key=True, pinned=True),
        Column("shared", "what A and B have in common", key=True),
        Column("paired", "tasks (and seeds) both groups ran: the pairs compared", essential=True),
        Column("SR A %", "A's success rate on the pairs", essential=True),
        Column("SR B %", "B's success rate on the pairs", essential=True),
        Column("A only", "pairs only A solved"),
        Column("B only", "pairs only B solved"),
        Column("McNemar p", "exact McNemar test on success: the chance of a split as uneven if A and B were "
               "equally good", essential=True),
        Column("mean reward A-B", "mean over the pairs of A's reward minus B's", essential=True),
        Column("95% CI", "paired bootstrap 95% interval of the reward difference"),
        Column("bootstrap p", "paired bootstrap p-value of the reward difference"),
        Column("p-tokens A/B", "A's mean prompt tokens per episode as a multiple of B's (the papers' cost "
               "comparison)", essential=True),
    )
    informative = any(c.informative is not None for c in comparisons)
    if informative:
        header += _INFORMATIVE
    body = []
    for c in comparisons:
        ratio = "" if c.prompt_ratio is None else f"{c.prompt_ratio:.2f}x"
        row = (
            *_sides(c.a, c.b), str(c.paired), f"{c.sr_a:.2f}", f"{c.sr_b:.2f}",
            str(c.mcnemar.only_a), str(c.mcnemar.only_b), f"{c.mcnemar.p_value:.4g}",
            f"{c.bootstrap.mean_difference:+.4f}", f"[{c.bootstrap.low:+.4f}, {c.bootstrap.high:+.4f}]",
            f"{c.bootstrap.p_value:.4g}", ratio,
        )
        body.append((*row, *_informative_cells(c)) if informative else row)
    return Section("Paired comparisons (same tasks and seeds)", header, tuple(body))


# The comparison again on informative tasks (report.columns.INFORMATIVE_SUCCESS): without the tasks
# doing nothing solves, which can make a weak agent look level with a strong one.
_INFORMATIVE = (
    Column("inf. paired", "of the pairs, those on informative tasks (where doing nothing does not already "
           "score 1)", essential=True),
    Column("inf. A only", "informative pairs only A solved"),
    Column("inf. B only", "informative pairs only B solved"),
    Column("inf. McNemar p", "exact McNemar test on success over the informative pairs alone", essential=True),
)


def _informative_cells(c: Comparison) -> tuple[str, ...]:
    if c.informative is None:
        return ("0", "", "", "")
    return (str(c.informative_paired), str(c.informative.only_a), str(c.informative.only_b),
            f"{c.informative.p_value:.4g}")


def _repetition(report: Report) -> Section:
    body = tuple(
        (*(str(row.group[k]) for k in report.group_keys), str(row.episodes), f"{row.stuck:.1f}",
         f"{row.longest:.2f}", f"{row.repeated:.1f}")
        for row in report.repetition
    )
    return Section("Repeated replies (the same reply written again)", _repetition_columns(report.group_keys), body)


def _repetition_columns(keys: Sequence[str]) -> tuple[Column, ...]:
    return (
        *_keys(keys),
        Column("episodes", "episodes with at least one model reply (an oracle's actions, a pick made at random "
                           "or among a single candidate are not model replies)", essential=True),
        Column(f"stuck % ({STUCK_RUN}+ in a row)", f"episodes where the model wrote the same reply {STUCK_RUN} "
               "or more times in a row, %", essential=True),
        Column("longest run", "mean over episodes of the longest run of identical replies", essential=True),
        Column("replies repeated %", "replies equal to the reply just before them, %", essential=True),
    )


def sections(report: Report) -> list[Section]:
    """The report's tables, in the order every format shows them."""
    found = [_results("Results", report.main, report.group_keys, report.columns)]
    for key, rows in report.breakdowns.items():
        found.append(_results(f"By {key}", rows, (*report.group_keys, key), report.columns))
    if (exits := _exits(report.main, report.group_keys)) is not None:
        found.append(exits)
    if report.comparisons:
        found.append(comparison_section(report.comparisons))
    if report.repetition:
        found.append(_repetition(report))
    return found


def standard_glossary() -> list[tuple[str, str]]:
    """What the columns of every report mean (a benchmark's own columns aside), and the ways an
    episode can end (the "How episodes ended" table): ``statebound report --help`` lists them."""
    keys = ("run", "agent", "model")
    tables = [_results("", (), keys, (CHOICES,)), comparison_section(()), Section("", _repetition_columns(keys), ())]
    notes = dict(glossary(tables))
    for column in COLUMNS:
        if column.unknown_note:
            notes[column.header] += f"; {column.unknown_note}"
    ends = "; ".join(f"{reason.value.replace('_', ' ')}: {note}" for reason, note in EXIT_NOTES.items())
    return [*notes.items(), ("How episodes ended", f"% of episodes that ended each way ({ends})")]
