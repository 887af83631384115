"""Space names that look the same across scripts (Unicode UTS #39 confusable skeletons): Greek ``Ρ`` (U+03A1)
or Cyrillic ``Р`` (U+0420) for Latin ``P``, Cyrillic ``а``/``о`` for ``a``/``o``. NFKC does not fold them, so
they were distinct names; now a new name (``space create``, a rename, a discovered namespace) that looks like
one in use is refused naming that space, through the real CLI, and nothing on disk changes. A name wholly in
another script stays allowed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mnemon_ls.spaces import SpacesService
from mnemon_ls.spaces.naming import name_keys, skeleton
from tests.helpers import procs
from tests.helpers.provider_cli import cli

#: (a look-alike of "Project", what is in it)
LOOK_ALIKES = [("\u03a1roject", "Greek capital rho"), ("\u0420roject", "Cyrillic capital er"),
               ("Pr\u043eject", "Cyrillic small o"), ("\u0440roject", "Cyrillic small er"),
               ("PROJ\u0415CT", "Cyrillic capital ie")]


def test_the_skeleton_folds_letters_of_other_scripts_that_read_as_latin() -> None:
    assert skeleton("\u03c1") == skeleton("\u0440") == skeleton("p")
    assert skeleton("d\u0430t\u0430") == "data"
    assert skeleton("rnodern") == skeleton("modern")
    for other, _what in LOOK_ALIKES:
        assert name_keys(other) & name_keys("Project"), other
    for free in ("\u0395\u03bb\u03bb\u03b7\u03bd\u03b9\u03ba\u03ac", "\u9879\u76ee\u7b14\u8bb0", "Projects",
                 "Project 2", "\u041f\u0440\u043e\u0435\u043a\u0442"):  # Greek, Chinese, other Latin, Russian
        assert not name_keys(free) & name_keys("Project"), free


def test_cli_refuses_a_confusable_name_naming_the_space_and_changes_no_byte(tmp_path: Path) -> None:
    made = cli(tmp_path, "space", "create", "--name", "Project", "--description", "facts", "--json")
    assert made.returncode == 0, made.stderr
    project_id = json.loads(made.stdout)["id"]
    notes = cli(tmp_path, "space", "create", "--name", "Notes", "--description", "scratch", "--json")
    assert notes.returncode == 0, notes.stderr
    notes_id = json.loads(notes.stdout)["id"]
    root = tmp_path / "data"
    before = procs.tree_snapshot(root)
    rule = (f"looks the same as the name of space Project ({project_id}) (letters of another script that read as "
            "these, such as Cyrillic or Greek for Latin, compare by their Unicode confusable skeleton, UTS #39; "
            "choose another name)")
    for other, what in LOOK_ALIKES[:3]:
        created = cli(tmp_path, "space", "create", "--name", other, "--description", "a twin")
        assert created.returncode == 2, (what, created.stdout)
        assert created.stderr == f"mnemon-ls: error: --name: {rule}\n", what
        renamed = cli(tmp_path, "space", "update", notes_id, "--name", other)
        assert renamed.returncode == 2, (what, renamed.stdout)
        assert renamed.stderr == f"mnemon-ls: error: --name: {rule}\n", what
    assert procs.tree_snapshot(root) == before
    # a name wholly in another script is a name of its own
    for free in ("\u0395\u03bb\u03bb\u03b7\u03bd\u03b9\u03ba\u03ac", "\u9879\u76ee\u7b14\u8bb0"):
        done = cli(tmp_path, "space", "create", "--name", free, "--description", "another script")
        assert done.returncode == 0, done.stderr


def test_a_confusable_name_is_refused_against_an_id_and_on_rename(tmp_path: Path) -> None:
    service = SpacesService(tmp_path / "root")
    first = service.create_space("Work", "decisions").record
    assert first.id == "default"
    other = service.create_space("Other", "x").record
    before = procs.tree_snapshot(tmp_path / "root")
    with pytest.raises(Exception) as an_id:
        service.create_space("d\u0435f\u0430ult", "Cyrillic e and a")  # looks like the id "default"
    assert an_id.value.data["spaceId"] == "default"
    assert an_id.value.rule.startswith("looks the same as the id of space Work (default)")
    with pytest.raises(Exception) as renamed:
        service.update_space(other.id, name="W\u043erk")
    assert renamed.value.data["spaceId"] == "default"
    assert procs.tree_snapshot(tmp_path / "root") == before
    assert service.update_space(other.id, name="Other notes").record.name == "Other notes"
    service.close()


def test_a_discovered_namespace_that_looks_like_a_space_gets_a_numbered_name(tmp_path: Path) -> None:
    service = SpacesService(tmp_path / "root")
    service.create_space("Project", "native facts")
    service.configure_provider("honcho", {"endpoint": "https://honcho.example.test/v1"}, enabled=True)
    renamed: list[dict] = []
    [space] = service.registry.provider_plane.sync_namespaces("honcho", [{"externalId": "ws-1", "name": "\u0420roject"}],
                                               renamed=renamed)
    assert space.name == "\u0420roject (2)"
    [change] = renamed
    assert change["wantedName"] == "\u0420roject" and change["takenBy"][0]["spaceId"] == "default"
    service.close()
