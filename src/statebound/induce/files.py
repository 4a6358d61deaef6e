"""An induced machine as a file a person can read and edit: Python (``machine.py``: it builds the
:class:`~statebound.induce.machine.Machine` and its ``flow``, so ``statebound flow draw
machine.py:flow`` works) or JSON (``machine.json``). Both put one role on a line; the mistakes of
an edited file are reported with the line that holds them."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import asdict
from pathlib import Path
from typing import Any

from statebound.errors import DefinitionError
from statebound.induce.machine import Machine, Trained, check_machine

__all__ = ["FORMAT", "SUFFIXES", "load_machine", "machine_json", "machine_python", "write_machine"]

FORMAT = "statebound-induced-machine/1"  # the JSON file's "machine" key
SUFFIXES = (".py", ".json")


def _literal(value: Any) -> str:
    """``value`` written as JSON, which reads as the same Python literal (strings in double quotes,
    as the line finder expects)."""
    return json.dumps(value, ensure_ascii=False)


def _counts(counts: Mapping[str, int]) -> str:
    return _literal(dict(counts))


def _trained_fields(trained: Trained) -> dict[str, Any]:
    data = asdict(trained)
    return {key: list(value) if isinstance(value, tuple | list) else value for key, value in data.items()}


def _header(machine: Machine) -> str:
    trained = machine.trained
    runs = ", ".join(trained.runs) or "traces given in code"
    return (f"A machine for {machine.benchmark} induced by statebound from {trained.episodes} solved episodes "
            f"({trained.steps} steps, {trained.tokens} model tokens) of {runs}, in {trained.seconds:.2f} s.")


def machine_json(machine: Machine) -> str:
    """``machine`` as JSON, a role on a line."""
    top = {"machine": FORMAT, "about": _header(machine), "benchmark": machine.benchmark,
           "slots": list(machine.slots), "trained": _trained_fields(machine.trained)}
    lines = ["{"] + [f"  {json.dumps(key)}: {json.dumps(value, ensure_ascii=False)}," for key, value in top.items()]
    lines.append('  "graphs": [')
    for g, graph in enumerate(machine.graphs):
        head = {"task_type": graph.task_type, "episodes": graph.episodes, "start": dict(graph.start)}
        lines.append("    " + json.dumps(head, ensure_ascii=False)[:-1] + ', "roles": [')
        for r, role in enumerate(graph.roles):
            item = {"name": role.name, "template": role.template, "count": role.count,
                    "milestone": role.milestone, "next": dict(role.next), "values": dict(role.values)}
            lines.append("      " + json.dumps(item, ensure_ascii=False) + ("," if r < len(graph.roles) - 1 else ""))
        lines.append("    ]}" + ("," if g < len(machine.graphs) - 1 else ""))
    lines.append("  ]" + ("," if machine.places else ""))
    if machine.places:
        lines.append('  "places": {')
        things = list(machine.places.items())
        lines += [f"    {_literal(thing)}: {_counts(at)}" + ("," if i < len(things) - 1 else "")
                  for i, (thing, at) in enumerate(things)]
        lines.append("  }")
    lines.append("}")
    return "\n".join(lines) + "\n"


def machine_python(machine: Machine) -> str:
    """``machine`` as a Python file that builds it and its ``flow``, a role on a line."""
    trained = ", ".join(f"{k}={_literal(v)}" for k, v in _trained_fields(machine.trained).items())
    lines = [f'"""{_header(machine)}', "", "Edit it freely: `statebound flow check THIS.py:flow` checks it, "
             f"`statebound eval {machine.benchmark} -a induced:THIS.py` runs it.", '"""', "",
             "from statebound.induce import Graph, Machine, Role, Trained", "", "machine = Machine(",
             f"    benchmark={_literal(machine.benchmark)},", f"    slots={_literal(list(machine.slots))},",
             f"    trained=Trained({trained}),", "    graphs=["]
    for graph in machine.graphs:
        lines.append(f"        Graph({_literal(graph.task_type)}, episodes={graph.episodes}, start={_counts(graph.start)}, roles=[")
        for role in graph.roles:
            milestone = ", milestone=True" if role.milestone else ""
            values = f", values={_counts(role.values)}" if role.values else ""
            lines.append(f"            Role({_literal(role.name)}, {_literal(role.template)}, "
                         f"count={role.count}{milestone}, next={_counts(role.next)}{values}),")
        lines.append("        ]),")
    lines.append("    ],")
    if machine.places:
        lines += ["    places={", *(f"        {_literal(thing)}: {_counts(at)}," for thing, at in machine.places.items()),
                  "    },"]
    lines += [")", "flow = machine.flow()  # for `statebound flow draw/check THIS.py:flow`", ""]
    return "\n".join(lines)


def write_machine(machine: Machine, path: str | Path) -> Path:
    """Write ``machine`` to ``path`` as Python or JSON (by its suffix)."""
    target = Path(path)
    if target.suffix not in SUFFIXES:
        raise DefinitionError(f"{target}: a machine is written as .py or .json, not {target.suffix or 'no suffix'!r}")
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(machine_python(machine) if target.suffix == ".py" else machine_json(machine), encoding="utf-8")
    return target


def _from_json(path: Path) -> Machine:
    text = path.read_text(encoding="utf-8")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        raise DefinitionError(f"{path}:{error.lineno}: not JSON ({error.msg})") from None
    if not isinstance(data, dict) or data.get("machine") != FORMAT:
        raise DefinitionError(f"{path}: not an induced machine (its \"machine\" key must be {FORMAT!r}); "
                              "make one with statebound induce")
    from pydantic import TypeAdapter, ValidationError

    fields = {"benchmark", "slots", "trained", "graphs", "places"}
    try:
        return TypeAdapter(Machine).validate_python({**{k: data[k] for k in fields if k in data}, "origin": str(path)})
    except ValidationError as error:
        problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in error.errors()[:5])
        raise DefinitionError(f"{path}: {problems}") from None


def load_machine(path: str | Path) -> Machine:
    """The machine in ``path`` (``.py``: its ``machine`` variable; ``.json``), checked; mistakes
    are refused naming the lines that hold them."""
    source = Path(path)
    if source.suffix not in SUFFIXES:
        raise DefinitionError(f"{source}: an induced machine is a .py or .json file made by statebound induce")
    if not source.is_file():
        raise DefinitionError(f"no machine file {source}; make one with statebound induce RUN_DIR --out {source}")
    if source.suffix == ".json":
        machine = _from_json(source)
    else:
        from statebound.user_files import load_file

        defined = getattr(load_file(source), "machine", None)
        if not isinstance(defined, Machine):
            raise DefinitionError(f"{source} defines no variable 'machine' holding a statebound.induce.Machine")
        machine = defined
    check_machine(machine)
    return machine

