"""Importing the same pack again (merge) into a root whose spaces came from it, and were only read since,
is "already here" and changes nothing; a pack of two spaces reports two outcomes, never three."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tests.helpers import procs
from tests.helpers.packs import items_of
from tests.helpers.zygote import mnemon_command


def _cli(cwd: Path, home: Path, *args: str) -> subprocess.CompletedProcess:
    result = subprocess.run([*mnemon_command(), *args], cwd=cwd, capture_output=True, text=True,
                            timeout=procs.WAIT_SECONDS, env=procs.child_env(HOME=str(home), MNEMON_SEMANTIC="off"))
    assert "Traceback" not in result.stderr
    assert result.returncode == 0, (args, result.stdout, result.stderr)
    return result


def _project(path: Path) -> Path:
    path.mkdir()
    subprocess.run(["git", "init", "-q", str(path)], check=True, timeout=procs.WAIT_SECONDS)
    return path


def _setup(tmp_path: Path) -> tuple[Path, Path, Path, Path]:
    """Project ``a`` with spaces Project (default, active, one item) and Notes, exported to a pack, and
    a fresh project ``b`` that imported it; returns (home, b, pack, b's storage root)."""
    home = tmp_path / "home"
    a, b = _project(tmp_path / "a"), _project(tmp_path / "b")
    _cli(a, home, "space", "create", "--name", "Project", "--description", "this project", "--active")
    _cli(a, home, "remember", "alpha fact one")
    _cli(a, home, "space", "create", "--name", "Notes", "--description", "notes")
    pack = tmp_path / "p.mnemonpack"
    _cli(a, home, "pack", "export", "-o", str(pack))
    first = _cli(b, home, "pack", "import", str(pack))
    assert "  Memory Spaces: 2 added, 0 already here\n" in first.stdout, first.stdout
    workspaces = home / ".mnemon" / "workspaces"
    [root] = [p for p in workspaces.iterdir() if str(p) in first.stdout]  # "imported ... into <root>"
    return home, b, pack, root


def _snapshot(root: Path) -> dict[str, object]:
    catalog = (root / "data" / ".dsh-memory-bodies.json").read_bytes()
    ids = [body["id"] for body in json.loads(catalog)["bodies"]]
    return {"catalog": catalog, "dirs": sorted(p.name for p in (root / "data").iterdir() if p.is_dir()),
            "items": {i: items_of(root / "data" / i / "mnemon.db") for i in ids},
            "active": (root / "active").read_bytes() if (root / "active").exists() else None}


def test_reimporting_a_pack_after_reads_is_already_here_and_changes_nothing(tmp_path: Path) -> None:
    home, b, pack, root = _setup(tmp_path)
    for query in ("x", "alpha", "alpha fact", "x"):
        _cli(b, home, "recall", query)
    _cli(b, home, "doctor")
    before = _snapshot(root)
    again = _cli(b, home, "pack", "import", str(pack))
    assert "  Memory Spaces: 0 added, 2 already here\n" in again.stdout, again.stdout
    assert "under a new id" not in again.stdout
    assert _snapshot(root) == before
    listed = _cli(b, home, "space", "list").stdout
    assert listed.count("Project") == 1 and listed.count("Notes") == 1, listed
    assert "Remembered in Project" in _cli(b, home, "remember", "beta fact two").stdout


def test_a_changed_space_is_one_outcome_under_a_new_id(tmp_path: Path) -> None:
    home, b, pack, root = _setup(tmp_path)
    _cli(b, home, "recall", "alpha")
    _cli(b, home, "remember", "written here only")
    again = _cli(b, home, "pack", "import", str(pack), "--json")
    spaces = json.loads(again.stdout)["spaces"]
    assert (spaces["skipped"], [r["from"] for r in spaces["renamed"]]) == (1, ["default"])
    text = _cli(b, home, "pack", "import", str(pack)).stdout
    line = next(l for l in text.splitlines() if l.startswith("  Memory Spaces:"))
    # two spaces in the pack: the renamed copy of default again, Notes already here -- two outcomes
    assert line.startswith("  Memory Spaces: 0 added, 1 already here, 1 under a new id (default -> "), text


def test_an_incoming_space_whose_id_is_taken_in_another_case_or_as_a_name_gets_a_new_id(tmp_path: Path) -> None:
    """Space ids match ignoring case and no id is another space's name: a pack space ``default`` arriving in a
    root that has a store ``DEFAULT``, or a space *named* ``default``, comes under a new id, so the id or name
    the user types keeps naming their own space."""
    from mnemon_ls import packs
    from mnemon_ls.spaces.providers.native import NativeProvider
    from tests.helpers.packs import host_on, seed

    seed(tmp_path / "a")
    source = host_on(tmp_path / "a")
    try:
        data = packs.export_pack(source, "memory-spaces").data
    finally:
        source.close()
    for name, make in (("upper", "store DEFAULT"), ("named", "space named default")):
        root = tmp_path / name
        if make == "store DEFAULT":
            store = NativeProvider(root / "data" / "DEFAULT" / "mnemon.db", space_id="DEFAULT", create=True)
        else:
            store = NativeProvider(root / "data" / "x1" / "mnemon.db", space_id="x1", create=True)
        store.count()
        store.close()
        host = host_on(root)
        try:
            if make == "space named default":
                mine = host.spaces.create_space("default", "mine, by that name").record
                assert mine.id != "default"
            receipt = host.import_pack(data)
            [renamed] = receipt["spaces"]["renamed"]
            assert renamed["from"] == "default" and renamed["to"] != "default", receipt
            ids = [v.record.id.casefold() for v in host.spaces.list_spaces()]
            names = [v.record.name.casefold() for v in host.spaces.list_spaces()]
            assert "default" not in ids or make == "store DEFAULT", ids
            assert len(set(ids)) == len(ids)
            expected = "DEFAULT" if make == "store DEFAULT" else mine.id
            assert host.spaces.get_space("default").record.id == expected, (make, ids, names)
        finally:
            host.close()
