"""What statebound's local HTTP servers share (``statebound view``, ``statebound serve``):
:class:`HostGuard` (:mod:`statebound.web.guard`), which answers only the server's own host names
and bounds request bodies before any handler runs (needs Starlette, the ``view`` extra),
:class:`TokenGuard`, which asks for a bearer token, and strict
form and number parsing (:mod:`statebound.web.forms`: :func:`parse_form`, :func:`form_int`) that
ends in a 400 with a message, never a 500. Names load lazily: the forms need no web stack."""

from __future__ import annotations

import importlib
from typing import Any

__all__ = ["DEFAULT_MAX_BODY", "LOCAL_HOSTS", "MAX_INT", "FormError", "HostGuard", "TokenGuard", "allowed_hosts",
           "foreign_origin", "form_int", "parse_form"]

_WHERE = {"FormError": "forms", "MAX_INT": "forms", "form_int": "forms", "parse_form": "forms",
          "DEFAULT_MAX_BODY": "guard", "LOCAL_HOSTS": "guard", "HostGuard": "guard", "TokenGuard": "guard", "allowed_hosts": "guard",
          "foreign_origin": "guard"}


def __getattr__(name: str) -> Any:
    if name in _WHERE:
        return getattr(importlib.import_module(f"statebound.web.{_WHERE[name]}"), name)
    raise AttributeError(f"module 'statebound.web' has no attribute {name!r}")
