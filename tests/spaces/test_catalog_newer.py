"""A native catalog (``data/.dsh-memory-bodies.json``) written by a newer version is handled as the provider file
of a newer version is (tests/spaces/test_providers_file.py): never quarantined, rebuilt or rewritten (nor its
last-good copy), its stores never discovered again; its native spaces are not shown, every native operation
fails with ``format-too-new`` naming the file and its version, third-party configuration keeps working, and a
notice (recall, the wake cover, doctor) says so. Real files and stores; the command line as a subprocess."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from mnemon_ls.errors import FormatTooNew
from mnemon_ls.spaces import SpacesService

from tests.conftest import FrozenClock
from tests.gitrepo import make_repo
from tests.helpers.zygote import mnemon_command

#: ``version`` 2 of the catalog with a shape this version does not know.
NEWER = {"version": 2, "spaces": {"default": {"title": "Main", "on": True}},
         "bodies": [{"id": "default", "name": "Main", "description": "native notes", "active": True,
                     "createdAt": "2026-01-01T00:00:00.000Z", "updatedAt": "2026-01-01T00:00:00.000Z",
                     "tier": "cold"}]}


def _newer_catalog(root: Path) -> Path:
    path = root / "data" / ".dsh-memory-bodies.json"
    path.write_text(json.dumps(NEWER, indent=2) + "\n")
    os.chmod(path, 0o600)
    os.utime(path, ns=(1_600_000_000_000_000_000, 1_600_000_000_000_000_000))
    return path


def _files(root: Path) -> dict[str, tuple[bytes, int, int]]:
    """Every file under ``root/data`` (stores included) and the last-good copy: bytes, mtime, inode."""
    out = {}
    for path in sorted((root / "data").rglob("*")):
        if path.is_file():
            st = path.stat()
            out[str(path.relative_to(root))] = (path.read_bytes(), st.st_mtime_ns, st.st_ino)
    last_good = root / "state" / ".dsh-memory-bodies.last-good.json"
    out["last-good"] = (last_good.read_bytes(), last_good.stat().st_mtime_ns, last_good.stat().st_ino)
    return out


def test_a_newer_catalog_is_read_only_and_never_quarantined(root: Path, clock: FrozenClock) -> None:
    first = SpacesService(root, clock=clock)
    space = first.create_space("Main", "native notes", active=True).record.id
    item = first.remember("The build uses make", space_id=space).id
    first.close()
    path = _newer_catalog(root)
    before = _files(root)

    service = SpacesService(root, clock=clock)
    assert service.list_spaces() == []  # not guessed from a format this version does not know
    [notice] = service.notices()
    assert notice["quarantined"] is None and notice["file"] == str(path)
    assert notice["message"] == (
        f"{path} was written by a newer version of mnemon-ls (format version 2; this version reads 1); it is left "
        "unchanged and read-only here: the native Memory Spaces are not shown and cannot be created, changed or "
        "written to until mnemon-ls is upgraded")
    found = service.recall("build make").to_dict()  # the tier says why it has nothing
    assert found["results"] == [] and found["notices"] == [notice["message"]]
    assert notice["message"] in service.cover(2000).notices
    # the wake's block says it too (a long-lived host's cover): the spaces are unreadable, not absent
    assert service.cover(2000).text == f"MNEMON MEMORY SPACES\n{notice['message']}\n"
    calls = [lambda: service.create_space("Other", "more notes", active=True),
             lambda: service.remember("The tests use pytest"),
             lambda: service.remember("The tests use pytest", space_id=space),
             lambda: service.forget(space, item),
             lambda: service.update_space(space, name="Renamed"),
             lambda: service.activate(space), lambda: service.deactivate(space),
             lambda: service.delete_space(space),
             lambda: service.recall("build", spaces=[space]),
             lambda: service.registry.update_metadata_batch([{"id": space, "title": "T", "description": "D"}])]
    for call in calls:
        with pytest.raises(FormatTooNew) as refused:
            call()
        assert refused.value.code == "format-too-new"
        assert refused.value.data["file"] == str(path) and refused.value.data["version"] == 2
        assert refused.value.data["supported"] == "1"
        assert _files(root) == before
    # the provider plane is another file: it keeps working, and its writes leave the catalog as it is
    service.configure_provider("honcho", {"endpoint": "https://h.example/v1"})
    assert json.loads((root / "state" / "memory-providers.json").read_text())["services"]["honcho"]
    assert _files(root) == before
    assert not (root / "data" / ".quarantine").exists()
    service.close()
    assert _files(root) == before


def test_a_newer_catalog_over_the_command_line(tmp_path: Path) -> None:
    # a person's commands: list and recall say why, a write fails naming the file and version, doctor warns;
    # the pack import and export refuse too; nothing under the root changes
    make_repo(tmp_path / "ws")
    env = dict(os.environ) | {"HOME": str(tmp_path / "home"), "MNEMON_SEMANTIC": "off"}
    root = tmp_path / "root"

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([*mnemon_command(), *args, "--scope", "custom", "--data-dir", str(root)],
                              capture_output=True, text=True, env=env, cwd=tmp_path / "ws", timeout=60)

    assert cli("space", "create", "--name", "Main", "--description", "notes", "--active").returncode == 0
    assert cli("remember", "the deploy runs nightly at two").returncode == 0
    pack = tmp_path / "before.zip"
    assert cli("pack", "export", "-o", str(pack)).returncode == 0, "export"
    path = _newer_catalog(root)
    before = _files(root)
    why = f"{path} was written by a newer version of mnemon-ls (format version 2; this version reads 1)"

    listed = cli("space", "list")
    assert listed.returncode == 0 and why in listed.stderr
    recalled = cli("recall", "deploy nightly")
    assert recalled.returncode == 0 and why in recalled.stdout
    woke = cli("wake")  # a one-command process's cover (spaces/cover.py), as the session-start hook renders it
    assert woke.returncode == 0 and f"MNEMON MEMORY SPACES\n{why}" in woke.stdout, woke.stdout
    for args in (("space", "create", "--name", "Other", "--description", "more"),
                 ("remember", "the tests use pytest"), ("space", "update", "default", "--name", "Renamed"),
                 ("pack", "export", "-o", str(tmp_path / "after.zip")), ("pack", "import", str(pack)),
                 ("pack", "import", str(pack), "--replace")):
        refused = cli(*args, "--json")
        assert refused.returncode != 0, args
        error = json.loads(refused.stdout or refused.stderr)
        error = error.get("error", error)
        assert error["code"] == "format-too-new" and error["version"] == 2 and error["file"] == str(path), args
        assert _files(root) == before, args
    doctor = json.loads(cli("doctor", "--json").stdout)
    assert any(f["level"] == "warning" and why in f["message"] for f in doctor["findings"])
    assert _files(root) == before and not (root / "data" / ".quarantine").exists()


def test_a_long_lived_registry_stops_saying_newer_once_the_catalog_reads_again(root: Path, clock: FrozenClock) -> None:
    # an MCP or language server keeps one registry: the note about a newer catalog holds while it is newer
    service = SpacesService(root, clock=clock)
    space = service.create_space("Main", "native notes", active=True).record.id
    current = (root / "data" / ".dsh-memory-bodies.json").read_bytes()
    path = _newer_catalog(root)
    assert service.list_spaces() == [] and [p.kind for p in service.registry.notices] == ["newer"]
    assert service.registry.recall_notice_lines() == [service.notices()[0]["message"]]
    path.write_bytes(current)  # put back (the newer version was uninstalled, a backup restored)
    assert [s.record.id for s in service.list_spaces()] == [space]
    assert service.notices() == [] and service.registry.recall_notice_lines() == []
    assert "newer version" not in service.cover(2000).text
    service.close()


def _one_space(root: Path, clock: FrozenClock) -> Path:
    """Make one native space, ``Main`` (active), in ``root``; returns the catalog's path."""
    service = SpacesService(root, clock=clock)
    service.create_space("Main", "native notes", active=True)
    service.close()
    return root / "data" / ".dsh-memory-bodies.json"


def test_a_newer_last_good_copy_is_kept_when_the_catalog_beside_it_is_rebuilt(root: Path, clock: FrozenClock) -> None:
    catalog = _one_space(root, clock)
    last_good = root / "state" / ".dsh-memory-bodies.last-good.json"
    last_good.write_text(json.dumps(NEWER) + "\n")
    kept = last_good.read_bytes()
    catalog.write_text('{"broken')
    rebuilt = SpacesService(root, clock=clock)
    assert [s.record.id for s in rebuilt.list_spaces()] == ["default"]  # the store on disk, found again
    assert last_good.read_bytes() == kept  # a newer version's backup: not ours to replace
    rebuilt.close()


@pytest.mark.parametrize("version", [True, 1.0, "1"])
def test_a_catalog_version_that_is_not_the_integer_1_is_damage(root: Path, clock: FrozenClock, version) -> None:
    path = _one_space(root, clock)
    doc = json.loads(path.read_text())
    path.write_text(json.dumps(doc | {"version": version}))
    again = SpacesService(root, clock=clock)
    assert [s.record.id for s in again.list_spaces()] == ["default"]
    [notice] = again.registry.notices
    assert notice.kind != "newer" and notice.quarantined is not None
    assert json.loads(path.read_text())["version"] == 1
    again.close()


def test_a_huge_version_is_said_short(root: Path, clock: FrozenClock) -> None:
    path = _one_space(root, clock)
    path.write_text('{"version": ' + "9" * 4000 + ', "bodies": []}')
    again = SpacesService(root, clock=clock)
    assert again.list_spaces() == []
    [notice] = again.notices()
    assert f"format version {'9' * 32}...; this version reads 1" in notice["message"] and len(notice["message"]) < 600
    with pytest.raises(FormatTooNew) as refused:
        again.create_space("Other", "more notes")
    assert refused.value.data["version"] == "9" * 32 + "..."
    again.close()
