"""``report.html``: the report's tables, plots and column glossary in one self-contained page.

The page has no external assets (the SVG plots are inlined, the style is in the page), so it can be
mailed or attached to a paper's artefacts. It fits a 1280-pixel window: a key column with one value
in every row (one model) is said once above its table, headers wrap, a table still wider than the
page scrolls inside its own box, plots shrink to the page. Every plot has a title and a caption; every
column header explains itself on hover and in the glossary at the end. Table columns sort on a
click (a few lines of script); numbers sort as numbers. The tasks x agents grid links each episode
to its page in ``statebound view`` (run on the same run directories). Below 700 pixels the plots
keep a legible size and scroll inside their box.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape
from pathlib import Path
from urllib.parse import quote, urlencode

from statebound.contract.result import EpisodeResult
from statebound.report.grid import Section, glossary, lift_constant_keys
from statebound.report.plots import PLOT_CAPTIONS
from statebound.report.sections import sections
from statebound.report.tables import Report
from statebound.report.task_grid import grid, outcome, url_name

__all__ = ["DEFAULT_VIEW_URL", "to_html", "write_html"]

DEFAULT_VIEW_URL = "http://127.0.0.1:8765/"  # where statebound view serves by default

_STYLE = """
body { font: 14px/1.45 system-ui, sans-serif; margin: 2em auto; max-width: 1200px; padding: 0 1em; color: #222; }
h1 { font-size: 1.5em; overflow-wrap: anywhere; } h2 { font-size: 1.15em; margin-top: 2em; }
.scroll { overflow-x: auto; max-width: 100%; }
table { border-collapse: collapse; margin: .5em 0; font-variant-numeric: tabular-nums; }
th, td { padding: .25em .6em; border-bottom: 1px solid #ddd; text-align: right; white-space: nowrap; }
th { background: #f4f4f4; cursor: pointer; user-select: none; white-space: normal; vertical-align: bottom; }
p.shared { color: #555; margin: .2em 0; overflow-wrap: anywhere; }
th[title] { text-decoration: underline dotted #999; }
td.key, th.key { text-align: left; }
tr:hover td { background: #fafafa; }
figure { margin: 1.5em 0; overflow-x: auto; } figure svg { max-width: 100%; height: auto; display: block; }
figcaption { color: #555; max-width: 60em; }
dl.glossary dt { font-weight: 600; margin-top: .4em; } dl.glossary dd { margin-left: 1.5em; }
table.tasks td { text-align: center; } table.tasks td.key { text-align: left; }
table.tasks a { text-decoration: none; font-weight: 600; padding: 0 .1em; }
a.solved { color: #1a7f37; } a.failed { color: #b42318; } a.crashed { color: #9a6700; }
abbr.informative { font-size: .8em; color: #555; margin-left: .3em; }
@media (max-width: 700px) {
  body { margin: 1em auto; padding: 0 .6em; }
  figure svg { max-width: none; }  /* drawn at its own size (text as legible as at 1280), scrolled in its box */
  figcaption { position: sticky; left: 0; max-width: calc(100vw - 1.5em); }
}
"""
_MARKS = {"solved": "✓", "failed": "✗", "crashed": "!"}

_SCRIPT = """
document.querySelectorAll("th").forEach((th) => th.addEventListener("click", () => {
  const table = th.closest("table"), body = table.tBodies[0], column = th.cellIndex;
  const up = th.dataset.order !== "up"; th.dataset.order = up ? "up" : "down";
  const value = (row) => { const text = row.cells[column].textContent, n = parseFloat(text);
    return isNaN(n) ? text : n; };
  [...body.rows].sort((a, b) => { const x = value(a), y = value(b);
    return (x > y ? 1 : x < y ? -1 : 0) * (up ? 1 : -1); }).forEach((row) => body.appendChild(row));
}));
"""


def _table(section: Section) -> str:
    def cell(tag: str, key: bool, text: str, note: str = "") -> str:
        kind = ' class="key"' if key else ""
        hint = f' title="{escape(note)}"' if note else ""
        return f"<{tag}{kind}{hint}>{escape(text)}</{tag}>"

    head = "".join(cell("th", c.key, c.header, c.note) for c in section.columns)
    rows = "\n".join("<tr>" + "".join(cell("td", c.key, text) for c, text in zip(section.columns, row)) + "</tr>"
                     for row in section.rows)
    footer = ""
    if section.footer is not None:
        footer = "<tfoot><tr>" + "".join(cell("td", c.key, text) for c, text in zip(section.columns, section.footer))
        footer += "</tr></tfoot>"
    return f'<div class="scroll"><table><thead><tr>{head}</tr></thead><tbody>\n{rows}\n</tbody>{footer}</table></div>'


def _figure(svg: Path) -> str:
    text = svg.read_text(encoding="utf-8")
    start = text.find("<svg")  # drop the XML prologue and doctype: the page is the document
    caption = PLOT_CAPTIONS.get(svg.stem, "")
    return (f'<figure id="{escape(svg.stem)}">{text[start:]}'
            f"<figcaption>{escape(caption)}</figcaption></figure>")


def _glossary(shown: Sequence[Section]) -> list[str]:
    notes = glossary(shown)
    if not notes:
        return []
    items = "\n".join(f"<dt>{escape(header)}</dt><dd>{escape(note)}</dd>" for header, note in notes)
    return ['<h2 id="columns">Columns</h2>', f'<dl class="glossary">\n{items}\n</dl>']


def _episode_link(result: EpisodeResult, view_url: str) -> str:
    run = url_name(str(result.meta.get("run", "run")))
    query = urlencode({"task": result.task, "agent": result.agent, "model": result.model, "seed": result.seed})
    seen = outcome(result)
    return (f'<a class="{seen}" href="{escape(view_url)}run/{quote(run, safe="")}/episode?{escape(query)}" '
            f'title="{seen}, seed {result.seed}">{_MARKS[seen]}</a>')


def _task_grid(results: Sequence[EpisodeResult], view_url: str) -> list[str]:
    """The tasks x agents grid, each episode a mark linked to its page in ``statebound view``."""
    tasks = grid(results)
    if not tasks.tasks:
        return []
    several_models = len({model for _, model in tasks.groups}) > 1
    heads = "".join(f"<th>{escape(agent + (f' / {model}' if several_models else ''))}</th>" for agent, model in tasks.groups)
    rows = []
    for task in tasks.tasks:
        mark = '<abbr class="informative" title="informative: doing nothing does not already solve it">i</abbr>'
        cells = "".join("<td>" + "".join(_episode_link(r, view_url) for r in tasks.cells.get((task, group), ())) + "</td>"
                        for group in tasks.groups)
        rows.append(f'<tr><td class="key">{escape(task)}{mark if task in tasks.informative else ""}</td>{cells}'
                    f"<td>{tasks.solved[task]}</td></tr>")
    note = ("✓ solved, ✗ failed, ! crashed (one mark per seed); i marks an informative task. Each mark opens "
            f"the episode in statebound view, started on the same run directories ({view_url}).")
    return ['<h2 id="tasks">Tasks</h2>', f'<p class="shared">{escape(note)}</p>',
            f'<div class="scroll"><table class="tasks"><thead><tr><th class="key">task</th>{heads}<th>solved</th></tr>'
            f"</thead><tbody>\n" + "\n".join(rows) + "\n</tbody></table></div>"]


def to_html(report: Report, *, title: str, plots: Sequence[Path] = (), results: Sequence[EpisodeResult] = (),
            view_url: str = DEFAULT_VIEW_URL) -> str:
    """The page for ``report``; ``plots`` are SVG files to inline after the tables; ``results``
    (each with ``meta["run"]``, as :func:`~statebound.report.tables.load_runs` gives them) make
    the tasks x agents grid, linked to ``view_url``."""
    shown = sections(report)
    parts = [f"<h1>{escape(title)}</h1>"]
    for section in shown:
        table, lifted = lift_constant_keys(section)
        parts.append(f"<h2>{escape(section.title)}</h2>")
        if lifted:
            parts.append(f'<p class="shared">{escape("; ".join(lifted))}</p>')
        parts.append(_table(table))
    parts += _task_grid(results, view_url if view_url.endswith("/") else view_url + "/")
    figures = [_figure(path) for path in plots if path.suffix == ".svg"]
    if figures:
        parts += ["<h2>Plots</h2>", *figures]
    parts += _glossary(shown)
    return (
        '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{escape(title)}</title><style>{_STYLE}</style></head>\n<body>\n"
        + "\n".join(parts)
        + f"\n<script>{_SCRIPT}</script>\n</body></html>\n"
    )


def write_html(report: Report, out_dir: str | Path, *, title: str, plots: Sequence[Path] = (),
               results: Sequence[EpisodeResult] = (), view_url: str = DEFAULT_VIEW_URL) -> Path:
    """Write ``report.html`` into ``out_dir`` (see :func:`to_html`)."""
    path = Path(out_dir) / "report.html"
    path.write_text(to_html(report, title=title, plots=plots, results=results, view_url=view_url), encoding="utf-8")
    return path
