"""Memory where the code is, in real Neovim (0.7.2 and 0.11) against the real server (issue 24 item 5): the
plugin refreshes code lenses on a write (the built-in client shows "N memories cite this" on the cited lines),
hovers come through the built-in client, and :MnemonReview offers "Still true: re-anchor to the current code",
Edit and Remove for a memory whose cited code changed. The user's picks go through stubs of vim.ui.select and
vim.ui.input (tests/editors/test_neovim_manage.py's)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.gitrepo import make_repo

from .nvim_helpers import WAIT_MS, Session
from .test_neovim import INFO, binary, session  # noqa: F401  (fixtures)
from .test_neovim_manage import UI, answer

LIB = "def parse(text):\n    return text.split()\n\n\ndef other():\n    return None\n"


def request(session: Session, method: str, params: dict) -> dict:
    """A request through the buffer's mnemon client (vim.lsp.buf_request_sync); its result."""
    answers = session.lua("local m, p, ms = ...; return vim.lsp.buf_request_sync(0, m, p, ms)", method, params,
                          WAIT_MS)
    values = answers.values() if isinstance(answers, dict) else answers  # keyed by client id: a list when dense
    (found,) = [a for a in values if a and (a.get("result") is not None or a.get("error") is not None)]
    assert found.get("error") is None, found
    return found["result"]


def lenses(session: Session) -> list[list]:
    return session.lua("local out = {}; for _, l in ipairs(vim.lsp.codelens.get(0)) do"
                       " table.insert(out, { l.range.start.line, l.command and l.command.title or '' }) end;"
                       " table.sort(out, function(a, b) return a[1] < b[1] end); return out")


def test_lenses_hover_and_review(session: Session, tmp_path: Path) -> None:
    ws = tmp_path / "repo"
    make_repo(ws, "main")
    lib = ws / "lib.py"
    lib.write_text(LIB, encoding="utf-8")
    session.setup({"storageScope": "workspace"})
    session.lua(UI)
    session.open(lib)
    session.wait_attached()
    for content, lines in (("parse splits on whitespace", (1, 2)), ("other returns nothing", (5, 6))):
        request(session, "mnemon/runtime/mutate", {"action": "add", "content": content, "cites": [
            {"path": "lib.py", "startLine": lines[0], "endLine": lines[1]}]})
    session.nv.command("write")  # BufWritePost: the plugin asks for the lenses again
    session.wait("#vim.lsp.codelens.get(0) == 2", "two code lenses")
    assert lenses(session) == [[0, "1 memory cites this"], [4, "1 memory cites this"]]
    hover = request(session, "textDocument/hover", {"textDocument": {"uri": lib.as_uri()},
                                                    "position": {"line": 4, "character": 0}})
    assert hover["contents"]["value"] == ("**1 memory cites this** (lines 5-6)\n\n"
                                          "- *MEMORY.md* · 0d · fresh: other returns nothing")

    # The code changes under both memories: the lenses count it once the file is written.
    session.nv.command("edit!")
    session.lua("vim.api.nvim_buf_set_lines(0, 1, 2, false, { '    return text.split(\",\")' });"
                " vim.api.nvim_buf_set_lines(0, 5, 6, false, { '    return 0' })")
    session.nv.command("write")
    session.wait("(function() local n = 0; for _, l in ipairs(vim.lsp.codelens.get(0)) do"
                 " if l.command and l.command.title:find('changed', 1, true) then n = n + 1 end end;"
                 " return n == 2 end)()", "two lenses saying changed")

    answer(session, "parse splits", "Still true")
    mark = session.mark()
    session.nv.command("MnemonReview")
    assert session.wait_note("re-anchored 1 citation", mark)["level"] == INFO
    prompts, shown = session.lua("return { T.prompts, T.shown }")
    assert prompts[0] == "mnemon: 2 memories need review"
    assert sorted(shown[0]) == ["[MEMORY.md 0d] other returns nothing — lib.py:5-6 (changed)",
                                "[MEMORY.md 0d] parse splits on whitespace — lib.py:1-2 (changed)"]
    assert shown[1] == ["Still true: re-anchor to the current code", "Edit", "Remove"]

    answer(session, "other returns", "Edit", "other returns zero")
    mark = session.mark()
    session.nv.command("MnemonReview")
    session.wait_note("edited: other returns zero", mark)
    memories = json.loads((ws / ".mnemon" / "runtime" / "memories.json").read_text(encoding="utf-8"))["entries"]
    assert sorted(e["content"] for e in memories) == ["other returns zero", "parse splits on whitespace"]

    answer(session, "other returns zero", "Remove")
    mark = session.mark()
    session.nv.command("MnemonReview")
    session.wait_note("removed: other returns zero", mark)
    memories = json.loads((ws / ".mnemon" / "runtime" / "memories.json").read_text(encoding="utf-8"))["entries"]
    assert [e["content"] for e in memories] == ["parse splits on whitespace"]

    mark = session.mark()
    session.nv.command("MnemonReview")
    assert session.wait_note("no memory needs review", mark)["level"] == INFO
    assert session.lua("return vim.fn.maparg('<Plug>(mnemon-review)', 'n')") == "<Cmd>MnemonReview<CR>"


def _age(path: Path, days: int) -> None:
    """Write ``updated_at``/``created_at`` ``days`` ago into every entry of ``memories.json`` (a hand edit)."""
    from datetime import datetime, timedelta, timezone

    old = (datetime.now(timezone.utc) - timedelta(days=days)).strftime("%Y-%m-%dT%H:%M:%S.000Z")
    data = json.loads(path.read_text(encoding="utf-8"))
    for entry in data["entries"]:
        entry["created_at"] = entry["updated_at"] = old
    path.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")


def test_review_lists_memories_due_for_review_and_still_true_restarts_their_clock(session: Session,
                                                                                 tmp_path: Path) -> None:
    """Issue 24 item 6: entries nobody updated for reviewAfterDays are listed with the reason; "Still true"
    confirms one (it leaves the list, memories.json untouched), Remove takes a USER.md entry from USER.md."""
    ws = tmp_path / "repo"
    make_repo(ws, "main")
    (ws / "notes.txt").write_text("notes\n", encoding="utf-8")
    session.setup({"storageScope": "workspace", "runtimeUserScope": "storage"})
    session.lua(UI)
    session.open(ws / "notes.txt")
    session.wait_attached()
    request(session, "mnemon/runtime/mutate", {"action": "add", "content": "deploys go through staging"})
    request(session, "mnemon/runtime/mutate", {"action": "add", "target": "user", "content": "prefers short answers"})
    truth = ws / ".mnemon" / "runtime" / "memories.json"
    _age(truth, 120)
    aged = truth.read_bytes()

    answer(session, "deploys go", "Still true")
    mark = session.mark()
    session.nv.command("MnemonReview")
    assert session.wait_note("confirmed still true; next review in 90 days", mark)["level"] == INFO
    prompts, shown = session.lua("return { T.prompts, T.shown }")
    assert prompts[0] == "mnemon: 2 memories need review"
    assert sorted(shown[0]) == ["[MEMORY.md 120d] deploys go through staging — review due",
                                "[USER.md 120d] prefers short answers — review due"]
    assert truth.read_bytes() == aged  # confirming writes a side file, never the Source's own

    answer(session, "prefers short", "Remove")
    mark = session.mark()
    session.nv.command("MnemonReview")
    session.wait_note("removed: prefers short answers", mark)
    prompts, shown = session.lua("return { T.prompts, T.shown }")
    assert shown[0] == ["[USER.md 120d] prefers short answers — review due"]  # the confirmed one is gone
    assert [e["content"] for e in json.loads(truth.read_text(encoding="utf-8"))["entries"]] == [
        "deploys go through staging"]  # removed from USER.md; nothing else deleted

    mark = session.mark()
    session.nv.command("MnemonReview")
    assert session.wait_note("no memory needs review", mark)["level"] == INFO


def test_review_lists_a_memory_space_item_due_for_review_and_still_true_confirms_it(session: Session,
                                                                                    tmp_path: Path) -> None:
    """Issue 24 item 6 for a Memory Space item: an item nobody updated or recalled for 120 days (its row made old
    by hand in mnemon.db) is listed as "[Memory Space 120d] ... — review due"; "Still true" confirms it, its row
    stays as it was and the next :MnemonReview has nothing to list."""
    import sqlite3
    from datetime import datetime, timedelta, timezone

    ws = tmp_path / "repo"
    make_repo(ws, "main")
    (ws / "notes.txt").write_text("notes\n", encoding="utf-8")
    session.setup({"storageScope": "workspace", "runtimeUserScope": "storage"})
    session.lua(UI)
    session.open(ws / "notes.txt")
    session.wait_attached()
    space = request(session, "mnemon/spaces/create", {"name": "Project", "description": "decisions",
                                                      "active": True})["id"]
    request(session, "mnemon/remember", {"spaceId": space, "content": "the HERON queue drains at night"})
    (db_path,) = (ws / ".mnemon" / "data").glob("*/mnemon.db")
    old = (datetime.now(timezone.utc) - timedelta(days=120)).strftime("%Y-%m-%dT%H:%M:%SZ")
    with sqlite3.connect(db_path) as db:
        assert db.execute("UPDATE insights SET created_at = ?, updated_at = ?", (old, old)).rowcount == 1
        row = db.execute("SELECT * FROM insights").fetchall()
    db.close()

    answer(session, "HERON queue", "Still true")
    mark = session.mark()
    session.nv.command("MnemonReview")
    assert session.wait_note("confirmed still true; next review in 90 days", mark)["level"] == INFO
    prompts, shown = session.lua("return { T.prompts, T.shown }")
    assert prompts[0] == "mnemon: 1 memory needs review"
    assert shown[0] == ["[Memory Space 120d] the HERON queue drains at night — review due"]
    with sqlite3.connect(db_path) as db:
        assert db.execute("SELECT * FROM insights").fetchall() == row  # confirmed in a side file; nothing deleted
    db.close()

    mark = session.mark()
    session.nv.command("MnemonReview")
    assert session.wait_note("no memory needs review", mark)["level"] == INFO


def test_still_true_says_where_a_damaged_confirmation_file_was_kept(session: Session) -> None:
    """A "Still true" whose answer carries ``keptDamaged`` (a damaged reviewed.json kept before it was written
    anew) says where, in real Neovim's Lua."""
    message = session.lua("return require('mnemon.review').still_true_message(...)",
                          {"cites": [], "reanchored": 0, "nextReviewDays": 90,
                           "keptDamaged": "/r/state/citations/quarantine/x-reviewed.json"})
    assert message == ("mnemon: confirmed still true; next review in 90 days; the damaged confirmation file was kept "
                       "at /r/state/citations/quarantine/x-reviewed.json")
    assert session.lua("return require('mnemon.review').still_true_message(...)",
                       {"cites": [], "reanchored": 0, "nextReviewDays": 90}) == \
        "mnemon: confirmed still true; next review in 90 days"
