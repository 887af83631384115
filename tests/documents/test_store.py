"""The Documents store on real files: operations, field rules, reference cases 44-56, bad input,
hand edits, access times, damaged indexes, recovery, doctor and the wake cover.

Every rejection is checked to leave ``documents/`` byte-identical (same bytes, mtimes and inodes after
pinning every mtime), except where noted.
"""

from __future__ import annotations

import json
import os
import re
import stat
from pathlib import Path

import pytest

from mnemon_ls.documents import changes, indexformat
from mnemon_ls.documents import DocumentCapacityError, DocumentStatusError, DocumentStore, diagnose, model
from mnemon_ls.errors import InvalidInput, NotFound, RevisionConflict, UnreadableStore

from tests.documents.test_support import (
    TS_ACTIVE,
    TS_ARCHIVED,
    TS_FILES,
    TS_REVISION,
    UUID4,
    Clock,
    frozen,
    make_store,
    tree,
    write_ts_root,
)


@pytest.fixture
def env(tmp_path):
    store, root, workspace, clock = make_store(tmp_path)
    return store, root, workspace, clock


def docs_dir(root: Path) -> Path:
    return root / "documents"


def index_bytes(root: Path) -> bytes:
    return (root / "documents" / "index.json").read_bytes()


def assert_unchanged(root: Path, before) -> None:
    assert tree(docs_dir(root)) == before


# ================================================================================ create / layout


def test_case_44_create_with_a_source_path(env):
    store, root, workspace, clock = env
    adr = workspace / "ADR.md"
    adr.write_text("# ADR\n")
    os.utime(adr, ns=(10**18, 10**18))
    result = store.create("Architecture decision", "We chose SQLite.", source_paths=["ADR.md"])
    rec = result.document.record
    assert re.fullmatch(UUID4, rec.id)
    assert rec.relative_path == f"documents/active/architecture-decision-{rec.id[:8]}.md"
    text = (root / rec.relative_path).read_text()
    assert f'id: "{rec.id}"\n' in text
    assert 'source_paths:\n  - "ADR.md"\n' in text
    assert adr.read_text() == "# ADR\n" and adr.stat().st_mtime_ns == 10**18
    assert result.usage.active_count == 1
    assert result.action == "created"
    assert result.revision == store.read().revision
    assert rec.revision == 1 and rec.created_at == rec.updated_at == rec.last_accessed_at == "2026-09-15T08:00:00.000Z"


def test_created_file_and_index_are_exact(env):
    store, root, workspace, clock = env
    rec = store.create("  Release\nrunbook ", "\n body \x00\n", description=" steps ", session_ids=["s1", " s1 "]).document.record
    expected = model.render_markdown(rec, "body")
    assert (root / rec.relative_path).read_text() == expected
    assert rec.size_bytes == len(expected.encode())
    assert rec.content_hash == model.sha256_hex("body")
    assert (rec.title, rec.description, rec.session_ids) == ("Release runbook", "steps", ("s1",))
    assert index_bytes(root) == indexformat.serialize_index([rec])
    assert json.loads(index_bytes(root))["documents"][0]["sizeBytes"] == rec.size_bytes


def test_modes_are_0600_and_0700(env):
    store, root, workspace, clock = env
    rec = store.create("T", "b").document.record
    store.moves.archive(rec.id, 1)
    store.search.find("b")
    store.flush_access()
    for path in [docs_dir(root), docs_dir(root) / "active", docs_dir(root) / "archived"]:
        assert stat.S_IMODE(path.stat().st_mode) == 0o700, path
    for path in docs_dir(root).rglob("*"):
        if path.is_file():
            assert stat.S_IMODE(path.stat().st_mode) == 0o600, path


def test_constructing_and_reading_an_empty_root_writes_nothing(tmp_path):
    store, root, workspace, clock = make_store(tmp_path)
    assert store.list().documents == ()
    assert store.search.find("anything").results == ()
    assert store.cover(1000).listed == 0
    assert store.freshness.refresh().notices == []
    store.close()
    assert list(root.iterdir()) == [] and list(workspace.iterdir()) == []


def test_case_52_nothing_is_written_under_the_workspace(env):
    store, root, workspace, clock = env
    (workspace / "src").mkdir()
    store.create("T", "b", source_paths=["src/missing.ts"])
    store.search.find("b")
    store.close()
    assert sorted(p.name for p in workspace.rglob("*")) == ["src"]


def test_cjk_only_titles_get_distinct_valid_filenames(env):
    store, root, workspace, clock = env
    a = store.create("今天玩成语接龙游戏", "一").document.record
    b = store.create("今天玩成语接龙游戏", "二").document.record
    assert a.filename == f"document-{a.id[:8]}.md" and b.filename == f"document-{b.id[:8]}.md"
    assert a.filename != b.filename
    assert (root / a.relative_path).exists() and (root / b.relative_path).exists()


# ================================================================================ update / archive / restore


def test_case_45_update_bumps_revision_and_hash(env):
    store, root, workspace, clock = env
    rec = store.create("T", "one").document.record
    clock.tick(60)
    updated = store.update(rec.id, content="two").document
    assert updated.record.revision == 2
    assert updated.record.content_hash == model.sha256_hex("two") != rec.content_hash
    assert updated.record.updated_at == updated.record.last_accessed_at == "2026-09-15T08:01:00.000Z"
    assert updated.record.created_at == rec.created_at
    assert updated.content == "two"
    assert store.get(rec.id).content == "two"


def test_update_keeps_omitted_fields_and_merges_sessions(env):
    store, root, workspace, clock = env
    (workspace / "a.md").write_text("a")
    rec = store.create("Title", "body", description="d", source_paths=["a.md"], session_ids=["s1"]).document.record
    new = store.update(rec.id, title="New  title", session_ids=["s2", "s1"]).document.record
    assert (new.title, new.description, new.source_paths, new.session_ids) == ("New title", "d", ("a.md",), ("s2", "s1"))
    assert new.filename == rec.filename  # the filename never changes
    assert store.get(rec.id).content == "body"
    assert store.update(rec.id, source_paths=[]).document.record.source_paths == ()


def test_case_49_archive_moves_the_file_and_hides_it_from_default_search(env):
    store, root, workspace, clock = env
    old = store.create("Oldest runbook", "zebra procedure").document.record
    clock.tick(1)
    new = store.create("Newer note", "other text").document.record
    clock.tick(1)
    result = store.moves.archive(old.id, old.revision, summary="Cold copy in space x", memory_body_ids=["x"])
    rec = result.document.record
    assert rec.relative_path == f"documents/archived/{old.filename}"
    assert not (root / old.relative_path).exists() and (root / rec.relative_path).exists()
    assert (rec.status, rec.revision, rec.archived_at, rec.archive_summary, rec.memory_body_ids) == (
        "archived", 2, "2026-09-15T08:00:02.000Z", "Cold copy in space x", ("x",))
    assert result.usage.active_bytes == new.size_bytes
    assert (root / rec.relative_path).read_text() == model.render_markdown(rec, "zebra procedure")
    assert rec.size_bytes == len(model.render_markdown(rec, "zebra procedure").encode())
    assert store.search.find("zebra").results == ()
    assert [h.record.id for h in store.search.find("zebra", include_archived=True).results] == [old.id]


def test_restore_brings_an_archived_document_back_as_a_new_revision(env):
    store, root, workspace, clock = env
    rec = store.create("Doc", "body text").document.record
    store.moves.archive(rec.id, 1, memory_body_ids=["m"])
    clock.tick(5)
    back = store.moves.restore(rec.id, document_revision=2).document.record
    assert (back.status, back.revision, back.relative_path) == ("active", 3, rec.relative_path)
    assert (back.archived_at, back.archive_summary, back.memory_body_ids) == (None, None, ("m",))
    assert back.updated_at == "2026-09-15T08:00:05.000Z"
    assert sorted(os.listdir(docs_dir(root) / "archived")) == []
    assert "archivedAt" not in json.loads(index_bytes(root))["documents"][0]
    assert [h.record.id for h in store.search.find("body").results] == [rec.id]


def test_case_50_archive_with_a_stale_revision_conflicts_and_changes_nothing(env):
    store, root, workspace, clock = env
    rec = store.create("Doc", "version one").document.record
    store.update(rec.id, content="version two")
    before = frozen(docs_dir(root))
    with pytest.raises(RevisionConflict) as info:
        store.moves.archive(rec.id, 1)
    assert info.value.data == {"field": "documentRevision", "id": rec.id, "expected": 1, "actual": 2}
    assert_unchanged(root, before)
    assert store.get(rec.id).content == "version two"


def test_case_53_two_mutations_with_one_expected_revision(env):
    store, root, workspace, clock = env
    revision = store.create("A", "a").revision
    store.create("B", "b", expected_revision=revision)
    before = frozen(docs_dir(root))
    with pytest.raises(RevisionConflict) as info:
        store.create("C", "c", expected_revision=revision)
    assert info.value.data["expected"] == revision and info.value.data["actual"] == store.read().revision
    assert_unchanged(root, before)


def test_case_54_a_failed_index_write_changes_nothing(env):
    store, root, workspace, clock = env
    result = store.create("Doc", "first")
    before = frozen(docs_dir(root))

    def fail(step):
        if step == "update:file-written":
            raise OSError(28, "No space left on device")

    store._step_hook = fail
    with pytest.raises(OSError):
        store.update(result.document.record.id, content="second")
    store._step_hook = None
    after = tree(docs_dir(root))
    assert {k: v[0] for k, v in after.items()} == {k: v[0] for k, v in before.items()}
    assert store.read().revision == result.revision
    doc = store.get(result.document.record.id)
    assert (doc.record.revision, doc.content) == (1, "first")


@pytest.mark.parametrize("step", ["archive:start", "archive:copied"])
def test_an_archive_that_fails_before_the_commit_leaves_everything_as_it_was(env, step):
    store, root, workspace, clock = env
    rec = store.create("Doc", "keep me").document.record
    before = frozen(docs_dir(root))

    def fail(name):
        if name == step:
            raise OSError(5, "I/O error")

    store._step_hook = fail
    with pytest.raises(OSError):
        store.moves.archive(rec.id, 1)
    store._step_hook = None
    after = tree(docs_dir(root))
    assert {k: v[0] for k, v in after.items()} == {k: v[0] for k, v in before.items()}
    assert store.get(rec.id).record.status == "active"


def test_a_create_that_fails_before_the_commit_leaves_no_file(env):
    store, root, workspace, clock = env
    store.create("A", "a")
    before = frozen(docs_dir(root))
    store._step_hook = lambda name: (_ for _ in ()).throw(OSError(5, "I/O error")) if name == "create:file-written" else None
    with pytest.raises(OSError):
        store.create("B", "b")
    store._step_hook = None
    assert {k: v[0] for k, v in tree(docs_dir(root)).items()} == {k: v[0] for k, v in before.items()}


def test_case_55_archived_documents_are_immutable(env):
    store, root, workspace, clock = env
    rec = store.create("Doc", "x").document.record
    store.moves.archive(rec.id, 1)
    before = frozen(docs_dir(root))
    with pytest.raises(DocumentStatusError) as info:
        store.update(rec.id, content="y")
    assert info.value.code == "document-status"
    assert info.value.data == {"id": rec.id, "status": "archived", "required": "active"}
    assert "archived documents are immutable" in info.value.message
    with pytest.raises(DocumentStatusError):
        store.moves.archive(rec.id, 2)
    assert_unchanged(root, before)
    store.moves.restore(rec.id)
    with pytest.raises(DocumentStatusError) as info:
        store.moves.restore(rec.id)
    assert info.value.data["required"] == "archived"


@pytest.mark.parametrize("call", ["update", "archive", "restore", "get"])
def test_unknown_ids_are_not_found_and_change_nothing(env, call):
    store, root, workspace, clock = env
    store.create("Doc", "x")
    before = frozen(docs_dir(root))
    with pytest.raises(NotFound) as info:
        if call == "update":
            store.update("nope", content="y")
        elif call == "archive":
            store.moves.archive("nope", 1)
        elif call == "restore":
            store.moves.restore("nope")
        else:
            store.get("nope")
    assert info.value.code == "not-found" and info.value.data["id"] == "nope"
    assert_unchanged(root, before)


# ================================================================================ bad input


BAD_CREATES = [
    (dict(title=""), "title", "is required (empty or only whitespace)"),
    (dict(title="t" * 161), "title", "is 161 characters; at most 160"),
    (dict(content=""), "content", "is required (empty, only whitespace or only NUL characters)"),
    (dict(content="\x00\x00"), "content", "is required (empty, only whitespace or only NUL characters)"),
    (dict(content="x" * (2 * 1024 * 1024 + 1)), "content",
     "is 2097153 UTF-8 bytes; a document body is at most 2097152 bytes"),
    (dict(description="d" * 601), "description", "is 601 characters; at most 600"),
    (dict(session_ids=[f"s{i}" for i in range(21)]), "sessionIds", "has 21 distinct ids; at most 20"),
    (dict(source_paths=["../x"]), "sourcePaths[0]", None),
    (dict(source_paths=["ok.md", "/etc/passwd"]), "sourcePaths[1]", None),
    (dict(source_paths=["C:\\x"]), "sourcePaths[0]", "must be a workspace path with '/' separators, not a Windows path (got 'C:\\\\x')"),
    (dict(source_paths=["a/../../x"]), "sourcePaths[0]", None),
    (dict(source_paths=["up"]), "sourcePaths[0]", None),  # a symlink to /
    (dict(source_paths=["documents/active/x.md"]), "sourcePaths[0]",
     "names a managed document path (documents/active/x.md); give the original workspace file instead"),
    (dict(source_paths=[f"f{i}.md" for i in range(51)]), "sourcePaths",
     "has 51 paths; at most 50 (nothing was stored; keep the paths that matter most)"),
    (dict(source_paths="a.md"), "sourcePaths",
     "must be a list of workspace-relative paths, not a string (got 'a.md')"),
    (dict(source_paths=[3]), "sourcePaths[0]", "must be a string, not an integer (got 3)"),
    (dict(expected_revision="abc"), "expectedRevision", "must be an index revision (64 lowercase hex characters)"),
]


@pytest.mark.parametrize("changes,field,rule", BAD_CREATES, ids=[f"{c[1]}-{i}" for i, c in enumerate(BAD_CREATES)])
def test_bad_create_input_is_refused_and_changes_nothing(env, changes, field, rule):
    store, root, workspace, clock = env
    (workspace / "up").symlink_to("/")
    store.create("Existing", "existing body")
    before = frozen(docs_dir(root))
    ws_before = frozen(workspace)
    args = {"title": "Title", "content": "body", **changes}
    with pytest.raises(InvalidInput) as info:
        store.create(args.pop("title"), args.pop("content"), **args)
    assert info.value.field == field
    assert info.value.code == "invalid-input"
    if rule is not None:
        assert info.value.rule == rule
    assert_unchanged(root, before)
    assert tree(workspace) == ws_before


@pytest.mark.parametrize("path,fragment", [
    ("../x", "must stay inside the workspace"),
    ("/etc/passwd", "must stay inside the workspace"),
    ("a/../../x", "must stay inside the workspace"),
    ("up/etc", "must stay inside the workspace"),
    ("link-out/x.md", "must stay inside the workspace"),
])
def test_source_paths_outside_the_workspace_name_the_rule(env, path, fragment):
    store, root, workspace, clock = env
    (workspace / "up").symlink_to("/")
    outside = workspace.parent / "outside"
    outside.mkdir()
    (workspace / "link-out").symlink_to(outside)
    with pytest.raises(InvalidInput) as info:
        store.create("T", "b", source_paths=[path])
    assert fragment in info.value.rule


def test_source_paths_into_the_managed_directory_are_refused(tmp_path):
    workspace = tmp_path / "ws"
    workspace.mkdir()
    root = workspace / ".mnemon"  # storageScope workspace
    store = DocumentStore(root, workspace)
    store.create("First", "b")
    for path in [".mnemon/documents/index.json", ".mnemon/documents", str(root / "documents" / "active")]:
        with pytest.raises(InvalidInput) as info:
            store.create("T", "b", source_paths=[path])
        assert "managed documents/ directory" in info.value.rule or "managed document path" in info.value.rule
    (workspace / "docs-link").symlink_to(root / "documents")
    with pytest.raises(InvalidInput) as info:
        store.create("T", "b", source_paths=["docs-link/active"])
    assert "managed documents/ directory" in info.value.rule


def test_source_paths_are_normalized_workspace_relative_and_need_not_exist(env):
    store, root, workspace, clock = env
    (workspace / "src").mkdir()
    (workspace / "inner").symlink_to(workspace / "src")
    rec = store.create("T", "b", source_paths=[
        " src/a.ts ", "./src/a.ts", "src//b.ts", "", "missing/dir/c.md", ".", str(workspace / "d.md"),
        "inner/e.ts", "src/../f.md",
    ]).document.record
    assert rec.source_paths == ("src/a.ts", "src/b.ts", "missing/dir/c.md", ".", "d.md", "inner/e.ts", "f.md")
    assert not (workspace / "missing").exists()


def test_fifty_source_paths_are_accepted(env):
    store, root, workspace, clock = env
    paths = [f"f{i}.md" for i in range(50)]
    assert store.create("T", "b", source_paths=paths + ["f0.md"]).document.record.source_paths == tuple(paths)


def test_source_paths_without_a_workspace(tmp_path):
    store = DocumentStore(tmp_path / "root", None)
    assert store.create("T", "b", source_paths=[" "]).document.record.source_paths == ()
    with pytest.raises(InvalidInput) as info:
        store.create("T", "b", source_paths=["a.md"])
    assert info.value.field == "sourcePaths"


def test_bad_update_input_changes_nothing(env):
    store, root, workspace, clock = env
    rec = store.create("T", "b").document.record
    before = frozen(docs_dir(root))
    for kwargs in [dict(title=" "), dict(content="\x00"), dict(source_paths=["../x"]), dict(description="x" * 601)]:
        with pytest.raises(InvalidInput):
            store.update(rec.id, **kwargs)
    for revision in (5, 0):  # the range of a revision is the params models' rule (tests/cli/test_error_bounds.py)
        with pytest.raises(RevisionConflict):
            store.update(rec.id, content="new", document_revision=revision)
    assert_unchanged(root, before)


def test_limits_are_validated_at_construction(tmp_path):
    for kwargs, field in [(dict(max_body_bytes=0), "documents.maxBodyBytes"),
                          (dict(active_limit_bytes=2 * 1024 ** 3), "documents.activeLimitBytes"),
                          (dict(active_limit_bytes=True), "documents.activeLimitBytes")]:
        with pytest.raises(InvalidInput) as info:
            DocumentStore(tmp_path, None, **kwargs)
        assert info.value.field == field


def test_max_body_bytes_setting_applies(tmp_path):
    store, root, workspace, clock = make_store(tmp_path, max_body_bytes=10)
    store.create("T", "0123456789")
    with pytest.raises(InvalidInput) as info:
        store.create("T", "0123456789a")
    assert info.value.rule == "is 11 UTF-8 bytes; a document body is at most 10 bytes"


# ================================================================================ capacity


def test_case_48_capacity_error_lists_lru_candidates_and_changes_nothing(tmp_path):
    store, root, workspace, clock = make_store(tmp_path, active_limit_bytes=1300)
    first = store.create("First note", "a" * 180).document.record
    clock.tick(1)
    second = store.create("Second note", "b" * 180).document.record
    clock.tick(1)
    assert (first.size_bytes, second.size_bytes) == (504, 505)
    before = frozen(docs_dir(root))
    with pytest.raises(DocumentCapacityError) as info:
        store.create("Third note", "c" * 320)
    error = info.value
    assert error.code == "document-capacity"
    assert (error.projected, error.limit, error.used) == (504 + 505 + 644, 1300, 1009)
    assert [c["id"] for c in error.candidates] == [first.id, second.id]
    assert error.candidates[0] == {"id": first.id, "title": "First note", "relativePath": first.relative_path,
                                   "sizeBytes": 504, "lastAccessedAt": "2026-09-15T08:00:00.000Z",
                                   "updatedAt": "2026-09-15T08:00:00.000Z", "revision": 1}
    assert_unchanged(root, before)
    # reading the first note makes the second the least recently used (side file, not the index)
    clock.tick(1)
    store.get(first.id)
    with pytest.raises(DocumentCapacityError) as info:
        store.create("Third note", "c" * 320)
    assert [c["id"] for c in info.value.candidates] == [second.id, first.id]
    assert info.value.candidates[1]["lastAccessedAt"] == "2026-09-15T08:00:03.000Z"
    assert index_bytes(root) == before["index.json"][0]


def test_capacity_applies_to_update_and_restore_and_ignores_archived(tmp_path):
    store, root, workspace, clock = make_store(tmp_path, active_limit_bytes=1400)
    a = store.create("A", "a" * 300).document.record
    b = store.create("B", "b" * 300).document.record
    with pytest.raises(DocumentCapacityError) as info:
        store.update(a.id, content="a" * 800)
    assert [c["id"] for c in info.value.candidates] == [b.id]
    store.moves.archive(b.id, 1)
    store.update(a.id, content="a" * 700)  # fits once B no longer counts
    with pytest.raises(DocumentCapacityError):
        store.moves.restore(b.id)
    plan = store.capacity.plan(title="C", content="c" * 10)
    assert plan.fits and plan.used == store.list().usage.active_bytes


def test_capacity_candidates_follow_lru_order(tmp_path):
    store, root, workspace, clock = make_store(tmp_path, active_limit_bytes=2000)
    ids = []
    for name in "ABCD":
        ids.append(store.create(name, name.lower() * 50).document.record.id)
        clock.tick(10)
    for doc_id in (ids[2], ids[0]):  # access C then A
        store.get(doc_id)
        clock.tick(10)
    plan = store.capacity.plan(title="E", content="e" * 2000)
    assert not plan.fits
    assert [r.id for r in plan.candidates] == [ids[1], ids[3], ids[2], ids[0]]


# ================================================================================ search side effects


def test_case_56_empty_query_lists_all_newest_first_and_hits_update_last_accessed(env):
    store, root, workspace, clock = env
    a = store.create("A", "alpha").document.record
    clock.tick(1)
    b = store.create("B", "beta").document.record
    clock.tick(1)
    archived = store.create("C", "gamma").document.record
    store.moves.archive(archived.id, 1)
    clock.tick(1)
    before = index_bytes(root)
    result = store.search.find("")
    assert [(h.record.id, h.score, h.matched) for h in result.results] == [(b.id, 1.0, "all"), (a.id, 1.0, "all")]
    assert result.to_dict()["total"] == 2 and result.matches == 2
    assert [h.last_accessed_at for h in result.results] == ["2026-09-15T08:00:03.000Z"] * 2
    assert store.get(a.id).last_accessed_at == "2026-09-15T08:00:03.000Z"
    assert index_bytes(root) == before  # a search never rewrites index.json
    assert store.flush_access()
    side = json.loads((docs_dir(root) / ".access.json").read_text())
    assert side == {"version": 1, "lastAccessedAt": {a.id: "2026-09-15T08:00:03.000Z", b.id: "2026-09-15T08:00:03.000Z"}}
    assert index_bytes(root) == before
    # the next index commit folds the access times into index.json
    store.create("D", "delta")
    stored = {d["id"]: d["lastAccessedAt"] for d in json.loads(index_bytes(root))["documents"]}
    assert stored[a.id] == stored[b.id] == "2026-09-15T08:00:03.000Z"


def test_access_times_survive_a_new_store_after_close(env, tmp_path):
    store, root, workspace, clock = env
    rec = store.create("A", "alpha").document.record
    clock.tick(30)
    store.search.find("alpha")
    store.close()
    other = DocumentStore(root, workspace, clock=clock)
    assert other.get(rec.id).last_accessed_at == "2026-09-15T08:00:30.000Z"
    assert json.loads(index_bytes(root))["documents"][0]["lastAccessedAt"] == "2026-09-15T08:00:00.000Z"


def test_a_damaged_access_file_is_ignored_and_replaced(env):
    store, root, workspace, clock = env
    rec = store.create("A", "alpha").document.record
    (docs_dir(root) / ".access.json").write_text("{not json")
    assert store.get(rec.id).last_accessed_at == "2026-09-15T08:00:00.000Z"
    clock.tick(1)
    store.search.find("alpha")
    assert store.flush_access()
    assert json.loads((docs_dir(root) / ".access.json").read_text())["lastAccessedAt"] == {rec.id: "2026-09-15T08:00:01.000Z"}


# ================================================================================ outside changes


def test_a_hand_edited_body_is_adopted_as_a_new_revision(env):
    store, root, workspace, clock = env
    rec = store.create("Runbook", "old words here").document.record
    path = root / rec.relative_path
    path.write_text(path.read_text().replace("old words here", "fresh words instead"))
    clock.tick(9)
    report = store.freshness.refresh()
    assert report.adopted == [rec.id]
    assert report.preserved == {}
    new = store.get(rec.id)
    assert (new.record.revision, new.content, new.record.content_hash) == (
        2, "fresh words instead", model.sha256_hex("fresh words instead"))
    assert new.record.updated_at == "2026-09-15T08:00:09.000Z"
    assert path.read_text() == model.render_markdown(new.record, "fresh words instead")
    assert [h.record.id for h in store.search.find("fresh").results] == [rec.id]
    assert store.search.find("old").results == ()


def test_a_hand_edited_frontmatter_is_saved_before_it_is_rewritten(env):
    store, root, workspace, clock = env
    rec = store.create("Runbook", "body").document.record
    path = root / rec.relative_path
    edited = path.read_text().replace('title: "Runbook"', 'title: "My title"').replace("body", "new body")
    path.write_text(edited)
    report = store.freshness.refresh()
    assert report.adopted == [rec.id]
    saved = Path(report.preserved[rec.relative_path])
    assert saved.parent == docs_dir(root) / "edits" and saved.read_text() == edited
    assert store.get(rec.id).record.title == "Runbook"


def test_an_interrupted_update_is_completed_from_its_consistent_frontmatter(env):
    store, root, workspace, clock = env
    rec = store.create("Runbook", "v1").document.record
    request = changes.UpdateRequest(id=rec.id, title="Runbook two", content="v2")
    pending = changes.updated_record(rec, request, "v2", "2026-09-15T09:00:00.000Z")
    (root / rec.relative_path).write_text(model.render_markdown(pending, "v2"))  # file written, index not
    report = store.freshness.refresh()
    assert report.adopted == [rec.id] and report.preserved == {}
    new = store.get(rec.id).record
    assert (new.title, new.revision, new.updated_at, new.content_hash) == (
        "Runbook two", 2, "2026-09-15T09:00:00.000Z", pending.content_hash)


def test_a_deleted_file_is_left_out_of_search_with_a_notice(env):
    store, root, workspace, clock = env
    gone = store.create("Gone doc", "shared word").document.record
    kept = store.create("Kept doc", "shared word").document.record
    (root / gone.relative_path).unlink()
    result = store.search.find("shared")
    assert [h.record.id for h in result.results] == [kept.id]
    assert result.notices == (f"{gone.relative_path} (Gone doc): the managed file is missing; left out",)
    with pytest.raises(NotFound):
        store.get(gone.id)
    entries = {e.record.id: e for e in store.list().documents}
    assert (entries[gone.id].healthy, entries[kept.id].healthy) == (False, True)
    assert any(f.level == "problem" and "missing" in f.message for f in diagnose(store))
    with pytest.raises(NotFound):
        store.update(gone.id, title="x")
    store.update(gone.id, content="rewritten")  # giving content writes it again
    assert store.get(gone.id).content == "rewritten"


def test_an_unreadable_file_is_left_out_not_fatal(env, monkeypatch):
    store, root, workspace, clock = env
    bad = store.create("Bad", "word").document.record
    good = store.create("Good", "word").document.record
    (root / bad.relative_path).unlink()
    (root / bad.relative_path).mkdir()  # reading a directory fails with EISDIR
    result = store.search.find("word")
    assert [h.record.id for h in result.results] == [good.id]
    assert len(result.notices) == 1 and "cannot be read" in result.notices[0]


def test_an_archived_file_changed_outside_is_reported_not_adopted(env):
    store, root, workspace, clock = env
    rec = store.create("Doc", "old").document.record
    archived = store.moves.archive(rec.id, 1).document.record
    path = root / archived.relative_path
    path.write_text(path.read_text().replace("\nold\n", "\nnew stuff\n"))
    report = store.freshness.refresh()
    assert report.adopted == [] and report.changed_archived == [rec.id]
    assert store.get(rec.id).record.revision == 2
    assert [h.record.id for h in store.search.find("stuff", include_archived=True).results] == [rec.id]


# ================================================================================ damaged index, recovery, doctor


def damage(root: Path, how: str) -> bytes:
    path = docs_dir(root) / "index.json"
    data = path.read_bytes()
    if how == "truncated":
        data = data[: len(data) // 2]
    else:
        document = json.loads(data)
        document["documents"][1]["revision"] = "two"
        data = (json.dumps(document, ensure_ascii=False, indent=2) + "\n").encode()
    path.write_bytes(data)
    return data


@pytest.mark.parametrize("how", ["truncated", "bad-record"])
def test_a_damaged_index_is_never_overwritten_and_recover_rebuilds_it(env, how):
    store, root, workspace, clock = env
    a = store.create("Alpha doc", "alpha body", description="first").document.record
    b = store.create("Beta doc", "beta body").document.record
    c = store.create("Gamma doc", "gamma body").document.record
    store.moves.archive(c.id, 1)
    damaged = damage(root, how)
    before = frozen(docs_dir(root))
    for attempt in (lambda: store.create("New", "x"), lambda: store.update(a.id, content="y"),
                    lambda: store.moves.archive(a.id, 1), lambda: store.moves.restore(c.id)):
        with pytest.raises(UnreadableStore) as info:
            attempt()
        assert info.value.data["file"] == str(docs_dir(root) / "index.json")
        if how == "bad-record":
            assert info.value.data["record"] == 1
            assert "documents[1].revision: must be an integer >= 1 (got 'two') (record 1)" in info.value.message
        else:
            assert "is not valid JSON (the file looks truncated)" in info.value.message
    assert_unchanged(root, before)
    # reads still work on what can be read, with a notice
    listing = store.list()
    assert listing.problem and a.id in [e.record.id for e in listing.documents]
    findings = diagnose(store)
    problem = [f for f in findings if f.level == "problem"][0]
    assert problem.subject == str(docs_dir(root) / "index.json")
    if how == "bad-record":
        assert problem.message.startswith("record 1 (documents[1].revision): must be an integer >= 1")
    assert "doc recover" in problem.advice
    assert tree(docs_dir(root)) == before  # doctor never writes
    report = store.recovery.recover()
    assert report["recovered"] is True
    assert Path(report["quarantined"]).read_bytes() == damaged
    assert report["documents"] == 3
    state = store.read()
    assert state.problem is None
    by_id = {r.id: r for r in state.records}
    assert set(by_id) == {a.id, b.id, c.id}
    assert (by_id[a.id].title, by_id[a.id].description, by_id[c.id].status) == ("Alpha doc", "first", "archived")
    assert store.get(b.id).content == "beta body"
    assert [h.record.id for h in store.search.find("alpha").results] == [a.id]
    store.create("After", "works again")


def test_recover_on_a_valid_index_only_adds_orphans(env):
    store, root, workspace, clock = env
    store.create("A", "a")
    before = index_bytes(root)
    assert store.recovery.recover()["recovered"] is False
    assert index_bytes(root) == before
    orphan = changes.new_record(changes.CreateRequest("Orphan", "", "orphan body", (), ()),
                              "0badc0de-0000-4000-8000-000000000000", "2026-09-01T00:00:00.000Z")
    (root / orphan.relative_path).write_text(model.render_markdown(orphan, "orphan body"))
    assert any(orphan.relative_path in f.message for f in diagnose(store))  # doctor names it (and writes nothing)
    result = store.recovery.recover()  # (a refresh would adopt it too: test_documents_leftovers.py)
    assert (result["recovered"], result["fromFiles"]) == (True, 1)
    assert store.get(orphan.id).record.title == "Orphan"


def test_a_missing_index_with_managed_files_is_a_problem_until_recovered(env):
    store, root, workspace, clock = env
    a = store.create("A", "a body").document.record
    (docs_dir(root) / "index.json").unlink()
    with pytest.raises(UnreadableStore):
        store.create("B", "b")
    assert not (docs_dir(root) / "index.json").exists()
    assert store.recovery.recover()["documents"] == 1
    assert store.get(a.id).content == "a body"


def test_diagnose_healthy_and_absent(tmp_path):
    store, root, workspace, clock = make_store(tmp_path)
    assert [f.to_dict() for f in diagnose(store)] == [
        {"level": "ok", "subject": str(root / "documents"), "message": "no Documents yet (created by the first create)",
         "advice": ""}]
    store.create("A", "a")
    findings = diagnose(store)
    assert findings[0].level == "ok" and findings[0].message.startswith("valid: 1 active (")
    assert all(f.level == "ok" for f in findings)


# ================================================================================ TypeScript roots


def test_a_typescript_root_is_read_and_written_back_byte_exact(tmp_path):
    root = tmp_path / "root"
    write_ts_root(root)
    store = DocumentStore(root, tmp_path, clock=Clock())
    state = store.read()
    assert state.revision == TS_REVISION and state.problem is None
    doc = store.get("3f1c2a9e-5b7d-4e2f-9a10-2b3c4d5e6f70")
    assert doc.content == "# Release runbook\n\n1. 数据库迁移后灰度阶段顺序\n2. Roll back when error rate > 2%"
    assert [h.record.id for h in store.search.find("灰度阶段").results] == [doc.record.id]
    assert store.freshness.refresh().adopted == []
    assert {k: v.encode() for k, v in TS_FILES.items()} == {
        k: (root / k).read_bytes() for k in TS_FILES}  # reads and refresh rewrote nothing
    # a mutation rewrites the index: the untouched record keeps its exact bytes, the new one follows the format
    store.moves.restore("8a7b6c5d-4e3f-4a1b-8c9d-0e1f2a3b4c5d")
    records = indexformat.parse_index(index_bytes(root)).records
    original = indexformat.parse_index(TS_FILES["documents/index.json"].encode()).records[0]
    # the only change to the untouched record: the get/search access time, folded in by the commit
    assert records[0] == original.with_changes(last_accessed_at="2026-09-15T08:00:00.000Z")
    assert index_bytes(root) == indexformat.serialize_index(records)
    restored = records[1]
    assert (root / restored.relative_path).read_text() == model.render_markdown(
        restored, "步2 重跑gen-itgc后50条悬空引用清零\nControl: \x01 end")
    assert not (root / TS_ARCHIVED).exists() and (root / TS_ACTIVE).exists()


def test_legacy_relative_paths_resolve_under_the_storage_root(tmp_path):
    root = tmp_path / "root"
    write_ts_root(root)
    path = root / "documents" / "index.json"
    path.write_text(path.read_text().replace('"relativePath": "documents/', '"relativePath": ".mnemon/documents/'))
    store = DocumentStore(root, tmp_path)
    assert store.get("3f1c2a9e-5b7d-4e2f-9a10-2b3c4d5e6f70").path == str(root / TS_ACTIVE)


# ================================================================================ cover


def test_cover_block_for_the_wake_snapshot(env):
    store, root, workspace, clock = env
    for i in range(4):
        store.create(f"Doc {i}", f"body {i}", description=f"what {i} is")
        clock.tick(1)
    archived = store.create("Archived", "x").document.record
    store.moves.archive(archived.id, 1)
    first = store.list().documents[0].record
    clock.tick(1)
    store.get(first.id)
    cover = store.cover(6553)
    lines = cover.text.splitlines()
    usage = store.list().usage
    assert lines[:2] == ["MNEMON PROJECT DOCUMENTS", f"Active: 4 documents, {usage.active_bytes} of 10485760 UTF-8 bytes; archived: 1"]
    assert lines[2].startswith("Search before reading")
    assert lines[3:] == ["Recently accessed:", "- Doc 0 — what 0 is", "- Doc 3 — what 3 is", "- Doc 2 — what 2 is",
                         "- Doc 1 — what 1 is"]
    assert cover.revision == store.read().revision
    with pytest.raises(InvalidInput):
        store.cover(-1)


# ================================================================================ create from file


@pytest.mark.parametrize("text,name,title", [
    ("intro\n\n# Deploy guide #\n\nsteps", "notes.md", "Deploy guide"),
    ("Setext Title\n============\n\nbody\n# Later", "x.md", "Setext Title"),
    ("---\ntitle: x\n---\n## From   heading\nbody", "a.md", "From heading"),
    ("no heading at all", "release.notes.md", "release.notes"),
    ("no heading", "Makefile", "Makefile"),
    ("#hashtag is not a heading", "tags.txt", "tags"),
    ("# " + "t" * 200, "long.md", "t" * 160),
])
def test_suggested_titles(text, name, title):
    assert model.suggest_title(text, name) == title


def test_create_document_from_a_workspace_file(env):
    store, root, workspace, clock = env
    source = workspace / "docs" / "runbook.md"
    source.parent.mkdir()
    source.write_text("\ufeff# Release runbook\n\nShip it.\n")
    pin_ns = 10**18
    os.utime(source, ns=(pin_ns, pin_ns))
    result = store.create_from_file(source)
    rec = result.document.record
    assert (rec.title, rec.source_paths, result.document.content) == ("Release runbook", ("docs/runbook.md",),
                                                                     "# Release runbook\n\nShip it.")
    assert source.read_text() == "\ufeff# Release runbook\n\nShip it.\n" and source.stat().st_mtime_ns == pin_ns
    assert store.create_from_file("docs/runbook.md", title="Custom").document.record.title == "Custom"


def test_create_from_file_refuses_bad_files(env, tmp_path):
    store, root, workspace, clock = env
    (workspace / "bin.dat").write_bytes(b"\xff\xfe\x00")
    (workspace / "empty.md").write_text("  \n")
    outside = tmp_path / "outside.md"
    outside.write_text("# Outside")
    for path, field in [(workspace / "nope.md", "path"), (workspace, "path"), (workspace / "bin.dat", "path"),
                        (workspace / "empty.md", "content"), (outside, "sourcePaths[0]")]:
        with pytest.raises(InvalidInput) as info:
            store.create_from_file(path)
        assert info.value.field == field
    assert not (root / "documents").exists()


def test_access_notes_are_flushed_first_at_once_then_at_most_every_interval(tmp_path):
    store, root, workspace, clock = make_store(tmp_path, access_flush_seconds=3600)
    a = store.create("A", "alpha").document.record
    b = store.create("B", "beta").document.record
    side = root / "documents" / ".access.json"
    reader = DocumentStore(root, workspace, clock=clock, access_flush_seconds=3600)
    clock.tick(1)
    reader.get(a.id)  # the first read of a process is written at once
    assert json.loads(side.read_text())["lastAccessedAt"] == {a.id: "2026-09-15T08:00:01.000Z"}
    clock.tick(1)
    reader.get(b.id)  # within the interval: pending only
    assert json.loads(side.read_text())["lastAccessedAt"] == {a.id: "2026-09-15T08:00:01.000Z"}
    reader.close()
    assert json.loads(side.read_text())["lastAccessedAt"][b.id] == "2026-09-15T08:00:02.000Z"
