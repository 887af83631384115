"""The user profile (USER.md entries, facts about the person) stays on this machine unless the pack is asked to
carry it (docs/memory.md: "USER.md ... never leaves your machine"); inspect and import say when a pack carries one."""

from __future__ import annotations

import json

from mnemon_ls import packs
from mnemon_ls.cli import full as cli
from tests.helpers.packs import host_on, seed, unpack


def test_export_leaves_the_user_profile_out_unless_asked(tmp_path):
    seed(tmp_path / "a")
    host = host_on(tmp_path / "a")
    try:
        default = host.export_pack("full")
        carried = host.export_pack("runtime", include_user_profile=True)
    finally:
        host.close()
    files = unpack(default.data)
    entries = json.loads(files["payload/runtime/memories.json"])["entries"]
    assert sorted(e["target"] for e in entries) == ["memory", "memory"]
    assert b"Prefers short answers" not in b"".join(files.values())
    assert default.to_dict()["userProfile"] == {"carried": 0, "leftOut": 1}
    assert packs.inspect_pack(default.data)["userProfile"] == 0
    assert carried.to_dict()["userProfile"] == {"carried": 1, "leftOut": 0}
    assert "Prefers short answers" in unpack(carried.data)["payload/runtime/USER.md"].decode()


def test_cli_export_inspect_and_import_say_whether_a_pack_carries_a_user_profile(tmp_path, capsys):
    seed(tmp_path / "a")
    flags = ["--runtime-user-scope", "storage"]
    left_out, carried = tmp_path / "left-out.zip", tmp_path / "carried.zip"
    assert cli.main(["pack", "export", "--pack-scope", "runtime", "-o", str(left_out),
                     "--data-dir", str(tmp_path / "a"), *flags]) == 0
    assert "USER.md: 1 entry about you left out (--include-user-profile carries them)" in capsys.readouterr().out
    assert cli.main(["pack", "export", "--pack-scope", "runtime", "--include-user-profile", "-o", str(carried),
                     "--data-dir", str(tmp_path / "a"), *flags]) == 0
    assert "USER.md: carries 1 entry about you (your user profile)" in capsys.readouterr().out

    assert cli.main(["pack", "inspect", str(left_out), "--data-dir", str(tmp_path / "b"), *flags]) == 0
    assert "about a person" not in capsys.readouterr().out
    assert cli.main(["pack", "inspect", str(carried), "--data-dir", str(tmp_path / "b"), *flags]) == 0
    assert ("USER.md: carries 1 entry about a person (a user profile); importing it adds them to your USER.md"
            in capsys.readouterr().out)
    assert cli.main(["pack", "import", str(carried), "--data-dir", str(tmp_path / "b"), *flags]) == 0
    assert "USER.md: the pack carried 1 user-profile entry, 1 added" in capsys.readouterr().out
    host = host_on(tmp_path / "b")
    try:
        assert [e.content for e in host.runtime.read().user] == ["Prefers short answers"]
    finally:
        host.close()


def test_replace_with_a_pack_that_carries_no_user_profile_keeps_the_users_profile(tmp_path):
    """`pack import --replace` of a default pack (USER.md entries left out) replaces MEMORY.md and keeps the
    target's USER.md entries: they were never in the pack (an attack pass lost a global USER.md this way)."""
    seed(tmp_path / "a")
    seed(tmp_path / "b", tag=" (b)")
    host = host_on(tmp_path / "a")
    try:
        default = host.export_pack("runtime").data
        carried = host.export_pack("runtime", include_user_profile=True).data
    finally:
        host.close()
    host = host_on(tmp_path / "b")
    try:
        receipt = host.import_pack(default, "replace")
        # the two MEMORY.md entries go, the pack's two come; the USER.md one stays
        assert receipt["runtime"]["targets"] == {"user": {"added": 0, "skipped": 0, "removed": 0},
                                                 "memory": {"added": 2, "skipped": 0, "removed": 2}}
        assert receipt["runtime"]["userProfile"]["handling"] == "kept"
        state = host.runtime.read()
        assert [e.content for e in state.user] == ["Prefers short answers (b)"]
        assert sorted(e.content for e in state.memory) == ["Deploys go through staging", "Run tests with pytest -n 2"]
        receipt = host.import_pack(carried, "replace")  # a pack that carries a profile replaces it
        assert receipt["runtime"]["targets"] == {"user": {"added": 1, "skipped": 0, "removed": 1},
                                                 "memory": {"added": 0, "skipped": 2, "removed": 0}}
        assert receipt["runtime"]["userProfile"]["handling"] == "replaced"
        assert [e.content for e in host.runtime.read().user] == ["Prefers short answers"]
    finally:
        host.close()
