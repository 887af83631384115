"""``doc update`` of a document whose managed file was edited by hand, with the very text on disk (real
subprocesses, a real git repository): it made a new revision and saved the identical text under
``documents/edits/``. It is now a no-op of the update (no copy saved, nothing of the edit lost) that adopts
the hand edit as a refresh would and answers the adopted revision; a title change with that same text saves no
copy either (nothing would be lost), while an update that replaces a real hand edit still saves it first."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli.test_doc_unchanged import cli
from tests.gitrepo import make_repo


def tree(path: Path) -> dict[str, bytes]:
    return {str(p.relative_to(path)): p.read_bytes() for p in sorted(path.rglob("*"))
            if p.is_file() and not p.name.startswith(".")}


def test_an_update_with_the_hand_edited_text_is_a_no_op_and_a_real_hand_edit_is_still_kept(tmp_path: Path) -> None:
    workspace, data_dir = Path(make_repo(tmp_path / "repo").workdir), tmp_path / "root"
    created = json.loads(cli(workspace, data_dir, "doc", "create", "--title", "Release plan", "--content",
                             "Tag, build.", "--json"))["document"]
    doc_id, path = created["id"], Path(created["path"])
    path.write_bytes(path.read_bytes().replace(b"Tag, build.", b"Tag, build, sign."))  # a hand edit
    documents = data_dir / "documents"
    before = tree(documents)
    said = cli(workspace, data_dir, "doc", "update", doc_id, "--content", "Tag, build, sign.")
    assert said.splitlines() == [  # the action says what the revision says: the edit was taken in (not "unchanged")
        f"Document adopted: Release plan ({doc_id}), revision 2, documents/active/release-plan-{doc_id[:8]}.md: "
        "no change to the text sent; the body on disk, edited outside mnemon-ls, already is that text and was "
        "adopted as revision 2"]
    assert not (documents / "edits").exists()
    assert path.read_text().endswith("\nTag, build, sign.\n") and tree(documents).keys() == before.keys()

    retitled = json.loads(cli(workspace, data_dir, "doc", "update", doc_id, "--content", "Tag, build, sign.",
                              "--title", "Release steps", "--json"))
    assert (retitled["action"], retitled["document"]["revision"]) == ("updated", 3)
    assert not (documents / "edits").exists()  # the hand-edited body is the new body: nothing to save
    assert path.read_text().endswith("\nTag, build, sign.\n")

    path.write_bytes(path.read_bytes().replace(b"Tag, build, sign.", b"Tag, build, sign, ship."))
    replaced = json.loads(cli(workspace, data_dir, "doc", "update", doc_id, "--content", "Tag.", "--json"))
    assert replaced["action"] == "updated"
    [saved] = (documents / "edits").iterdir()
    assert saved.read_text().endswith("\nTag, build, sign, ship.\n")  # never lost


async def test_the_mcp_tool_and_the_editor_command_say_the_hand_edit_was_adopted(tmp_path: Path) -> None:
    """The MCP tool answers the same action as the command line (one operation): ``adopted`` and the new revision;
    the editor command's message (:func:`mnemon_ls.ops.humantext.document_updated`) says so too."""
    from mnemon_ls.ops.humantext import document_updated
    from tests.mcp.conftest import answer, mcp_session, server_env

    workspace, data_dir = Path(make_repo(tmp_path / "repo").workdir), tmp_path / "root"
    created = json.loads(cli(workspace, data_dir, "doc", "create", "--title", "Release plan", "--content",
                             "Tag, build.", "--json"))["document"]
    doc_id, path = created["id"], Path(created["path"])
    path.write_bytes(path.read_bytes().replace(b"Tag, build.", b"Tag, build, sign."))  # a hand edit
    args = ["--workspace", str(workspace), "--scope", "custom", "--data-dir", str(data_dir)]
    async with mcp_session(args, env=server_env()) as session:
        said = await answer(session, "mnemon_document_manage", {"action": "update", "id": doc_id,
                                                                "content": "Tag, build, sign."})
    notice = ("no change to the text sent; the body on disk, edited outside mnemon-ls, already is that text and was "
              "adopted as revision 2")
    assert said == (f"Document adopted: Release plan (id: {doc_id}), revision 2, "
                    f"documents/active/release-plan-{doc_id[:8]}.md: {notice}")
    shown = json.loads(cli(workspace, data_dir, "doc", "get", doc_id, "--json"))
    assert shown["revision"] == 2 and "notices" not in shown
    assert document_updated({"action": "adopted", "document": {"title": "Release plan", "revision": 2},
                             "notices": [notice]}) == f"document adopted: Release plan (revision 2): {notice}"
