"""Naming a Memory Space (:mod:`mnemon_ls.spaces.naming`) through the one service every surface calls: an
id or a unique name, names unique ignoring case, an unknown reference answered with close matches, a
registry holding one name twice answered with ``ambiguous-match`` (never a guess). Real SQLite stores."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mnemon_ls.errors import AmbiguousMatch, InvalidInput
from mnemon_ls.spaces import SpacesService

from .conftest import FrozenClock
from tests.helpers import procs


@pytest.fixture
def service(root: Path, clock: FrozenClock) -> SpacesService:
    svc = SpacesService(root, clock=clock)
    yield svc
    svc.close()


def test_every_space_operation_takes_an_id_or_a_unique_name(service: SpacesService) -> None:
    work = service.create_space("Work Notes", "decisions", active=True).record
    other = service.create_space("Personal", "preferences").record
    assert work.id == "default"
    assert service.get_space("  work   NOTES ").record.id == "default"  # trimmed, white space collapsed, any case
    assert service.activate("personal").record.id == other.id
    receipt = service.remember("Ship on Thursdays", space_id="PERSONAL")
    assert (receipt.status, receipt.space_id) == ("committed", other.id)
    assert [r["spaceId"] for r in service.recall("ship", spaces=["personal"]).to_dict()["results"]] == [other.id]
    assert service.space_status("Personal")["space"]["id"] == other.id
    assert service.related("personal", receipt.id)["spaceId"] == other.id
    assert service.update_space("personal", description="what the user prefers").record.description == \
        "what the user prefers"
    assert service.forget("Personal", receipt.id).space_id == other.id
    merged = service.merge(["personal"], "work notes")
    assert (merged["targetId"], [s["spaceId"] for s in merged["sources"]]) == ("default", [other.id])
    assert service.delete_space("personal")["deleted"] == other.id


def test_names_are_unique_ignoring_case_and_may_not_be_another_spaces_id(service: SpacesService, root: Path) -> None:
    service.create_space("Work", "decisions", active=True)
    notes = service.create_space("Notes", "scratch").record
    before = procs.tree_snapshot(root)
    with pytest.raises(InvalidInput) as same:
        service.create_space(" WORK ", "again")
    assert same.value.field == "name"
    assert same.value.rule.startswith("is already the name of space Work (default) (space names are unique")
    with pytest.raises(InvalidInput) as an_id:
        service.create_space("Default", "looks like the first space's id")
    assert an_id.value.rule.startswith("is already the id of space Work (default)")
    with pytest.raises(InvalidInput) as rename:
        service.update_space(notes.id, name="work")
    assert rename.value.field == "name" and rename.value.data["spaceId"] == "default"
    assert procs.tree_snapshot(root) == before  # refused: not a byte changed, no store left behind
    assert service.update_space(notes.id, name="NOTES").record.name == "NOTES"  # its own name in another case


def test_an_unknown_space_gets_close_matches_as_suggestions(service: SpacesService) -> None:
    service.create_space("Work", "decisions", active=True)
    notes = service.create_space("Notes", "scratch", active=True).record
    for typed, expected in (("Default", ["default"]), ("defualt", ["default"]), ("nots", [notes.id]),
                            (notes.id[:8], [notes.id])):
        with pytest.raises(InvalidInput) as unknown:
            service.space_status(typed)
        assert unknown.value.field == "spaceId" and unknown.value.data["suggestions"] == expected, typed
        assert unknown.value.rule.startswith("is not a registered space id or name; did you mean ")
    with pytest.raises(InvalidInput) as unknown:
        service.recall("x", spaces=["Defualt"])
    assert unknown.value.field == "spaces[0]"
    assert unknown.value.rule == "is not a registered space id or name; did you mean Work (default)?"
    with pytest.raises(InvalidInput) as nothing_close:
        service.activate("zzzz")
    assert nothing_close.value.to_dict() == {"code": "invalid-input", "message": "spaceId: is not a registered "
                                             "space id or name", "field": "spaceId",
                                             "rule": "is not a registered space id or name", "spaceId": "zzzz"}


def test_a_name_held_twice_by_an_older_registry_is_ambiguous_never_a_guess(service: SpacesService, root: Path) -> None:
    first = service.create_space("Work", "decisions", active=True).record
    second = service.create_space("Later", "more").record
    catalog = root / "data" / ".dsh-memory-bodies.json"
    document = json.loads(catalog.read_text("utf-8"))
    document["bodies"][1]["name"] = "work"  # written by another tool, or before names were unique
    catalog.write_text(json.dumps(document, indent=2) + "\n", "utf-8")
    with pytest.raises(AmbiguousMatch) as twice:
        service.activate("WORK")
    assert twice.value.data == {"field": "spaceId", "spaceIds": [first.id, second.id]}
    assert "give the id" in twice.value.message
    assert service.activate(second.id).record.active is True  # the ids still name each one
