"""A credential typed into MEMORY.md by hand is a write path too (issue 8 item 4): the imported entry,
the rebuilt projection and the copy saved under ``runtime/edits/`` hold a placeholder, never the value;
under ``secrets: reject`` the item is a rejected edit naming the kind, and the copy is still redacted."""

from __future__ import annotations

from pathlib import Path

from mnemon_ls.runtime.model import parse_store
from mnemon_ls.runtime.store import RuntimeStore
from mnemon_ls.settings import RuntimeMemorySettings
from tests.redact_samples import GITHUB_PAT
from tests.runtime.test_handedits import SEP, hand_edit, seed

NOW = "2026-09-16T09:30:00.000Z"


def every_byte_under(root: Path) -> bytes:
    return b"".join(p.read_bytes() + str(p).encode() for p in sorted(root.rglob("*")) if p.is_file())


def test_a_token_typed_into_memory_md_is_imported_redacted_everywhere(root: Path, clock) -> None:
    store = RuntimeStore(root, RuntimeMemorySettings(), clock=clock)
    seed(store)
    clock.set(NOW)
    hand_edit(store, "MEMORY.md", SEP.join(["alpha", "beta", "gamma", f"push with {GITHUB_PAT}"]) + "\n")
    report = store.projections.repair()
    assert report.hand_edits["MEMORY.md"]["status"] == "imported"
    contents = [e.content for e in parse_store(store.memories_path.read_bytes()) if e.target == "memory"]
    assert contents[-1] == "push with [redacted:github-token]"
    assert GITHUB_PAT.encode() not in every_byte_under(root)
    assert b"[redacted:github-token]" in (store.runtime_dir / "MEMORY.md").read_bytes()


def test_reject_mode_rejects_the_item_and_still_saves_a_redacted_copy(root: Path, clock) -> None:
    store = RuntimeStore(root, RuntimeMemorySettings(), clock=clock, secrets="reject")
    seed(store)
    before = store.memories_path.read_bytes()
    clock.set(NOW)
    hand_edit(store, "MEMORY.md", SEP.join(["alpha", "beta", "gamma", f"push with {GITHUB_PAT}"]) + "\n")
    report = store.projections.repair()
    result = report.hand_edits["MEMORY.md"]
    assert result["status"] == "rejected"
    assert result["problems"][0]["item"] == 4 and "looks like a GitHub token" in result["problems"][0]["rule"]
    assert result["problems"][0]["field"] == "content"
    # the item was named twice ("MEMORY.md item 4: MEMORY.md item 4: holds ..."): the field was the place again
    assert "MEMORY.md item 4: content: holds what looks like a GitHub token" in result["message"], result["message"]
    assert GITHUB_PAT not in result["message"]
    assert store.memories_path.read_bytes() == before
    assert GITHUB_PAT.encode() not in every_byte_under(root)


def test_allow_mode_keeps_the_value_as_typed(root: Path, clock) -> None:
    store = RuntimeStore(root, RuntimeMemorySettings(), clock=clock, secrets="allow")
    seed(store)
    clock.set(NOW)
    hand_edit(store, "MEMORY.md", SEP.join(["alpha", "beta", "gamma", f"push with {GITHUB_PAT}"]) + "\n")
    assert store.projections.repair().hand_edits["MEMORY.md"]["status"] == "imported"
    assert f"push with {GITHUB_PAT}" in [e.content for e in parse_store(store.memories_path.read_bytes())]


def test_a_split_user_scope_keeps_each_projection_in_its_own_root(tmp_path: Path) -> None:
    """Found by a fresh-clone trial: with runtimeUserScope=global the workspace root also had a USER.md,
    and an edit of it was "imported" into entries nobody reads (reference 3.9 ignores them)."""
    from mnemon_ls.host import WorkspaceHost
    from mnemon_ls.runtime.ops import validate_request
    from mnemon_ls.settings import load_settings

    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / ".git").mkdir()
    env = {"MNEMON_DATA_DIR": str(tmp_path / "global")}
    host = WorkspaceHost(workspace, load_settings({}), env=env)
    assert host.resolution.split_user
    host.runtime.mutate(validate_request("add", "memory", "a workspace fact"))
    host.runtime.mutate(validate_request("add", "user", "a fact about the person"))
    local, shared = host.root / "runtime", host.resolution.user_root / "runtime"
    assert (local / "MEMORY.md").exists() and not (local / "USER.md").exists()
    assert (shared / "USER.md").exists() and not (shared / "MEMORY.md").exists()
    (local / "USER.md").write_text("typed into the wrong file\n")  # ignored, never imported or rewritten
    snapshot, repairs = host.wake()
    assert "typed into the wrong file" not in snapshot.text
    assert (local / "USER.md").read_text() == "typed into the wrong file\n"
    assert all(not report.hand_edits for _, report in repairs)


def _document_root(tmp_path: Path, secrets: str):
    from mnemon_ls.documents import DocumentStore

    store = DocumentStore(tmp_path / "root", secrets=secrets)
    created = store.create("Deploy notes", "How we deploy.\n")
    path = store.files.path_for(created.document.record)
    return store, path


def test_a_token_typed_into_a_document_is_adopted_redacted_in_the_file_and_the_index(tmp_path: Path) -> None:
    store, path = _document_root(tmp_path, "redact")
    path.write_text(path.read_text(encoding="utf-8") + f"\npush with {GITHUB_PAT}\n", encoding="utf-8")
    report = store.freshness.refresh()
    assert len(report.adopted) == 1
    assert GITHUB_PAT.encode() not in every_byte_under(tmp_path / "root")
    assert "push with [redacted:github-token]" in path.read_text(encoding="utf-8")
    view = store.get(report.adopted[0])
    assert (view.record.revision, view.content.endswith("push with [redacted:github-token]")) == (2, True)


def test_under_reject_a_document_holding_a_token_is_not_adopted_and_the_refresh_says_why(tmp_path: Path) -> None:
    store, path = _document_root(tmp_path, "reject")
    typed = path.read_text(encoding="utf-8") + f"\npush with {GITHUB_PAT}\n"
    path.write_text(typed, encoding="utf-8")
    report = store.freshness.refresh()
    assert report.adopted == []
    assert any("GitHub token" in n and "not adopted (secrets is reject)" in n for n in report.notices), report.notices
    assert path.read_text(encoding="utf-8") == typed  # the person's file is left as typed
