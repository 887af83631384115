"""Invariant 9 on every write path: no credential value is written anywhere under the root.

Each credential format (tests/redact_samples.py) goes through the Runtime (add, replace by oldText,
compaction candidates), Documents (create with title/description/body, update, create from a file,
archive summary) and Memory Spaces (remember content/tags/entities, space descriptions) with the real
stores; then every byte of every file under the root (SQLite pages, -wal and -shm files, side indexes
included) is searched for every value, case-insensitively (a title's file name is lower-cased).
``mnemon-ls redact --apply`` is run on a store written with ``secrets=allow`` (what an older version
left) and the same search must come back empty; ``reject`` leaves the disk byte-identical.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
from pathlib import Path

import pytest

from mnemon_ls.errors import InvalidInput
from mnemon_ls.host import WorkspaceHost
from mnemon_ls.runtime import ops
from mnemon_ls.settings import load_settings
from tests.helpers.procs import tree_snapshot
from tests.redact_samples import ALL_VALUES, AWS_ID, GITHUB, PASSWORD, PROSE, SAMPLES, SLACK_BOT, STRIPE, bare
from tests.helpers.zygote import mnemon_command

MNEMON_LS = mnemon_command()


def leaks(root: Path, values=ALL_VALUES) -> list[tuple[str, str]]:
    """(file, value) for every value found in any file's raw bytes or any path name under ``root``."""
    found = []
    needles = [(v, v.lower().encode("utf-8")) for v in values]
    for current, dirs, files in os.walk(root):
        for name in [*dirs, *files]:
            for value, needle in needles:
                if needle.decode() in name.lower():
                    found.append((os.path.join(current, name), value))
        for name in files:
            path = os.path.join(current, name)
            with open(path, "rb") as handle:
                data = handle.read().lower()
            found.extend((path, value) for value, needle in needles if needle in data)
    return found


def _host(root: Path, ws: Path, secrets: str = "redact") -> WorkspaceHost:
    settings = load_settings({"storageScope": "custom", "dataDir": str(root), "secrets": secrets,
                              "runtimeMemory": {"memoryLimitBytes": 1_048_576, "userLimitBytes": 1_048_576}})
    return WorkspaceHost(ws, settings)


def _short(text: str, limit: int) -> str | None:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else None


def write_everything(host: WorkspaceHost, ws: Path) -> list[dict]:
    """Every sample through every write path of the three Sources; returns the receipts."""
    receipts = []
    runtime = host.runtime
    for i, (kind, text, secret) in enumerate(SAMPLES):
        unique = f"{i}: {text}"
        receipts.append(runtime.mutate(ops.validate_request("add", "memory", unique)).to_dict())
        receipts.append(runtime.mutate(ops.validate_request("replace", "memory", f"{unique} v2", unique)).to_dict())
        receipts.append(runtime.mutate(ops.validate_request("add", "user", f"{i} user: {text}")).to_dict())
    state = runtime.read()
    candidates = [{"content": e.content, "importance": e.importance} for e in state.user]
    candidates.append({"content": f"compacted {GITHUB['ghp']}", "importance": "normal"})
    store = runtime.store_for("user")
    receipts.append(runtime.compact_target(store.read().revision, "user", candidates).to_dict())

    docs = host.documents
    for i, (kind, text, secret) in enumerate(SAMPLES):
        title = _short(f"{i} {text}", 150) or f"{i} note"
        created = docs.create(title, text, description=_short(text, 500))
        receipts.append(created.to_dict())
        doc_id = created.document.record.id
        title = _short(f"{i} v2 {secret}", 150) if bare(kind, secret) else f"{i} v2"
        receipts.append(docs.update(doc_id, content=f"{text}\nagain", title=title).to_dict())
        if i % 5 == 0:
            receipts.append(docs.moves.archive(doc_id, None, summary=_short(text, 900)).to_dict())
    source = ws / "notes.md"
    source.write_text("# Deploy " + AWS_ID + "\n\n" + "\n\n".join(text for _, text, _ in SAMPLES) + "\n")
    receipts.append(docs.create_from_file(source).to_dict())
    docs.search.find("deploy")

    spaces = host.spaces
    spaces.create_space("Project", f"decisions; admin password={PASSWORD}", active=True)
    for i, (kind, text, secret) in enumerate(SAMPLES):
        tags = [f"t{i}", secret] if len(secret) <= 90 and bare(kind, secret) else [f"t{i}"]
        entities = [secret] if len(secret) <= 190 and bare(kind, secret) else None
        receipts.append(spaces.remember(f"{i}: {text}", tags=tags, entities=entities).to_dict())
    host.recall("deploy")
    host.close()
    source.unlink()  # the workspace file is the person's own, outside the root
    return receipts


def test_every_format_through_every_store_api_leaves_no_value_under_the_root(tmp_path: Path):
    root, ws = tmp_path / "root", tmp_path / "ws"
    ws.mkdir()
    receipts = write_everything(_host(root, ws), ws)
    assert leaks(root) == []
    counted = [r["redacted"] for r in receipts if r.get("redacted")]
    assert len(counted) > 3 * len(SAMPLES)
    kinds = set().union(*(c["kinds"] for c in counted))
    assert kinds >= {kind for kind, _, _ in SAMPLES}
    # the stores still work on the redacted text: wake, search, recall
    host = _host(root, ws)
    snapshot, _ = host.wake("main")
    assert "[redacted:aws-access-key-id]" in snapshot.text
    assert host.documents.search.find("redacted").to_dict()["total"] > 0
    assert host.recall("redacted github token").results
    host.close()
    assert leaks(root) == []


def test_old_text_quoting_the_original_secret_selects_the_redacted_entry(tmp_path: Path):
    host = _host(tmp_path / "root", tmp_path)
    text = f"deploy as {AWS_ID} from CI"
    added = host.runtime.mutate(ops.validate_request("add", "memory", text))
    assert added.to_dict()["added"] == "deploy as [redacted:aws-access-key-id] from CI"
    assert added.to_dict()["redacted"] == {"count": 1, "kinds": {"aws-access-key-id": 1}, "fields": ["content"]}
    removed = host.runtime.mutate(ops.validate_request("remove", "memory", old_text=text))
    assert removed.to_dict()["removed"] == "deploy as [redacted:aws-access-key-id] from CI"
    assert "redacted" not in removed.to_dict()  # a selector is not stored, so nothing is counted


def test_prose_is_stored_exactly(tmp_path: Path):
    root = tmp_path / "root"
    host = _host(root, tmp_path)
    for i, text in enumerate(PROSE):
        receipt = host.runtime.mutate(ops.validate_request("add", "memory", f"{i} {text}")).to_dict()
        assert receipt["added"] == f"{i} {text}" and "redacted" not in receipt
    created = host.documents.create(PROSE[0], "\n".join(PROSE), description=PROSE[1]).to_dict()
    assert "redacted" not in created and created["document"]["title"] == PROSE[0]
    assert host.documents.get(created["document"]["id"]).to_dict()["content"] == "\n".join(PROSE)
    host.spaces.create_space("P", PROSE[1], active=True)
    remembered = host.spaces.remember(PROSE[0], tags=["api", "token-refresh"]).to_dict()
    assert "redacted" not in remembered and remembered["tags"] == ["api", "token-refresh"]
    host.close()


def test_reject_mode_refuses_every_write_and_leaves_the_disk_byte_identical(tmp_path: Path):
    root, ws = tmp_path / "root", tmp_path / "ws"
    ws.mkdir()
    host = _host(root, ws, "reject")
    host.runtime.mutate(ops.validate_request("add", "memory", "seed entry"))
    doc = host.documents.create("Seed", "seed body").document.record.id
    host.spaces.create_space("P", "seed", active=True)
    host.spaces.remember("seed item")
    host.close()
    before = tree_snapshot(root)
    host = _host(root, ws, "reject")
    attempts = []
    for kind, text, secret in SAMPLES:
        attempts += [
            ("content", lambda t=text: host.runtime.mutate(ops.validate_request("add", "memory", t))),
            ("content", lambda t=text: host.runtime.mutate(ops.validate_request("replace", "memory", t, "seed"))),
            ("content", lambda t=text: host.documents.create("T", t)),
            ("content", lambda t=text: host.documents.update(doc, content=t)),
            ("content", lambda t=text: host.spaces.remember(t)),
        ]
    attempts += [
        ("title", lambda: host.documents.create(f"T {GITHUB['ghp']}", "body")),
        ("description", lambda: host.documents.create("T", "body", description=f"password: {PASSWORD}")),
        ("tags[0]", lambda: host.spaces.remember("x", tags=[GITHUB["gho"]])),
        ("entities[0]", lambda: host.spaces.remember("x", entities=[AWS_ID])),
        ("description", lambda: host.spaces.create_space("Q", f"token={GITHUB['ghs']}")),
        ("branches[0]", lambda: host.runtime.mutate(ops.validate_request("add", "memory", "x",
                                                                          branches=[GITHUB["ghu"]]))),
    ]
    for number, (field, attempt) in enumerate(attempts):
        with pytest.raises(InvalidInput) as caught:
            attempt()
            pytest.fail(f"attempt {number} ({field}) was not refused")
        assert caught.value.field == field
        assert "kind" in caught.value.data and isinstance(caught.value.data["position"], int)
        message = json.dumps(caught.value.to_dict())
        assert not any(v in message for v in ALL_VALUES), message
    host.close()
    assert tree_snapshot(root) == before


def test_credential_in_a_branch_or_a_space_name_is_invalid_and_writes_nothing(tmp_path: Path):
    root = tmp_path / "root"
    host = _host(root, tmp_path)
    with pytest.raises(InvalidInput) as caught:
        host.runtime.mutate(ops.validate_request("add", "memory", "x", branches=["main", GITHUB["ghp"]]))
    assert caught.value.field == "branches[1]" and caught.value.data["kind"] == "github-token"
    with pytest.raises(InvalidInput) as caught:
        host.spaces.create_space(f"team {GITHUB['ghr']}", "d")
    assert caught.value.field == "name"
    with pytest.raises(InvalidInput) as caught:
        host.spaces.remember("x", branch=AWS_ID)
    assert caught.value.field == "branch"
    host.close()
    assert tree_snapshot(root) == {}


# ---------------------------------------------------------------------------------- CLI (real processes)


def _cli(tmp_path: Path, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("MNEMON_", "GIT_")) or k == "MNEMON_SEMANTIC"}  # tests/conftest.py sets it
    env["HOME"] = str(tmp_path / "home")
    return subprocess.run([*MNEMON_LS, *args, "--data-dir", str(tmp_path / "root")], cwd=tmp_path / "ws",
                          env=env, capture_output=True, text=True, input=stdin, timeout=60)


@pytest.fixture
def cli_dirs(tmp_path: Path) -> Path:
    (tmp_path / "ws").mkdir()
    (tmp_path / "home").mkdir()
    return tmp_path


def test_cli_writes_report_the_redaction_and_leave_no_value(cli_dirs: Path):
    tmp = cli_dirs
    pem_text = next(t for k, t, _ in SAMPLES if k == "private-key")
    out = _cli(tmp, "runtime", "add", "--content", "-", stdin=pem_text)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines()[-1] == "Redacted 1 value that looked like credentials (private-key)."
    out = _cli(tmp, "runtime", "add", "--content", f"push with {GITHUB['ghp']} and {AWS_ID}", "--json")
    data = json.loads(out.stdout)
    assert data["added"] == "push with [redacted:github-token] and [redacted:aws-access-key-id]"
    assert data["redacted"] == {"count": 2, "kinds": {"aws-access-key-id": 1, "github-token": 1}, "fields": ["content"]}
    out = _cli(tmp, "runtime", "replace", "--old-text", f"push with {GITHUB['ghp']}", "--content", "rotated")
    assert out.returncode == 0, out.stderr
    out = _cli(tmp, "doc", "create", "--title", f"Deploy {GITHUB['gho']}", "--content", f"password={PASSWORD}",
               "--json")
    document = json.loads(out.stdout)["document"]
    assert document["title"] == "Deploy [redacted:github-token]"
    assert document["relativePath"].startswith("documents/active/deploy-redacted-github-token-")
    assert _cli(tmp, "space", "create", "--name", "P", "--description", "d", "--active").returncode == 0
    out = _cli(tmp, "remember", f"stripe {STRIPE}", "--tag", GITHUB["ghs"], "--json")
    assert json.loads(out.stdout)["tags"] == ["[redacted:github-token]"]
    out = _cli(tmp, "runtime", "add", "--content", f"x {GITHUB['ghu']}", "--secrets", "reject")
    assert out.returncode == 2 and GITHUB["ghu"] not in out.stderr
    assert "content: holds what looks like a GitHub token" in out.stderr and "character position 2" in out.stderr
    assert leaks(tmp / "root") == []


def test_redact_apply_cleans_a_store_an_older_version_wrote(cli_dirs: Path):
    """Secrets written with ``secrets=allow`` everywhere (as before this feature), the side indexes
    built, a hand edit saved under runtime/edits/: doctor reports kinds and places only, ``redact``
    is a dry run, ``redact --apply`` leaves no value in any byte under the root."""
    tmp = cli_dirs
    root, ws = tmp / "root", tmp / "ws"
    host = _host(root, ws, "allow")
    write_everything(host, ws)
    # a hand edit of MEMORY.md with a secret, preserved by the next write into runtime/edits/
    memory_md = root / "runtime" / "MEMORY.md"
    memory_md.write_text(memory_md.read_text() + f"\u00a7\nhand typed {GITHUB['ghp']}\n")
    host = _host(root, ws, "allow")
    host.runtime.mutate(ops.validate_request("add", "memory", "after the hand edit"))
    host.close()
    assert any(p.name.endswith("MEMORY.md") for p in (root / "runtime" / "edits").iterdir())
    # a row an older tool deleted (the Mnemon CLI's prune/gc DELETE): its bytes stay in a free page
    gone = f"deleted row {GITHUB['gho']} " + "padding " * 400  # a page of its own, then the freelist
    db = sqlite3.connect(root / "data" / "default" / "mnemon.db")
    db.execute("PRAGMA secure_delete=OFF")
    db.execute("INSERT INTO insights(id, content, created_at, updated_at) VALUES('gone', ?, 'x', 'x')", (gone,))
    db.commit()
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.execute("DELETE FROM insights WHERE id = 'gone'")
    db.commit()
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.close()
    assert any(f.endswith("mnemon.db") and v == GITHUB["gho"] for f, v in leaks(root)), "no free-page residue"
    assert leaks(root), "the allow-mode store should hold the values"

    doctor = _cli(tmp, "doctor", "--json")
    report = json.loads(doctor.stdout)
    assert report["secrets"] and not any(v in doctor.stdout for v in ALL_VALUES)
    assert {f["kind"] for f in report["secrets"]} >= {kind for kind, _, _ in SAMPLES}
    dry = _cli(tmp, "redact")
    assert dry.returncode == 1 and "run `mnemon-ls redact --apply`" in dry.stdout
    assert not any(v in dry.stdout for v in ALL_VALUES)
    assert leaks(root), "a dry run changes nothing"

    applied = _cli(tmp, "redact", "--apply", "--json")
    assert applied.returncode == 0, applied.stdout + applied.stderr
    assert json.loads(applied.stdout)["findings"] == []
    assert leaks(root) == []
    wal = root / "data" / "default" / "mnemon.db-wal"
    assert not wal.exists() or wal.stat().st_size == 0  # checkpointed (removed when the last connection closed)

    # everything still works, on the redacted text, and the old selector still finds its entry
    out = _cli(tmp, "runtime", "replace", "--old-text", f"0: {SAMPLES[0][1]} v2", "--content", "zero", "--json")
    assert out.returncode == 0 and json.loads(out.stdout)["replaced"]["to"] == "zero", out.stderr
    found = json.loads(_cli(tmp, "doc", "search", "redacted", "--json").stdout)
    assert found["total"] > 0 and all(v not in json.dumps(found) for v in ALL_VALUES)
    recalled = json.loads(_cli(tmp, "recall", "redacted github token", "--json").stdout)
    assert recalled["results"] and "[redacted:github-token]" in recalled["results"][0]["content"]
    assert _cli(tmp, "doctor", "--json").stdout.count('"secrets": []') == 1
    assert leaks(root) == []


def test_redact_apply_cleans_the_kept_store_of_a_deleted_space(cli_dirs: Path):
    """A deleted space's store is kept under the root (``data/.deleted/``, with its catalog entry beside it):
    ``doctor`` finds a value stored there with ``secrets=allow`` and ``redact --apply`` leaves none of it."""
    tmp = cli_dirs
    root, ws = tmp / "root", tmp / "ws"
    host = _host(root, ws, "allow")
    host.spaces.create_space("Project", "decisions", active=True)
    old = host.spaces.create_space("Old", f"old notes; admin password={PASSWORD}").record.id
    host.spaces.remember(f"push with {GITHUB['ghp']}", space_id=old)
    kept = Path(host.spaces.delete_space(old, confirm=True)["keptAt"])
    host.close()
    found = leaks(root, [PASSWORD, GITHUB["ghp"]])
    assert {Path(f).parent for f, _ in found} == {kept, kept.parent}, found  # the store and its entry only
    doctor = json.loads(_cli(tmp, "doctor", "--json").stdout)
    assert {f["location"].split("/")[1] for f in doctor["secrets"]} == {".deleted"}
    applied = _cli(tmp, "redact", "--apply", "--json")
    assert applied.returncode == 0, applied.stdout + applied.stderr
    assert leaks(root, [PASSWORD, GITHUB["ghp"]]) == []
    with sqlite3.connect(f"file:{kept / 'mnemon.db'}?mode=ro", uri=True) as db:
        assert db.execute("SELECT content FROM insights").fetchall() == [("push with [redacted:github-token]",)]


def test_space_update_and_archive_summary_are_redacted_and_counted(tmp_path: Path):
    root = tmp_path / "root"
    host = _host(root, tmp_path)
    space = host.spaces.create_space("P", "facts", active=True).to_dict()
    updated = host.spaces.update_space(space["id"], description=f"bot token {SLACK_BOT}").to_dict()
    assert updated["description"] == "bot token [redacted:slack-token]"
    with pytest.raises(InvalidInput) as caught:
        host.spaces.update_space(space["id"], name=GITHUB["ghp"])
    assert caught.value.field == "name"
    created = host.documents.create("Runbook", "steps")
    archived = host.documents.moves.archive(created.document.record.id, None, summary=f"rotated {AWS_ID}").to_dict()
    assert archived["document"]["archiveSummary"] == "rotated [redacted:aws-access-key-id]"
    assert archived["redacted"] == {"count": 1, "kinds": {"aws-access-key-id": 1}, "fields": ["summary"]}
    host.close()
    assert leaks(root) == []


def test_edge_metadata_is_redacted(tmp_path: Path):
    root = tmp_path / "root"
    host = _host(root, tmp_path)
    host.spaces.create_space("P", "facts", active=True)
    a = host.spaces.remember("first item").id
    b = host.spaces.remember("second item").id
    space = host.spaces.list_spaces()[0].to_dict()["id"]
    linked = host.spaces.link(space, a, b, metadata={"why": f"both use {GITHUB['ghp']}"}).to_dict()
    assert linked["redacted"]["kinds"] == {"github-token": 1}
    host.close()
    assert leaks(root) == []
