"""Form bodies and query numbers read strictly: a value that is not what is asked for is a
:class:`FormError` whose message a handler shows with a 400, never a 500 from deeper down.

```python
form = parse_form(b"seq=3&name=", fields=("seq", "name"))      # {"seq": "3", "name": ""}
form_int(form, "seq", what="the checkpoint's number")          # 3
```
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping
from urllib.parse import parse_qsl

__all__ = ["MAX_INT", "FormError", "form_int", "parse_form"]

MAX_INT = 2**63 - 1
"""The largest number a store keeps (SQLite's and PostgreSQL's 64-bit integers)."""

_WHOLE = re.compile(r"[+-]?\d{1,19}")


class FormError(ValueError):
    """A form or query value that cannot be used; its message says which and why."""


def parse_form(body: bytes, *, fields: Collection[str]) -> dict[str, str]:
    """An ``application/x-www-form-urlencoded`` body: UTF-8 (percent-escapes too), only the
    ``fields`` named, each once; values stripped of surrounding whitespace."""
    try:
        text = body.decode("utf-8")
        pairs = parse_qsl(text, keep_blank_values=True, errors="strict", max_num_fields=len(fields))
    except UnicodeDecodeError:
        raise FormError("the form is not UTF-8 text") from None
    except ValueError:
        raise FormError(f"the form has more fields than {', '.join(fields)}") from None
    form: dict[str, str] = {}
    for key, value in pairs:
        if key not in fields:
            raise FormError(f"the form has a field {key[:40]!r}; it takes {', '.join(fields)}")
        if key in form:
            raise FormError(f"the form gives {key} twice")
        form[key] = value.strip()
    return form


def form_int(values: Mapping[str, str], name: str, *, what: str | None = None, low: int = 0, high: int = MAX_INT,
             required: bool = True) -> int | None:
    """``values[name]`` as a whole number from ``low`` to ``high``; ``None`` when it is empty or
    absent and not ``required``. ``what`` names it in the message (default: ``name``)."""
    raw = (values.get(name) or "").strip()
    said = what or name
    if not raw:
        if required:
            raise FormError(f"give {said}")
        return None
    if not _WHOLE.fullmatch(raw) or not low <= int(raw) <= high:
        raise FormError(f"{said} must be a whole number from {low} to {high}, not {raw[:30]!r}")
    return int(raw)
