"""Secrets through the language server: one round trip per write route, receipts say what was redacted,
and no value is left in any byte under the storage root; ``secrets: reject`` from the client settings
refuses the write with the field, kind and position (never the value) and writes nothing."""

from __future__ import annotations

from pathlib import Path

import pygit2

from tests.lsp.conftest import Launcher, tree_state, uri
from tests.redact_samples import ALL_VALUES, AWS_ID, GITHUB, PASSWORD, PEM
from tests.test_redact_paths import leaks

REMEMBER = "mnemon.server.rememberSelection"


async def test_every_write_route_redacts_and_reports(lsp: Launcher, repo: pygit2.Repository, repo_dir: Path):
    client = await lsp.start("visual-studio-code", [repo_dir], {"mnemon": {"storageScope": "workspace"}})
    root = repo_dir / ".mnemon"
    added = await client.call("mnemon/runtime/mutate", {"action": "add", "content": f"deploy with {AWS_ID}\n{PEM}"})
    assert added["added"] == "deploy with [redacted:aws-access-key-id] [redacted:private-key]"
    assert added["redacted"] == {"count": 2, "kinds": {"aws-access-key-id": 1, "private-key": 1},
                                 "fields": ["content"]}
    replaced = await client.call("mnemon/runtime/mutate", {
        "action": "replace", "oldText": f"deploy with {AWS_ID}", "content": f"password={PASSWORD}"})
    assert replaced["replaced"]["to"] == "password=[redacted:password]"
    document = await client.call("mnemon/documents/create", {
        "title": f"Token {GITHUB['ghp']}", "content": f"clone with {GITHUB['gho']}", "description": "d"})
    assert document["document"]["title"] == "Token [redacted:github-token]"
    assert document["redacted"]["kinds"] == {"github-token": 2}
    await client.call("mnemon/spaces/create", {"name": "Project", "description": "facts", "active": True})
    remembered = await client.call("mnemon/remember", {"content": f"ci uses {GITHUB['ghs']}", "tags": [AWS_ID]})
    assert remembered["tags"] == ["[redacted:aws-access-key-id]"]
    assert remembered["redacted"]["count"] == 2
    source = repo_dir / "notes.py"
    source.write_text(f"TOKEN = '{GITHUB['ghu']}'\n")
    result = await client.command(REMEMBER, {"uri": uri(source), "text": f"token: {GITHUB['ghu']}"})
    assert "[redacted:github-token]" in str(result)
    source.unlink()
    await client.call("mnemon/recall", {"query": "ci uses"})
    await client.call("mnemon/documents/search", {"query": "clone"})
    assert leaks(root) == []


async def test_reject_setting_refuses_and_writes_nothing(lsp: Launcher, repo: pygit2.Repository, repo_dir: Path):
    client = await lsp.start("neovim", [repo_dir], {"mnemon": {"storageScope": "workspace", "secrets": "reject"}})
    root = repo_dir / ".mnemon"
    await client.call("mnemon/runtime/mutate", {"action": "add", "content": "seed"})
    before = tree_state(root)
    error = await client.call_error("mnemon/runtime/mutate", {"action": "add", "content": f"key {GITHUB['ghr']}"})
    assert error.data["code"] == "invalid-input" and error.data["field"] == "content"
    assert error.data["kind"] == "github-token" and error.data["position"] == 4
    assert not any(v in str(error.data) + str(error) for v in ALL_VALUES)
    error = await client.call_error("mnemon/documents/create", {"title": f"T {AWS_ID}", "content": "body"})
    assert error.data["field"] == "title" and error.data["kind"] == "aws-access-key-id"
    assert tree_state(root) == before


async def test_wake_shows_a_credential_another_program_wrote_redacted(lsp: Launcher, repo: pygit2.Repository,
                                                                        repo_dir: Path):
    """``mnemon/wake`` of the long-lived server: an entry another program wrote into ``memories.json`` holding a
    credential is shown redacted with where it is, the file is left as it is (mnemon_ls/runtime/foreign.py)."""
    from tests.cli.test_foreign_secrets import write_by_hand

    client = await lsp.start("visual-studio-code", [repo_dir], {"mnemon": {"storageScope": "workspace"}})
    await client.call("mnemon/runtime/mutate", {"action": "add", "content": "the suite runs with pytest -n 2"})
    first = await client.call("mnemon/wake", {})
    assert "another program wrote" not in first["text"]
    written = write_by_hand(repo_dir / ".mnemon", f"deploy with {GITHUB['ghp']}")
    wake = await client.call("mnemon/wake", {})
    assert GITHUB["ghp"] not in str(wake)
    assert "deploy with [redacted:github-token]" in wake["text"]
    assert "MEMORY.md entry 2 holds what looks like a credential (github-token) that another program wrote" in \
        wake["text"]
    assert (repo_dir / ".mnemon" / "runtime" / "memories.json").read_bytes() == written
