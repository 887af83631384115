"""``mnemon/pack/*`` through a real language server: export to a file and as base64, inspect, import into
another folder (whose cached Sources see the new memory at once), and errors with stable codes."""

from __future__ import annotations

import asyncio
import base64
from pathlib import Path

import pytest

from tests.gitrepo import make_repo
from tests.helpers.packs import seed
from tests.lsp.conftest import Launcher, uri

INIT = {"storageScope": "workspace", "runtimeUserScope": "storage"}


@pytest.fixture
def folders(tmp_path: Path) -> tuple[Path, Path]:
    one, two = Path(tmp_path.resolve()) / "one", Path(tmp_path.resolve()) / "two"
    make_repo(one)
    make_repo(two)
    seed(one / ".mnemon")
    return one, two


async def test_export_inspect_import_between_two_folders(lsp: Launcher, folders, tmp_path):
    one, two = folders
    client = await lsp.start(folders=[one, two], init=INIT)
    before = await client.call("mnemon/spaces/list", {"workspace": uri(two)})
    assert before["spaces"] == []  # the folder's Spaces Source is built (and cached) before the import
    target = Path(tmp_path.resolve()) / "out" / "one.zip"
    target.parent.mkdir()
    exported = await client.call("mnemon/pack/export", {"workspace": uri(one), "path": str(target),
                                                        "includeUserProfile": True})
    assert exported["path"] == str(target) and exported["scope"] == "full" and target.stat().st_size == exported["bytes"]
    assert exported["userProfile"] == {"carried": 1, "leftOut": 0}
    inline = await client.call("mnemon/pack/export", {"workspace": uri(one), "packScope": "documents"})
    assert inline["components"] == ["documents"] and base64.b64decode(inline["base64"])[:2] == b"PK"
    inspected = await client.call("mnemon/pack/inspect", {"workspace": uri(two), "base64": inline["base64"]})
    assert [d["title"] for d in inspected["documents"]] == ["ADR 7", "Old plan"]
    armed = client.expect("mnemon/packImported")
    receipt = await client.call("mnemon/pack/import", {"workspace": uri(two), "path": str(target)})
    assert receipt["status"] == "committed" and receipt["runtime"]["added"] == 3
    note = await client.received(armed)
    assert note["workspace"] == uri(two) and note["receipt"]["documents"]["added"] == 2
    after = await client.call("mnemon/spaces/list", {"workspace": uri(two)})
    assert [s["name"] for s in after["spaces"]] == ["Project"]
    documents = await client.call("mnemon/documents/list", {"workspace": uri(two)})
    assert sorted(d["title"] for d in documents["documents"]) == ["ADR 7", "Old plan"]
    again = await client.call("mnemon/pack/import", {"workspace": uri(two), "path": str(target), "mode": "merge",
                                                     "components": ["runtime"]})
    assert {k: again["runtime"][k] for k in ("added", "skipped", "removed", "targets")} == {
        "added": 0, "skipped": 3, "removed": 0, "targets": {"user": {"added": 0, "skipped": 1, "removed": 0},
                                                           "memory": {"added": 0, "skipped": 2, "removed": 0}}}
    assert {k: again["runtime"]["userProfile"][k] for k in ("carried", "added", "skipped", "handling")} == {
        "carried": 1, "added": 0, "skipped": 1, "handling": "merged"}


async def test_pack_errors_carry_stable_codes_and_change_nothing(lsp: Launcher, folders):
    one, two = folders
    client = await lsp.start(folders=[one, two], init=INIT)
    error = await client.call_error("mnemon/pack/import", {"workspace": uri(two), "base64": "not base64!"})
    assert error.data["code"] == "invalid-input" and error.data["field"] == "base64"
    error = await client.call_error("mnemon/pack/import", {"workspace": uri(two),
                                                           "base64": base64.b64encode(b"PK\x03\x04").decode()})
    assert error.data["code"] == "pack-invalid" and error.data["field"] == "base64"  # the param it came in
    error = await client.call_error("mnemon/pack/import", {"workspace": uri(two), "path": "relative.zip"})
    assert error.data["code"] == "invalid-input" and error.data["field"] == "path"
    # another user's home is refused, never looked up (it read /root/x.zip)
    error = await client.call_error("mnemon/pack/import", {"workspace": uri(two), "path": "~root/x.zip"})
    assert (error.data["field"], error.data["value"]) == ("path", "~root/x.zip")
    assert error.data["rule"].startswith("must not start with ~name (another user's home)")
    error = await client.call_error("mnemon/pack/export", {"workspace": uri(one), "packScope": "everything"})
    assert error.data["code"] == "invalid-input" and error.data["field"] == "packScope"
    exported = await client.call("mnemon/pack/export", {"workspace": uri(one), "packScope": "documents"})
    # an empty component list is refused (it was read as "every component")
    error = await client.call_error("mnemon/pack/import", {"workspace": uri(two), "base64": exported["base64"],
                                                           "components": []})
    assert error.data["code"] == "invalid-input" and error.data["field"] == "components"
    assert not (two / ".mnemon").exists()


async def test_wake_and_a_remember_code_action_wait_for_a_pack_import(lsp: Launcher, folders):
    """A pack import holds the pack gate exclusive for its swap: the server's wake and its code-action writes
    wait for it (they would read or write a root being half replaced), then answer from the root that stays."""
    from mnemon_ls.ops.command_ids import REMEMBER_SELECTION
    from mnemon_ls import packgate as gate

    one, _two = folders
    client = await lsp.start(folders=[one], init=INIT)
    await client.call("mnemon/wake", {"workspace": uri(one)})  # the folder's host is built and warm
    with gate.hold([one / ".mnemon"], exclusive=True):  # what `pack import` holds during its swap
        wake = asyncio.ensure_future(client.call("mnemon/wake", {"workspace": uri(one)}))
        remember = asyncio.ensure_future(client.command(REMEMBER_SELECTION, {"uri": uri(one), "text": "held fact"}))
        done, _pending = await asyncio.wait({wake, remember}, timeout=1.0)
        assert not done  # both wait for the gate (before the fix both answered at once)
        assert "held fact" not in (one / ".mnemon" / "runtime" / "memories.json").read_text(encoding="utf-8")
    assert (await remember)["success"] is True
    assert "Run tests with pytest -n 2" in (await wake)["text"]
    assert "held fact" in (await client.call("mnemon/wake", {"workspace": uri(one)}))["text"]


async def test_import_dry_run_and_replace_user_profile_params(lsp: Launcher, folders, tmp_path):
    """``dryRun`` answers the receipt and changes nothing; ``replaceUserProfile`` and ``dryRun`` are strict
    booleans; a replace answers its backup and the command restoring it."""
    from tests.helpers import procs

    one, two = folders
    client = await lsp.start(folders=[one, two], init=INIT)
    target = Path(tmp_path.resolve()) / "one.zip"
    await client.call("mnemon/pack/export", {"workspace": uri(one), "path": str(target), "includeUserProfile": True})
    await client.call("mnemon/runtime/mutate", {"workspace": uri(two), "action": "add", "target": "user",
                                                "content": "Likes coffee"})
    before = procs.tree_snapshot(two / ".mnemon")
    for field, value in (("dryRun", "true"), ("replaceUserProfile", 1)):
        error = await client.call_error("mnemon/pack/import", {"workspace": uri(two), "path": str(target),
                                                               "mode": "replace", field: value})
        assert error.data["code"] == "invalid-input" and field in error.message, error.message
    would = await client.call("mnemon/pack/import", {"workspace": uri(two), "path": str(target), "mode": "replace",
                                                     "dryRun": True})
    assert procs.tree_snapshot(two / ".mnemon") == before
    assert (would["status"], would["dryRun"], would["backup"]["written"]) == ("dry-run", True, False)
    # USER.md of this root (runtimeUserScope storage): replaced with the root, no opt-in needed
    assert would["runtime"]["targets"]["user"] == {"added": 1, "skipped": 0, "removed": 1}
    assert would["runtime"]["userProfile"]["handling"] == "replaced"
    done = await client.call("mnemon/pack/import", {"workspace": uri(two), "path": str(target), "mode": "replace",
                                                    "replaceUserProfile": True})
    assert done["runtime"]["targets"] == would["runtime"]["targets"]
    backup = Path(done["backup"]["path"])
    assert backup.parent == two / ".mnemon" / "state" / "pack-backups" and backup.is_file()
    restore = done["backup"]["restore"]  # the test's MNEMON_DATA_DIR goes with it (a new shell lacks it)
    assert restore.startswith("MNEMON_DATA_DIR=") and f" mnemon-ls pack import {backup} --replace --component runtime " in restore


async def test_export_folder_is_the_exports_folder_and_an_export_there_is_written(lsp: Launcher, folders):
    """``mnemon/pack/exportFolder`` names the file the editors propose: in ``<global root>/state/pack-exports``
    (0700), never the workspace folder (a git work tree); an export to it is written (0600); a path inside
    a storage root is still refused."""
    import re
    import stat

    one, _two = folders
    client = await lsp.start(folders=[one], init=INIT)
    answer = await client.call("mnemon/pack/exportFolder", {"workspace": uri(one)})
    folder, path = Path(answer["folder"]), Path(answer["path"])
    assert folder.parts[-2:] == ("state", "pack-exports") and path.parent == folder
    assert re.fullmatch(r"mnemon-backup-\d{4}-\d\d-\d\d_\d\d-\d\d-\d\d-\d{3}\.zip", path.name), path.name
    assert one.resolve() not in path.resolve().parents
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700 and not path.exists()
    written = await client.call("mnemon/pack/export", {"workspace": uri(one), "path": str(path)})
    assert written["path"] == str(path) and stat.S_IMODE(path.stat().st_mode) == 0o600
    # inside the folder's storage root it is still refused, naming the field
    inside = one / ".mnemon" / "state" / "elsewhere.zip"
    error = await client.call_error("mnemon/pack/export", {"workspace": uri(one), "path": str(inside)})
    assert error.data["code"] == "invalid-input" and error.message.startswith("path: "), error.message
    assert not inside.exists()
