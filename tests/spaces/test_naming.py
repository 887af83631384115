"""Naming a Memory Space (:mod:`mnemon_ls.spaces.naming`) through the one service every surface calls: an
id or a unique name, names unique ignoring case, an unknown reference answered with close matches, a
registry holding one name twice answered with ``ambiguous-match`` (never a guess). Real SQLite stores."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mnemon_ls.errors import AmbiguousMatch, InvalidInput
from mnemon_ls.spaces import SpacesService

from tests.conftest import FrozenClock
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
    for typed, expected in (("defualt", ["default"]), ("nots", [notes.id]), (notes.id[:8], [notes.id])):
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


INVISIBLE = ("\u200b", "\u200c", "\u200d", "\u2060", "\ufeff")


def test_names_that_look_alike_are_one_name_and_invisible_characters_are_refused(service: SpacesService,
                                                                                 root: Path) -> None:
    """Fullwidth letters are the same name as their ASCII look-alikes (NFKC casefold), and a name holding a
    zero-width or other format character (Unicode category Cf) is refused naming the field and the rule."""
    work = service.create_space("work", "decisions", active=True).record
    notes = service.create_space("Notes", "scratch").record
    before = procs.tree_snapshot(root)
    for look_alike in ("ｗｏｒｋ", "ＷＯＲＫ", "Ｗork", "ｄｅｆａｕｌｔ"):
        with pytest.raises(InvalidInput) as same:
            service.create_space(look_alike, "a second work")
        assert same.value.field == "name" and same.value.data["spaceId"] == work.id, look_alike
        with pytest.raises(InvalidInput) as renamed:
            service.update_space(notes.id, name=look_alike)
        assert renamed.value.field == "name" and renamed.value.data["spaceId"] == work.id, look_alike
    for mark in INVISIBLE:
        for call in (lambda: service.create_space(f"wo{mark}rk", "hidden twin"),
                     lambda: service.create_space(f"Fresh{mark}", "a new name with a hidden character"),
                     lambda: service.update_space(notes.id, name=f"No{mark}tes")):
            with pytest.raises(InvalidInput) as hidden:
                call()
            assert hidden.value.field == "name"
            assert hidden.value.rule.startswith("must not contain invisible format characters such as zero-width "
                                                f"spaces (found U+{ord(mark):04X} ")
            assert "Unicode category Cf" in hidden.value.rule
    with pytest.raises(InvalidInput) as control:
        service.create_space("bell\x07", "a control character")
    assert control.value.rule == "must not contain control characters (found U+0007)"
    assert procs.tree_snapshot(root) == before  # refused: not a byte changed
    # the names are stored NFKC-normalised, and a look-alike names the space
    fresh = service.create_space("Ｔｅａｍ ﬁles", "fullwidth and a ligature").record
    assert fresh.name == "Team files"
    catalog = json.loads((root / "data" / ".dsh-memory-bodies.json").read_text("utf-8"))
    assert [b["name"] for b in catalog["bodies"]] == ["work", "Notes", "Team files"]
    assert service.get_space("ｔｅａｍ　ＦＩＬＥＳ").record.id == fresh.id  # U+3000 ideographic space too
    assert service.remember("Reviews happen on Fridays", space_id="ｗｏｒｋ").space_id == work.id


def test_a_hidden_character_written_by_another_tool_still_collides(service: SpacesService, root: Path) -> None:
    """A registry written before this rule (or by another tool) may hold a zero-width character in a name: that
    name still equals its visible form, so naming it works and a visible twin is refused."""
    service.create_space("Later", "placeholder", active=True)
    catalog = root / "data" / ".dsh-memory-bodies.json"
    document = json.loads(catalog.read_text("utf-8"))
    document["bodies"][0]["name"] = "wo\u200brk"
    catalog.write_text(json.dumps(document, indent=2) + "\n", "utf-8")
    assert service.space_status("work")["space"]["id"] == "default"
    before = procs.tree_snapshot(root)
    with pytest.raises(InvalidInput) as twin:
        service.create_space("Work", "the visible twin")
    assert twin.value.data["spaceId"] == "default"
    assert procs.tree_snapshot(root) == before


def test_a_space_id_matches_ignoring_case_and_two_ids_that_differ_only_in_case_are_ambiguous(
        service: SpacesService, root: Path) -> None:
    service.create_space("Work", "decisions", active=True)
    notes = service.create_space("Notes", "scratch", active=True).record
    upper = notes.id.upper()
    assert upper != notes.id
    assert service.space_status(upper)["space"]["id"] == notes.id
    assert service.get_space(f"  {upper} ").record.id == notes.id
    receipt = service.remember("Ship on Thursdays", space_id=upper)
    assert (receipt.status, receipt.space_id) == ("committed", notes.id)
    assert [r["spaceId"] for r in service.recall("thursdays", spaces=[upper]).to_dict()["results"]] == [notes.id]
    assert service.related(upper, receipt.id)["spaceId"] == notes.id
    assert service.forget(upper, receipt.id).space_id == notes.id
    assert service.deactivate("DEFAULT").record.id == "default"
    assert service.activate("Default").record.active is True
    # Two store directories whose names differ only in case (a case-sensitive file system): each is named
    # by its exact id; any other spelling is ambiguous, never a guess.
    for name in ("Team", "team"):
        from mnemon_ls.spaces.providers.native import NativeProvider

        store = NativeProvider(root / "data" / name / "mnemon.db", space_id=name, create=True)
        store.count()
        store.close()
    assert {v.record.id for v in service.list_spaces()} >= {"Team", "team"}
    assert service.space_status("Team")["space"]["id"] == "Team"
    assert service.space_status("team")["space"]["id"] == "team"
    before = procs.tree_snapshot(root)
    with pytest.raises(AmbiguousMatch) as twice:
        service.remember("Which one?", space_id="TEAM")
    assert twice.value.data == {"field": "spaceId", "spaceIds": ["Team", "team"]}
    assert "ignoring case" in twice.value.message
    assert procs.tree_snapshot(root) == before
    from mnemon_ls.spaces.naming import diagnose_names

    [finding] = [f for f in diagnose_names(service.state().all) if "differ only in case" in f.message]
    assert finding.message.startswith("2 spaces have ids that differ only in case (Team, team)")


def test_a_numbered_name_fits_the_name_limit() -> None:
    from mnemon_ls.spaces.model import MAX_NAME_CHARS, validate_name
    from mnemon_ls.spaces.naming import name_key, unique_name

    long = "b" * MAX_NAME_CHARS
    second = unique_name({name_key(long)}, long)
    assert second == "b" * 96 + " (2)" and len(second) == MAX_NAME_CHARS and validate_name(second) == second
    taken = {name_key(long), name_key(second)}
    assert unique_name(taken, long) == "b" * 96 + " (3)"
    assert unique_name({name_key("Team")}, "Team") == "Team (2)"  # short names unchanged
    spaced = "a" * 95 + "   x"  # the cut never leaves a trailing space before the suffix
    assert unique_name({name_key(spaced)}, spaced) == "a" * 95 + " (2)"



def test_a_reference_longer_than_any_id_or_name_is_refused_as_such(service: SpacesService) -> None:
    """A 10 MB space id over MCP took ~6 s to refuse (the "did you mean" comparison ran over it) and was called
    "not a registered space id" (h-attack49): it is refused by its length now, before any comparison. The bound is
    on the comparison form, so a long reference that still names a space (zero-width padding) resolves."""
    notes = service.create_space("Notes", "scratch", active=True).record
    for reference in ("x" * 10_000_000, "n" * 513):
        with pytest.raises(InvalidInput) as long:
            service.space_status(reference)
        assert long.value.field == "spaceId"
        assert long.value.rule == ("names no space: a space id has at most 128 characters and a name at most 100 "
                                   f"(got {len(reference)} characters)")
        assert long.value.data["spaceId"] == reference[:80] + "..."
    padded = "\u200b" * 600 + "Notes"  # its comparison form is "notes"
    assert service.space_status(padded)["space"]["id"] == notes.id
