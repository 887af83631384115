"""The Records Source operations (seed 002 sections 3 and 5) and the bad input of issue 12."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from mnemon_ls.errors import AmbiguousMatch, ConfirmationRequired, InvalidInput, NotFound
from mnemon_ls.records import RecordsSource
from tests.records.conftest import Clock


def files(source):
    out = {}
    for scope in source.available_scopes():
        path = source.location(scope).path
        out[scope] = path.read_bytes() if path.exists() else None
    return out


def test_create_is_user_authored_and_propose_is_a_pending_proposal(source):
    mine = source.create("project", "decision", "Storage", "We keep records in JSONL", tags=["storage"]).record
    assert (mine.provenance.kind, mine.governance.origin, mine.governance.verification) == ("user", "user-authored", "unverified")
    assert mine.governance.retention == "project-delete" and mine.scope_key == source.location("project").scope_key
    proposal = source.propose("project", "convention", "Tests", "Run pytest -n 2").record
    assert (proposal.provenance.kind, proposal.governance.origin) == ("agent", "model-suggested")
    assert proposal.governance.source_refs[0].model_dump() == {"kind": "session", "id": "s1"}
    assert proposal.is_proposal and not mine.is_proposal
    assert source.pending_proposals() == 1
    assert [r.id for r in source.list(proposals=True)] == [proposal.id]


def test_verify_reject_stale_edit_archive_forget(source):
    rid = source.propose("project", "fact", "Port", "The dev server listens on 8080").record.id
    verified = source.verify(rid).record
    assert verified.governance.verification == "verified" and verified.governance.verified_at is not None
    assert source.verify(rid).status == "skipped"
    assert source.pending_proposals() == 0
    stale = source.mark_stale(rid).record
    assert stale.governance.verification == "stale" and stale.governance.verified_at is None
    edited = source.edit(rid, content="The dev server listens on 9090").record
    assert edited.id == rid and edited.governance.revision == 2
    assert edited.governance.verification == "unverified" and edited.content_hash != verified.content_hash
    assert source.edit(rid, title="Dev port").record.governance.revision == 3
    assert source.reject(rid).record.governance.verification == "rejected"
    assert source.archive(rid).record.status == "archived"
    assert [r.id for r in source.list(status="archived")] == [rid]
    forgotten = source.forget(rid).record
    assert forgotten.status == "forgotten"
    assert source.list() == []  # forgotten records are hidden
    assert source.get(rid).content == "The dev server listens on 9090"  # and never deleted
    assert rid in source.location("project").path.read_text()
    before = files(source)
    with pytest.raises(InvalidInput) as caught:
        source.verify(rid)
    assert caught.value.field == "id" and "forgotten" in caught.value.rule
    assert source.forget(rid).status == "skipped"
    assert files(source) == before


def test_list_filters(source):
    a = source.create("project", "decision", "Cache", "Use an LRU cache", tags=["perf"]).record
    b = source.create("user", "preference", "Editor", "I use Neovim").record
    c = source.propose("session", "fact", "Build", "make build runs the LRU warmup").record
    assert {r.id for r in source.list()} == {a.id, b.id, c.id}
    assert [r.id for r in source.list(scopes=["user"])] == [b.id]
    assert [r.id for r in source.list(type="decision")] == [a.id]
    assert [r.id for r in source.list(tag="perf")] == [a.id]
    assert {r.id for r in source.list(text="lru")} == {a.id, c.id}
    assert [r.id for r in source.list(text="lru warmup")] == [c.id]
    assert [r.id for r in source.list(verification="unverified", scopes=["session"])] == [c.id]
    for bad in ({"type": "note"}, {"status": "gone"}, {"verification": "maybe"}, {"scopes": ["team"]},
                {"limit": 0}, {"limit": 1.5}):
        with pytest.raises(InvalidInput):
            source.list(**bad)


def test_user_file_is_partitioned_by_user_id(source, dsh_home):
    mine = source.create("user", "preference", "Tabs", "Ana likes tabs").record
    other = RecordsSource(None, user_id="bo", env={"DSH_HOME": str(dsh_home)}, clock=Clock())
    theirs = other.create("user", "preference", "Spaces", "Bo likes spaces").record
    assert source.location("user").path == other.location("user").path
    assert [r.id for r in source.list(scopes=["user"])] == [mine.id]
    assert [r.id for r in other.list(scopes=["user"])] == [theirs.id]
    with pytest.raises(NotFound):
        other.verify(mine.id)


def test_scope_paths_follow_the_seed(source, dsh_home, workspace):
    from mnemon_ls.records.paths import root_id, scope_key_hash
    key = f"s1|{root_id(workspace)}"
    assert source.location("session").scope_key == key
    assert source.location("session").path == dsh_home / "workspace-memory" / "sessions" / f"{scope_key_hash(key)}.jsonl"
    assert source.location("project").path == workspace / ".dsh" / "workspace-memory" / "records.jsonl"
    assert source.location("shared-project").path == workspace / ".dsh" / "workspace-memory" / "shared.jsonl"
    assert source.location("user").path == dsh_home / "workspace-memory" / "user.jsonl"


def test_records_home_is_dsh_home_else_the_data_dir_else_home_dot_dsh(monkeypatch, tmp_path):
    from mnemon_ls.records.paths import records_home

    monkeypatch.setenv("HOME", str(tmp_path))
    assert records_home({}) == tmp_path / ".dsh"
    assert records_home({"DSH_HOME": "  ~/x "}) == tmp_path / "x"
    # MNEMON_DATA_DIR moves the user and session scopes out of ~ too; DSH_HOME (seed 002's layout) wins
    assert records_home({"MNEMON_DATA_DIR": " ~/data "}) == tmp_path / "data"
    assert records_home({"MNEMON_DATA_DIR": str(tmp_path / "data"), "DSH_HOME": str(tmp_path / "dsh")}) == tmp_path / "dsh"
    assert records_home({"MNEMON_DATA_DIR": "  ", "DSH_HOME": ""}) == tmp_path / ".dsh"
    source = RecordsSource(tmp_path / "ws", session_id="s1", user_id="ana", env={"MNEMON_DATA_DIR": str(tmp_path / "d")})
    assert source.location("user").path == tmp_path / "d" / "workspace-memory" / "user.jsonl"
    assert source.location("session").path.parent == tmp_path / "d" / "workspace-memory" / "sessions"
    with pytest.raises(InvalidInput) as info:
        records_home({"MNEMON_DATA_DIR": "/a\x00b"})
    assert info.value.field == "MNEMON_DATA_DIR"


def test_shared_project_needs_confirmation(source):
    before = files(source)
    with pytest.raises(ConfirmationRequired) as caught:
        source.create("shared-project", "convention", "Style", "Black, 100 columns")
    assert caught.value.data["field"] == "confirm"
    assert files(source) == before
    rid = source.create("shared-project", "convention", "Style", "Black, 100 columns", confirm=True).record.id
    with pytest.raises(ConfirmationRequired):
        source.verify(rid)
    assert source.verify(rid, confirm=True).status == "committed"


@pytest.mark.skipif(shutil.which("git") is None, reason="needs the git CLI")
def test_dsh_gitignore_lets_only_shared_jsonl_be_committed(source, workspace):
    source.create("project", "fact", "private", "private project record")
    source.create("shared-project", "fact", "shared", "shared record", confirm=True)
    source.read("project")
    assert (workspace / ".dsh" / ".gitignore").exists()

    def ignored(rel: str) -> bool:
        return subprocess.run(["git", "-C", str(workspace), "check-ignore", "-q", rel]).returncode == 0

    assert ignored(".dsh/workspace-memory/records.jsonl")
    assert ignored(".dsh/workspace-memory/records.jsonl.lock")
    assert ignored(".dsh/workspace-memory/shared.jsonl.lock")
    assert ignored(".dsh/other-file")
    assert not ignored(".dsh/workspace-memory/shared.jsonl")
    status = subprocess.run(["git", "-C", str(workspace), "status", "--porcelain", "--untracked-files=all"],
                            capture_output=True, text=True).stdout
    assert ".dsh/workspace-memory/shared.jsonl" in status and "records.jsonl" not in status


@pytest.mark.parametrize("call, field", [
    (lambda s: s.create("project", "note", "t", "c"), "type"),
    (lambda s: s.create("team", "fact", "t", "c"), "recordScope"),
    (lambda s: s.create("project", "fact", "", "c"), "title"),
    (lambda s: s.create("project", "fact", "t", "   "), "content"),
    (lambda s: s.create("project", "fact", "t", "c", tags="x"), "tags"),
    (lambda s: s.create("project", "fact", "t" * 201, "c"), "title"),
    (lambda s: s.edit("memory:none", title="x"), "id"),
    (lambda s: s.edit("", title="x"), "id"),
])
def test_bad_input_names_the_field_and_changes_nothing(source, call, field):
    source.create("project", "fact", "seed", "seed record")
    before = files(source)
    with pytest.raises((InvalidInput, NotFound)) as caught:
        call(source)
    assert caught.value.data["field"] == field
    assert files(source) == before


def test_project_scope_without_workspace_is_refused(dsh_home):
    source = RecordsSource(None, user_id="ana", env={"DSH_HOME": str(dsh_home)})
    with pytest.raises(InvalidInput) as caught:
        source.create("project", "fact", "t", "c")
    assert caught.value.field == "recordScope"
    assert source.available_scopes() == ["user"]


@pytest.mark.parametrize("scope, session_id, user_id, field, rule", [
    ("session", "s\n1", "ana", "sessionId", "must not contain control characters (found U+000A)"),
    ("session", "s" * 1008, "ana", "sessionId", "must be at most 1007 characters (got 1008)"),
    ("user", "s1", "ana\x1b[2J", "userId", "must not contain control characters (found U+001B)"),
    ("user", "s1", "a" * 1025, "userId", "must be at most 1024 characters (got 1025)"),
])
def test_a_session_or_user_id_that_cannot_be_a_scope_key_is_refused_by_its_name(dsh_home, workspace, scope,
                                                                                   session_id, user_id, field, rule):
    """The session and user ids become every record's ``scopeKey``: a newline or an escape was stored in it, and
    a long one was refused only as ``scopeKey: string should have at most 1024 characters``, a field nobody gave."""
    source = RecordsSource(workspace, session_id=session_id, user_id=user_id, env={"DSH_HOME": str(dsh_home)},
                           clock=Clock())
    with pytest.raises(InvalidInput) as caught:
        source.create(scope, "fact", "t", "c")
    assert (caught.value.field, caught.value.data["rule"]) == (field, rule)
    assert not dsh_home.exists()
    longest = RecordsSource(workspace, session_id="s" * 1007, user_id="a" * 1024, env={"DSH_HOME": str(dsh_home)},
                            clock=Clock())
    assert longest.create(scope, "fact", "t", "c").to_dict()["scope"] == scope


def test_same_id_in_two_scopes_is_ambiguous(source):
    rid = source.create("project", "fact", "t", "c").record.id
    bundle = source.export(["project"])
    source.import_bundle(bundle, scope="user")
    with pytest.raises(AmbiguousMatch):
        source.verify(rid)
    assert source.verify(rid, scope="user").record.scope == "user"


def test_export_then_import_into_a_fresh_root(source, tmp_path):
    kept = source.create("project", "decision", "Storage", "JSONL records").record
    verified = source.propose("project", "fact", "Port", "8080").record
    source.verify(verified.id)
    gone = source.create("project", "fact", "Secret-ish", "forget me").record
    source.forget(gone.id)
    bundle = json.loads(json.dumps(source.export()))
    assert bundle["schemaVersion"] == 1 and isinstance(bundle["exportedAt"], int)
    assert {r["id"] for r in bundle["records"]} == {kept.id, verified.id}
    assert all("governance" in r for r in bundle["records"])

    fresh_ws = tmp_path / "fresh"
    fresh_ws.mkdir()
    fresh = RecordsSource(fresh_ws, user_id="ana", env={"DSH_HOME": str(tmp_path / "fresh-home")}, clock=Clock(1_770_000_000_000))
    receipt = fresh.import_bundle(bundle)
    assert (receipt["total"], receipt["imported"], receipt["skipped"], receipt["renamed"]) == (2, 2, 0, 0)
    restored = {r.id: r for r in fresh.list()}
    assert set(restored) == {kept.id, verified.id}
    for record in restored.values():
        assert record.governance.origin == "imported" and record.governance.verification == "unverified"
        assert record.governance.verified_at is None
        assert {"kind": "import", "id": record.id} in [r.model_dump() for r in record.governance.source_refs]
        assert record.scope_key == fresh.location("project").scope_key
    assert restored[kept.id].content == "JSONL records"
    again = fresh.import_bundle(bundle)
    assert (again["imported"], again["skipped"], again["renamed"]) == (0, 2, 0)
    bundle["records"][0]["content"] = "changed"
    from mnemon_ls.records import content_hash
    bundle["records"][0]["contentHash"] = content_hash("changed")
    third = fresh.import_bundle(bundle)
    assert (third["imported"], third["skipped"], third["renamed"]) == (1, 1, 1)
    assert third["ids"][0] != bundle["records"][0]["id"]


@pytest.mark.parametrize("mutate, field", [
    (lambda b: b.update(schemaVersion=2), "schemaVersion"),
    (lambda b: b["records"].append(dict(b["records"][0])), "records[2].id"),
    (lambda b: b["records"][0].update(status="forgotten"), "records[0].status"),
    (lambda b: b["records"][1].update(contentHash="sha256:" + "0" * 64), "records[1].contentHash"),
    (lambda b: b["records"][0]["governance"].update(verification="verified", verifiedAt=None), "records[0].governance.verifiedAt"),
    (lambda b: b.update(records="x"), "records"),
    # an id or a tag is kept and listed as given: a terminal escape in one reached the screen of `records list`
    (lambda b: b["records"][1].update(id="memory:x\x1b]0;title\x07\x1b[2J"), "records[1].id"),
    (lambda b: b["records"][0].update(tags=["ok", "a\nb"]), "records[0].tags[1]"),
])
def test_bad_bundle_is_refused_whole(source, mutate, field):
    source.create("project", "fact", "a", "one")
    source.propose("project", "fact", "b", "two")
    bundle = json.loads(json.dumps(source.export()))
    if field.endswith("verifiedAt"):
        bundle["records"][0]["governance"].pop("verifiedAt", None)
        bundle["records"][0]["governance"]["verification"] = "verified"
    else:
        mutate(bundle)
    before = files(source)
    with pytest.raises(InvalidInput) as caught:
        source.import_bundle(bundle, scope="project")
    assert caught.value.field == field
    assert files(source) == before


def test_a_credential_in_a_record_is_redacted_or_refused_before_it_is_written(tmp_path: Path) -> None:
    """Records are a write path too (DESIGN.md invariant 9): create, edit and import."""
    from mnemon_ls.records.model import content_hash
    from tests.redact_samples import GITHUB_PAT

    workspace, other = tmp_path / "ws", tmp_path / "other"
    workspace.mkdir()
    other.mkdir()
    env = {"DSH_HOME": str(tmp_path / "dsh")}
    source = RecordsSource(workspace, env=env)
    made = source.create("project", "fact", f"token {GITHUB_PAT}", f"push with {GITHUB_PAT}")
    assert made.record.content == "push with [redacted:github-token]"
    assert made.record.title == "token [redacted:github-token]"
    source.edit(made.record.id, scope="project", content=f"now {GITHUB_PAT}")
    bundle = source.export(scopes=["project"])
    bundle["records"][0]["content"] = f"imported {GITHUB_PAT}"
    bundle["records"][0]["contentHash"] = content_hash(bundle["records"][0]["content"])
    receipt = RecordsSource(other, env=env).import_bundle(bundle, scope="project")
    assert receipt["imported"] == 1

    def everything() -> bytes:
        return b"".join(p.read_bytes() for p in sorted(tmp_path.rglob("*")) if p.is_file())

    assert GITHUB_PAT.encode() not in everything()
    strict = RecordsSource(workspace, env=env, secrets="reject")
    before = everything()
    with pytest.raises(InvalidInput) as refused:
        strict.create("project", "fact", "t", f"push with {GITHUB_PAT}")
    assert refused.value.field == "content" and GITHUB_PAT not in refused.value.message
    assert everything() == before
