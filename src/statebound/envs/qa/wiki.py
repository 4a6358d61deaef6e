"""Search and Lookup over an offline corpus, with the observable behaviour of ReAct's Wikipedia tool.

- ``search(entity)``: when a page title matches, its first five sentences joined by spaces; when
  none does, ``Could not find <entity>. Similar: ['Title', ...].`` (up to five titles, best first).
- ``lookup(keyword)``: the next sentence of the last page found that contains ``keyword``
  (case-insensitive), as ``(Result k / n) sentence``; ``No more results.`` once they run out.
  Asking for a new keyword restarts the count, as in ReAct.

A title matches when, after case folding and dropping punctuation, it equals the query, equals it
without a trailing parenthetical (``High Plains (United States)``), is the only title containing
every word of the query, or is the only title within a difflib ratio of 0.85 of it (stand-ins for
Wikipedia's redirects: ``VIVA Media AG`` finds ``VIVA Media``). BM25 (``rank-bm25``) ranks the
similar titles over title and text.
"""

from __future__ import annotations

import difflib
import re
import weakref
from dataclasses import dataclass, field

from statebound.envs.qa.corpus import Corpus, Page

__all__ = ["PAGE_SENTENCES", "SIMILAR_TITLES", "WikiTools", "tokenize"]

PAGE_SENTENCES = 5  # ReAct shows the first five sentences of a page
SIMILAR_TITLES = 5
_CLOSE_TITLE = 0.85  # difflib ratio above which a misspelt or suffixed title still matches
_TITLE_WEIGHT = 3  # title words count this many times in the BM25 document
_WORD = re.compile(r"\w+", re.UNICODE)
_PARENTHETICAL = re.compile(r"\s*\([^)]*\)\s*$")


def tokenize(text: str) -> list[str]:
    """Lower-cased word tokens (letters, digits, underscores), punctuation dropped."""
    return _WORD.findall(text.casefold())


def _key(title: str) -> str:
    return " ".join(tokenize(title))


class _Index:
    """Title keys and a BM25 model over one corpus (built once, shared by every episode)."""

    def __init__(self, corpus: Corpus) -> None:
        from rank_bm25 import BM25Okapi  # imported here: optional dependency (the `qa` extra)

        self.pages = corpus.pages
        self.by_key: dict[str, Page] = {}
        self.by_base_key: dict[str, list[Page]] = {}
        for page in self.pages:
            self.by_key.setdefault(_key(page.title), page)
            base = _key(_PARENTHETICAL.sub("", page.title))
            self.by_base_key.setdefault(base, []).append(page)
        self.title_words = [set(tokenize(page.title)) for page in self.pages]
        documents = [
            tokenize(page.title) * _TITLE_WEIGHT + tokenize(" ".join(page.sentences)) for page in self.pages
        ]
        self.bm25 = BM25Okapi(documents)

    def match(self, query: str) -> Page | None:
        key = _key(query)
        if not key:
            return None
        if key in self.by_key:
            return self.by_key[key]
        if len(self.by_base_key.get(key, ())) == 1:
            return self.by_base_key[key][0]
        words = set(key.split())
        holders = [page for page, title in zip(self.pages, self.title_words) if words <= title]
        if len(holders) == 1:
            return holders[0]
        close = difflib.get_close_matches(key, self.by_key, n=2, cutoff=_CLOSE_TITLE)
        return self.by_key[close[0]] if len(close) == 1 else None

    def similar(self, query: str, limit: int) -> list[str]:
        words = tokenize(query)
        if not words:
            return []
        scores = self.bm25.get_scores(words)
        ranked = sorted(range(len(self.pages)), key=lambda i: (-scores[i], i))
        return [self.pages[i].title for i in ranked[:limit] if scores[i] > 0]


_INDEXES: weakref.WeakKeyDictionary[Corpus, _Index] = weakref.WeakKeyDictionary()


@dataclass
class WikiTools:
    """Search and Lookup for one episode (keeps the last page and the lookup cursor)."""

    corpus: Corpus
    page: Page | None = field(default=None, init=False)
    _keyword: str | None = field(default=None, init=False, repr=False)
    _results: list[str] = field(default_factory=list, init=False, repr=False)
    _cursor: int = field(default=0, init=False, repr=False)

    def __post_init__(self) -> None:
        index = _INDEXES.get(self.corpus)
        if index is None:
            index = _INDEXES[self.corpus] = _Index(self.corpus)
        self._index = index

    def reset(self) -> None:
        self.page, self._keyword, self._results, self._cursor = None, None, [], 0

    def fork(self) -> WikiTools:
        """An independent copy of this episode's state (last page and lookup cursor), for a call
        that runs beside others; :meth:`adopt` takes a fork's state back."""
        twin = WikiTools(self.corpus)
        twin.adopt(self)
        return twin

    def adopt(self, other: WikiTools) -> None:
        """Take ``other``'s last page and lookup cursor."""
        self.page, self._keyword = other.page, other._keyword
        self._results, self._cursor = list(other._results), other._cursor

    def state(self) -> tuple[object, ...]:
        """What a call can change: the last page and the lookup keyword and position."""
        return (self.page, self._keyword, self._cursor)

    def search(self, entity: str) -> str:
        entity = entity.strip()
        page = self._index.match(entity)
        if page is None:
            similar = self._index.similar(entity, SIMILAR_TITLES)
            return f"Could not find {entity}. Similar: {similar}."
        self.page, self._keyword, self._results, self._cursor = page, None, [], 0
        return " ".join(page.sentences[:PAGE_SENTENCES])

    def lookup(self, keyword: str) -> str:
        if self.page is None:
            return "No page to look in yet: Search for a page first, then Lookup a string in it."
        if keyword != self._keyword:
            self._keyword, self._cursor = keyword, 0
            needle = keyword.casefold()
            self._results = [s for s in self.page.sentences if needle in s.casefold()]
        if self._cursor >= len(self._results):
            return "No more results."
        self._cursor += 1
        return f"(Result {self._cursor} / {len(self._results)}) {self._results[self._cursor - 1]}"
