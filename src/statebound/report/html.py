"""``report.html``: the report's tables and plots in one self-contained page.

The page has no external assets (the SVG plots are inlined, the style is in the page), so it can be
mailed or attached to a paper's artefacts. Table columns sort on a click (a few lines of script);
numbers sort as numbers.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape
from pathlib import Path

from statebound.report.tables import Report, sections

__all__ = ["to_html", "write_html"]

_STYLE = """
body { font: 14px/1.45 system-ui, sans-serif; margin: 2em auto; max-width: 1200px; color: #222; }
h1 { font-size: 1.5em; } h2 { font-size: 1.15em; margin-top: 2em; }
table { border-collapse: collapse; margin: .5em 0; font-variant-numeric: tabular-nums; }
th, td { padding: .25em .6em; border-bottom: 1px solid #ddd; text-align: right; white-space: nowrap; }
th { background: #f4f4f4; cursor: pointer; user-select: none; }
td.key, th.key { text-align: left; }
tr:hover td { background: #fafafa; }
figure { margin: 1em 0; } figure svg { max-width: 100%; height: auto; }
"""

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

_KEY_COLUMNS = {"run", "agent", "model", "A", "B", "hardness", "task_type", "type"}


def _table(header: Sequence[str], body: Sequence[Sequence[str]]) -> str:
    def cell(tag: str, name: str, text: str) -> str:
        kind = ' class="key"' if name in _KEY_COLUMNS else ""
        return f"<{tag}{kind}>{escape(text)}</{tag}>"

    head = "".join(cell("th", name, name) for name in header)
    rows = "\n".join("<tr>" + "".join(cell("td", name, text) for name, text in zip(header, row)) + "</tr>"
                     for row in body)
    return f"<table><thead><tr>{head}</tr></thead><tbody>\n{rows}\n</tbody></table>"


def _figure(svg: Path) -> str:
    text = svg.read_text(encoding="utf-8")
    start = text.find("<svg")  # drop the XML prologue and doctype: the page is the document
    return f'<figure id="{escape(svg.stem)}">{text[start:]}</figure>'


def to_html(report: Report, *, title: str, plots: Sequence[Path] = ()) -> str:
    """The page for ``report``; ``plots`` are SVG files to inline after the tables."""
    parts = [f"<h1>{escape(title)}</h1>"]
    for heading, header, body in sections(report):
        parts += [f"<h2>{escape(heading)}</h2>", _table(header, body)]
    figures = [_figure(path) for path in plots if path.suffix == ".svg"]
    if figures:
        parts += ["<h2>Plots</h2>", *figures]
    return (
        '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{escape(title)}</title><style>{_STYLE}</style></head>\n<body>\n"
        + "\n".join(parts)
        + f"\n<script>{_SCRIPT}</script>\n</body></html>\n"
    )


def write_html(report: Report, out_dir: str | Path, *, title: str, plots: Sequence[Path] = ()) -> Path:
    """Write ``report.html`` into ``out_dir``."""
    path = Path(out_dir) / "report.html"
    path.write_text(to_html(report, title=title, plots=plots), encoding="utf-8")
    return path
