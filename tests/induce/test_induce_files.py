"""An induced machine as a file a person edits: Python and JSON round trips, the flow drawn and
checked from the file, and an edit gone wrong refused with the line that holds it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from kitchen import lessons, slots
from typer.testing import CliRunner

from statebound.cli.app import app
from statebound.errors import DefinitionError
from statebound.flow.checks import check_flow
from statebound.induce import Trained, load_machine, write_machine
from statebound.induce.domains import Domain, register_domain
from statebound.induce.learn import learn

GAMES = [("cool", "apple", "counter 1", "shelf"), ("cool", "egg", "fridge 1", "table"),
         ("cool", "milk", "counter 1", "table"), ("put", "cup", "table 1", "shelf"), ("put", "egg", "sink 1", "table")]


@pytest.fixture(scope="module")
def machine():
    register_domain(Domain("kitchen", slots=("object", "receptacle"), slot_values=slots,
                           task_type=lambda text: "cool" if "cool some" in text else "put"))
    learnt = learn(lessons(GAMES), benchmark="kitchen", slots=("object", "receptacle"))
    return type(learnt)(benchmark="kitchen", graphs=learnt.graphs, slots=learnt.slots, places=learnt.places, origin="",
                        trained=Trained(runs=("runs/kitchen",), tasks=("cool-0", "put-3"), episodes=5, steps=26))


@pytest.mark.parametrize("suffix", [".json", ".py"])
def test_a_machine_file_reads_back_as_written(machine, tmp_path: Path, suffix: str):
    path = write_machine(machine, tmp_path / f"machine{suffix}")
    again = load_machine(path)
    assert again.graphs == machine.graphs and again.trained == machine.trained
    assert again.places == machine.places and list(again.places["egg"]) == ["fridge", "sink"]
    assert again.origin == str(path)
    flow = again.flow()
    assert [s.name for s in flow.states][:3] == ["Start", "cool", "cool: go to {seen}"]
    assert all(d.severity != "warning" for d in check_flow(flow))


def test_a_python_machine_is_a_flow_file(machine, tmp_path: Path):
    path = write_machine(machine, tmp_path / "machine.py")
    text = path.read_text()
    assert 'Role("go to fridge", "go to fridge {n}", count=3, milestone=True, next={"cool {object} with fridge": 3})' in text
    done = CliRunner().invoke(app, ["flow", "check", f"{path}:flow"])
    assert done.exit_code == 0, done.output
    assert "induced-kitchen: 0 warning(s)" in done.output


def _edit(path: Path, old: str, new: str) -> int:
    """Replace ``old`` by ``new`` in the file; the line it is on."""
    text = path.read_text()
    assert old in text, old
    path.write_text(text.replace(old, new, 1))
    return text[:text.index(old)].count("\n") + 1


@pytest.mark.parametrize("suffix", [".json", ".py"])
@pytest.mark.parametrize(("old", "new", "says"), [
    ('"cool {object} with fridge": 3', '"cool {object} with fridg": 3',
     "role 'go to fridge' leads to unknown role 'cool {object} with fridg'; did you mean 'cool {object} with fridge'?"),
    ('"go to fridge {n}"', '"go to {fridge} {n}"', "names slot {fridge}, which is not one of"),
    ('"go to fridge {n}"', '"  "', "its template is empty"),
])
def test_an_edit_gone_wrong_names_its_line(machine, tmp_path: Path, suffix: str, old: str, new: str, says: str):
    path = write_machine(machine, tmp_path / f"machine{suffix}")
    line = _edit(path, old, new)
    with pytest.raises(DefinitionError) as refused:
        load_machine(path) if suffix == ".json" else load_machine(path).flow()
    assert f"{path}:{line}: " in str(refused.value) and says in str(refused.value)


def test_a_role_no_path_reaches_is_the_flows_own_error_with_its_line(machine, tmp_path: Path):
    path = write_machine(machine, tmp_path / "machine.json")
    data = json.loads(path.read_text())
    cool = data["graphs"][0]
    cool["roles"].append({"name": "dance", "template": "dance {n}", "count": 1, "next": {"Done": 1}})
    path.write_text(json.dumps(data, indent=1).replace('{\n   "name": "dance"', '{"name": "dance"'))
    line = next(n for n, text in enumerate(path.read_text().splitlines(), 1) if '"name": "dance"' in text)
    with pytest.raises(DefinitionError) as refused:
        load_machine(path).flow()
    assert f"{path}:{line}: states ['cool: dance'] cannot be reached" in str(refused.value)
    done = CliRunner().invoke(app, ["flow", "check", f"induced:{path}"])
    assert done.exit_code == 2 and f"{path}:{line}: states ['cool: dance'] cannot be reached" in done.output


def test_not_a_machine_is_refused_saying_what_it_is(tmp_path: Path):
    (tmp_path / "m.json").write_text('{"graphs": []}')
    with pytest.raises(DefinitionError, match='not an induced machine'):
        load_machine(tmp_path / "m.json")
    (tmp_path / "m.json").write_text('{"graphs": [}')
    with pytest.raises(DefinitionError, match=r"m.json:1: not JSON"):
        load_machine(tmp_path / "m.json")
    with pytest.raises(DefinitionError, match=r"a .py or .json file"):
        load_machine(tmp_path / "m.yaml")
