"""Debian's chromium for the viewer's browser tests (never a downloaded browser): where it is, and
the mark that skips a test without it. The ``browser`` fixture (Playwright) is in conftest.py."""

from __future__ import annotations

import shutil

import pytest

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
needs_chromium = pytest.mark.skipif(CHROMIUM is None, reason="no chromium: apt-get install chromium")
