"""``--help`` that reads as prose: values named as a reader names them, flags without a type.

Typer shows each parameter's Python type (``<list[str]>``, ``<bool>``); :class:`ReadableGroup`, the
class of the root command, renames them once the command tree is built: ``TEXT``, ``INTEGER``,
``NUMBER``, ``PATH`` or the choices (a parameter's own ``metavar`` wins, e.g. ``KEY=VALUE``), and
nothing at all for a flag. Arguments show their name only.
"""

from __future__ import annotations

from typing import Any

from typer.core import TyperArgument, TyperGroup, TyperOption

__all__ = ["ReadableGroup", "name_values"]

_WORDS = {"str": "TEXT", "int": "INTEGER", "float": "NUMBER", "Path": "PATH", "path": "PATH"}


def _no_type(ctx: Any) -> None:  # an argument's type column: its name says enough
    return None


def _value_name(option: TyperOption) -> str:
    descriptor = option.type_descriptor
    if descriptor.is_choice:
        return "|".join(str(getattr(choice, "value", choice)) for choice in descriptor.choices or ())
    annotation = descriptor.annotation
    bare = option._bare_type(annotation.__args__[0]) if descriptor.is_list else option.bare_type()
    return _WORDS.get(bare, bare.upper())


def _name_param(param: Any) -> None:
    if isinstance(param, TyperArgument):
        param.display_type_rich = _no_type  # type: ignore[method-assign]
        if param.metavar is None:
            param.metavar = param.name.upper()
    elif isinstance(param, TyperOption) and param.metavar is None:
        param.metavar = "" if param.is_flag else _value_name(param)


def name_values(command: Any) -> None:
    """Give every parameter of ``command`` and its subcommands (``--help`` too) a readable value name."""
    help_option = command.get_help_option(command.context_class(command))
    for param in [*command.params, *([help_option] if help_option is not None else [])]:
        _name_param(param)
    for sub in getattr(command, "commands", {}).values():
        name_values(sub)


class ReadableGroup(TyperGroup):
    """The root command: names every value of the whole tree readably once it is built."""

    def __init__(self, **attrs: Any) -> None:
        super().__init__(**attrs)
        name_values(self)
