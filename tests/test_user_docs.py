"""What a reader of the README and docs/ meets: links that lead somewhere, no internal issue
numbers, a README that fits two screens, and results that open each benchmark with its table."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
USER_DOCS = (ROOT / "README.md", ROOT / "CHANGELOG.md", *sorted((ROOT / "docs").glob("*.md")))
_FENCE = re.compile(r"^```.*?^```", flags=re.MULTILINE | re.DOTALL)
_LINK = re.compile(r"\]\(([^)\s]+)\)")


def _prose(text: str) -> str:
    """The text outside code fences and inline code (where ``#58;`` or ``#1`` is data)."""
    return re.sub(r"`[^`\n]*`", "", _FENCE.sub("", text))


def _slug(heading: str) -> str:
    """The anchor GitHub gives a heading: lower case, punctuation dropped, spaces as dashes."""
    text = re.sub(r"[`*_]", "", heading.strip().lower())
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def _anchors(doc: Path) -> set[str]:
    return {_slug(line.lstrip("#")) for line in _FENCE.sub("", doc.read_text(encoding="utf-8")).splitlines()
            if line.startswith("#")}


@pytest.mark.parametrize("doc", USER_DOCS, ids=lambda doc: doc.name)
def test_no_internal_issue_numbers(doc: Path) -> None:
    found = re.findall(r"(?<![\w&])#\d{2,}\b|\b[Ii]ssues? #?\d+|\bissue\d+", _prose(doc.read_text(encoding="utf-8")))
    assert not found, f"{doc.name} names internal issues {found}: say what changed and when (CHANGELOG.md)"


@pytest.mark.parametrize("doc", USER_DOCS, ids=lambda doc: doc.name)
def test_relative_links_lead_to_a_file_and_heading(doc: Path) -> None:
    for target in _LINK.findall(_FENCE.sub("", doc.read_text(encoding="utf-8"))):
        if re.match(r"[a-z]+:", target):
            continue  # a URL
        path, _, anchor = target.partition("#")
        linked = (doc.parent / path).resolve() if path else doc
        assert linked.exists(), f"{doc.name} links {target}, which does not exist"
        if anchor:
            assert anchor in _anchors(linked), f"{doc.name} links {target}: {linked.name} has no such heading"


def test_each_benchmark_in_results_opens_with_its_table() -> None:
    text = (ROOT / "docs" / "results.md").read_text(encoding="utf-8")
    for name in ("InterCode-SQL", "InterCode-Bash", "ALFWorld", "HotpotQA", "GSM8K"):
        section = text.split(f"\n## {name}\n", 1)[1]
        opening = [line for line in section.splitlines()[:4] if line.strip()]
        assert opening[1].startswith("| agent |"), f"results.md's {name} section opens without its table"


def test_the_records_named_in_results_exist() -> None:
    text = (ROOT / "docs" / "results.md").read_text(encoding="utf-8")
    named = set(re.findall(r"`((?:extensions|exact-scoring|authors-machines|authors-code|[a-z0-9-]+-smollm2)/[^`*]+)`", text))
    assert len(named) > 40
    for folder in named:
        assert (ROOT / "benchmarks" / "records" / folder).is_dir(), f"results.md names record {folder}, not committed"
def test_the_readme_fits_on_two_screens() -> None:
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 100, f"README.md has {len(lines)} lines; move detail into docs/"
    assert max(len(line) for line in lines if not line.startswith("|")) <= 120  # a table row wraps when shown


