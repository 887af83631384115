"""Findings of a new-user pass over packs and spaces: an imported space whose name is taken gets a unique
name and never changes which spaces are active; doctor names duplicated space names; export says how
many third-party spaces it left out; replace-mode counts say what happened; a re-enabled provider's
spaces come back as they were; ``space status`` works on an inactive space."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tests.helpers import procs
from tests.helpers.packs import host_on, seed
from tests.helpers.zygote import mnemon_command


def _cli(tmp_path: Path, root: Path, *args: str, json_out: bool = False) -> subprocess.CompletedProcess:
    argv = [*mnemon_command(), *args, "--scope", "custom", "--data-dir", str(root),
            "--runtime-user-scope", "storage", *(["--json"] if json_out else [])]
    result = subprocess.run(argv, cwd=tmp_path, capture_output=True, text=True, timeout=procs.WAIT_SECONDS,
                            env=procs.child_env(HOME=str(tmp_path / "home"), MNEMON_SEMANTIC="off"))
    assert "Traceback" not in result.stderr
    return result


def _pack_of_seeded_root(tmp_path: Path) -> Path:
    source = tmp_path / "source"
    seed(source)  # space "Project", active, 2 items
    pack = tmp_path / "p.zip"
    exported = _cli(tmp_path, source, "pack", "export", "--pack-scope", "memory-spaces", "-o", str(pack))
    assert exported.returncode == 0, exported.stderr
    return pack


def test_a_merged_space_whose_name_is_taken_gets_a_unique_name_and_arrives_inactive(tmp_path: Path) -> None:
    pack = _pack_of_seeded_root(tmp_path)
    root = tmp_path / "root"
    host = host_on(root)
    try:
        assert host.spaces.create_space("project", "mine", active=True).record.id == "default"
    finally:
        host.close()

    imported = _cli(tmp_path, root, "pack", "import", str(pack))
    assert imported.returncode == 0, imported.stderr
    assert "named 'Project (2)' because 'Project' is taken" in imported.stdout
    assert "1 imported space arrived inactive" in imported.stdout
    catalog = json.loads((root / "data" / ".dsh-memory-bodies.json").read_bytes())["bodies"]
    assert sorted((b["name"], b["active"]) for b in catalog) == [("Project (2)", False), ("project", True)]

    remembered = _cli(tmp_path, root, "remember", "x is y")  # one active space: no --space needed
    assert remembered.returncode == 0, remembered.stderr
    recalled = _cli(tmp_path, root, "recall", "x", "--space", "Project", json_out=True)
    assert recalled.returncode == 0, recalled.stderr


def test_the_import_receipt_names_the_changes(tmp_path: Path) -> None:
    pack = _pack_of_seeded_root(tmp_path)
    root = tmp_path / "root"
    host = host_on(root)
    try:
        host.spaces.create_space("PROJECT", "mine", active=True)
    finally:
        host.close()
    receipt = json.loads(_cli(tmp_path, root, "pack", "import", str(pack), json_out=True).stdout)
    spaces = receipt["spaces"]
    new_id = next(b["id"] for b in json.loads((root / "data" / ".dsh-memory-bodies.json").read_bytes())["bodies"]
                  if b["name"] == "Project (2)")
    assert (spaces["nameChanged"], spaces["arrivedInactive"], spaces["activeSpaces"]) == (
        [{"spaceId": new_id, "from": "Project", "to": "Project (2)"}], [new_id], 1)


def _rename_by_hand(root: Path, space_id: str, name: str) -> None:
    """Rename space ``space_id`` in the registry file of ``root`` directly, bypassing the naming rule."""
    catalog_path = root / "data" / ".dsh-memory-bodies.json"
    catalog = json.loads(catalog_path.read_bytes())
    for body in catalog["bodies"]:
        if body["id"] == space_id:
            body["name"] = name
    catalog_path.write_text(json.dumps(catalog), encoding="utf-8")


def test_doctor_reports_two_spaces_sharing_a_name_ignoring_case(tmp_path: Path) -> None:
    root = tmp_path / "root"
    host = host_on(root)
    try:
        host.spaces.create_space("project", "mine", active=True)
        other = host.spaces.create_space("Other", "theirs", active=False).record.id
    finally:
        host.close()
    _rename_by_hand(root, other, "Project")  # an older registry, written before the uniqueness rule
    doctor = _cli(tmp_path, root, "doctor")
    assert doctor.returncode == 1, doctor.stdout
    assert f"[PROBLEM] spaces: 2 spaces share the name 'project' ignoring case (ids default, {other})" in doctor.stdout
    assert f"-> rename all but one: `mnemon-ls space update {other} --name NEW`" in doctor.stdout


def test_replace_mode_says_what_took_the_place_of_what(tmp_path: Path) -> None:
    source = tmp_path / "source"
    seed(source)
    pack = tmp_path / "p.zip"
    assert _cli(tmp_path, source, "pack", "export", "--pack-scope", "documents", "-o", str(pack)).returncode == 0
    root = tmp_path / "root"
    host = host_on(root)
    try:
        for n in range(3):
            host.documents.create(f"Local {n}", f"body {n}\n")
    finally:
        host.close()
    replaced = _cli(tmp_path, root, "pack", "import", str(pack), "--replace", "--component", "documents")
    assert replaced.returncode == 0, replaced.stderr
    assert "  documents: 2 added, 0 already here, 3 removed\n" in replaced.stdout + "\n", replaced.stdout
    receipt = json.loads(_cli(tmp_path, root, "pack", "import", str(pack), "--replace", "--component", "documents",
                              json_out=True).stdout)
    # the same two documents again: they are here already and stay; nothing else was here to remove
    assert receipt["documents"] == {"added": 0, "skipped": 2, "renamed": [], "removed": 0, "pendingHandEdits": []}


def test_space_status_inspects_an_inactive_space(tmp_path: Path) -> None:
    root = tmp_path / "root"
    host = host_on(root)
    try:
        space = host.spaces.create_space("Dormant", "not read by default", active=False).record.id
        host.spaces.remember("a fact kept while inactive", space_id=space)
        host.spaces.deactivate(space)
    finally:
        host.close()
    status = _cli(tmp_path, root, "space", "status", "Dormant", json_out=True)
    assert status.returncode == 0, status.stderr
    doc = json.loads(status.stdout)
    assert (doc["space"]["id"], doc["space"]["active"]) == (space, False)
    recalled = _cli(tmp_path, root, "recall", "fact", "--space", "Dormant")  # reads still refuse it
    assert recalled.returncode != 0 and "is not active for reading" in recalled.stderr


def test_a_write_to_an_inactive_space_says_it_activated_it(tmp_path: Path) -> None:
    """Reference 6.3 / case 70: a committed write to an inactive space activates it; the text says so."""
    root = tmp_path / "root"
    host = host_on(root)
    try:
        host.spaces.create_space("Dormant", "not read by default", active=False)
    finally:
        host.close()
    first = _cli(tmp_path, root, "remember", "a fact for later", "--space", "Dormant")
    assert first.returncode == 0, first.stderr
    assert first.stdout.splitlines()[1] == (
        "Dormant was inactive: this write made it active. It is the only active space, so `mnemon-ls remember` "
        "without --space now writes into it; `mnemon-ls space deactivate Dormant` makes it inactive again.")
    again = _cli(tmp_path, root, "remember", "another fact", "--space", "Dormant")
    assert again.returncode == 0 and "inactive" not in again.stdout, again.stdout


def test_replace_gives_a_pack_holding_one_name_twice_unique_names(tmp_path: Path) -> None:
    source = tmp_path / "source"
    host = host_on(source)
    try:
        host.spaces.create_space("Notes", "one", active=True)
        other = host.spaces.create_space("Other", "two", active=False).record.id
    finally:
        host.close()
    _rename_by_hand(source, other, "NOTES")  # a registry older than the rule: one name twice
    pack = tmp_path / "p.zip"
    assert _cli(tmp_path, source, "pack", "export", "--pack-scope", "memory-spaces", "-o", str(pack)).returncode == 0
    root = tmp_path / "root"
    seed(root)
    receipt = json.loads(_cli(tmp_path, root, "pack", "import", str(pack), "--replace", json_out=True).stdout)
    assert receipt["spaces"]["nameChanged"] == [{"spaceId": other, "from": "NOTES", "to": "NOTES (2)"}]
    names = sorted(b["name"] for b in json.loads((root / "data" / ".dsh-memory-bodies.json").read_bytes())["bodies"])
    assert names == ["NOTES (2)", "Notes"]


def test_a_merged_space_whose_name_looks_like_a_taken_one_gets_a_unique_name(tmp_path: Path) -> None:
    """A pack space named with a Cyrillic ``Р`` (U+0420) where the root has Latin ``Project`` reads the same:
    it arrives numbered, as ``space create`` would refuse the name (naming.name_keys, UTS #39 skeleton)."""
    source = tmp_path / "source"
    host = host_on(source)
    try:
        host.spaces.create_space("\u0420roject", "cyrillic P", active=True)
    finally:
        host.close()
    pack = tmp_path / "p.zip"
    assert _cli(tmp_path, source, "pack", "export", "--pack-scope", "memory-spaces", "-o", str(pack)).returncode == 0
    root = tmp_path / "root"
    seed(root)  # space "Project"
    receipt = json.loads(_cli(tmp_path, root, "pack", "import", str(pack), json_out=True).stdout)
    changed = receipt["spaces"]["nameChanged"]
    assert [(c["from"], c["to"]) for c in changed] == [("\u0420roject", "\u0420roject (2)")]
    names = sorted(b["name"] for b in json.loads((root / "data" / ".dsh-memory-bodies.json").read_bytes())["bodies"])
    assert names == ["Project", "\u0420roject (2)"]
