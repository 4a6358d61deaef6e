"""``statebound view PATH...``: a local web app over run directories and live-flow stores.

Server-rendered pages (Starlette, Jinja2 with autoescape, one bundled stylesheet, no script
needed): the runs and stores given (``/``), a run's results and its tasks x agents grid
(``/run/NAME``), one episode (``/run/NAME/episode?task=..&agent=..``), two agents on one task
side by side (``/compare?run=..&task=..&a=..&b=..``), the episodes whose text holds a search
(``/search?q=..[&run=..]``), a store's threads and one thread's checkpoints with its variables and
pending question (``/store/NAME``, ``/store/NAME/thread/ID``). Every request reads the stores
again, read-only, so a run being written shows its new episodes on reload.
"""

from __future__ import annotations

from statebound.view.sources import Sources, find_sources

__all__ = ["Sources", "find_sources"]
