"""Seconds to print one long unbroken word in an 80-column terminal, as ``statebound run`` printed a
model's reply before (a string of rich markup, the reply escaped in it) and as it prints it now
(issue #51: 52.7 s for 60,000 characters, the run blocked meanwhile).

    .venv/bin/python benchmarks/terminal_long_word.py              # 5,000 to 60,000 characters
    .venv/bin/python benchmarks/terminal_long_word.py --sizes 200000

A string goes through rich's markup parser and highlighter, whose time grows with the square of
the word; ``inert_text`` hands rich a ``Text`` (no markup, no highlighting) whose long words are
folded into lines of 100 characters (``statebound.report.inert``): linear time.
"""

from __future__ import annotations

import argparse
import io
import time

from rich.console import Console
from rich.markup import escape
from rich.text import Text

from statebound.report.inert import inert_text


def _seconds(renderable: str | Text) -> float:
    console = Console(file=io.StringIO(), width=80, force_terminal=True)
    started = time.perf_counter()
    console.print(renderable)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[5_000, 20_000, 60_000])
    parser.add_argument("--no-raw", action="store_true", help="skip the old way (60,000 characters take a minute)")
    args = parser.parse_args()
    print(f"{'characters':>10}  {'before':>10}  {'inert':>8}")
    for size in args.sizes:
        word = "x" * size
        raw = "-" if args.no_raw else f"{_seconds(f'[green]llm:[/] {escape(word)}'):.2f} s"
        print(f"{size:>10,}  {raw:>10}  {_seconds(inert_text(word)):.3f} s")


if __name__ == "__main__":
    main()
