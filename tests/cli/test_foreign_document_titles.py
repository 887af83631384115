"""A credential another program wrote into a document's title or description in ``documents/index.json`` is shown
redacted by every path that shows them (mnemon_ls/documents/shown.py): the wake (command line, session-start hook,
MCP ``mnemon_wake``), ``doc list``, ``doc get`` and ``doc search``; the index and the managed file stay as they are.
And a document's file name never carries a credential, even when its title does (``--secrets allow``).

The value is written into ``index.json`` by hand, as the plugin, a script or a person's editor would; every command is
the real command line (or the real MCP server) in a real git repository.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from tests.cli.test_foreign_secrets import SECRET, run, store  # noqa: F401  (store: the fixture)

TITLE = "Staging deploy"
SHOWN_LINE = "- Staging deploy [redacted:github-token] — token is [redacted:github-token] here\n"


def hand_written(repo: Path, root: Path) -> tuple[str, dict[Path, bytes]]:
    """A document created through mnemon-ls, then its title and description in ``index.json`` given a token by hand
    (the managed file is not touched). Returns the document id and the bytes of every file under ``documents/``
    but the derived search index."""
    created = json.loads(run(repo, root, "doc", "create", "--title", TITLE, "--description", "How the box is "
                                                                                              "deployed",
                             "--content", "Steps.", "--json").stdout)
    document_id = created["document"]["id"]
    index = root / "documents" / "index.json"
    data = json.loads(index.read_text())
    data["documents"][0].update(title=f"{TITLE} {SECRET}", description=f"token is {SECRET} here")
    index.write_bytes((json.dumps(data, indent=2, ensure_ascii=False) + "\n").encode())
    return document_id, stored(root)


def stored(root: Path) -> dict[Path, bytes]:
    """The bytes of ``index.json`` and the managed files (not the derived search index or access log)."""
    documents = root / "documents"
    return {p: p.read_bytes() for p in [documents / "index.json", *documents.glob("active/*.md")]}


def notice(root: Path, document_id: str) -> str:
    return (f"{root / 'documents' / 'index.json'}: document {document_id[:8]} title and description hold what looks "
            "like a credential (github-token) that another program wrote; shown redacted, the index is unchanged: "
            "`mnemon-ls redact --apply` replaces it")


def test_the_wake_and_the_session_start_hook_show_a_hand_written_title_redacted(store):
    repo, root = store
    document_id, before = hand_written(repo, root)
    wake = run(repo, root, "wake").stdout
    hook = run(repo, root, "hook", "session-start", stdin=json.dumps({"cwd": str(repo)})).stdout
    for out in (wake, hook):
        assert SECRET not in out
        assert "Recently accessed:\n" + SHOWN_LINE + f"Notice: {notice(root, document_id)}\n" in out, out
    assert stored(root) == before
    raw = run(repo, root, "wake", secrets="allow").stdout
    assert f"- {TITLE} {SECRET} — token is {SECRET} here\n" in raw and "another program wrote" not in raw
    assert stored(root) == before


def test_the_mcp_wake_shows_a_hand_written_title_redacted(store):
    from tests.mcp.conftest import answer, mcp_session, server_env

    repo, root = store
    document_id, before = hand_written(repo, root)

    async def wake() -> str:
        args = ["--workspace", str(repo), "--scope", "custom", "--data-dir", str(root)]
        env = server_env(MNEMON_SEMANTIC="off", MNEMON_RUNTIME_USER_SCOPE="storage")
        async with mcp_session(args, cwd=repo, env=env) as session:
            return await answer(session, "mnemon_wake", {})

    out = asyncio.run(wake())
    assert SECRET not in out
    assert out.endswith("Recently accessed:\n" + SHOWN_LINE + f"Notice: {notice(root, document_id)}"), out
    assert stored(root) == before


def test_doc_list_get_and_search_show_a_hand_written_title_redacted(store):
    repo, root = store
    document_id, before = hand_written(repo, root)
    listed = run(repo, root, "doc", "list")
    assert listed.stdout == (f"{document_id[:8]}  r1  active    {TITLE} [redacted:github-token]\n"
                             f"note: {notice(root, document_id)}\n1 active (357/10485760 bytes), 0 archived\n")
    data = json.loads(run(repo, root, "doc", "list", "--json").stdout)
    assert [(d["title"], d["description"]) for d in data["documents"]] == [
        (f"{TITLE} [redacted:github-token]", "token is [redacted:github-token] here")]
    assert data["notices"] == [notice(root, document_id)]
    got = run(repo, root, "doc", "get", document_id, "--json")
    document = json.loads(got.stdout)
    assert (document["title"], document["description"], document["notices"]) == (
        f"{TITLE} [redacted:github-token]", "token is [redacted:github-token] here", [notice(root, document_id)])
    found = run(repo, root, "doc", "search", "staging")
    assert SECRET not in found.stdout + got.stderr + listed.stderr
    assert found.stdout.split("\n")[0].endswith(f"{document_id[:8]}  {TITLE} [redacted:github-token]")
    assert stored(root) == before  # no read rewrote the index (nor the managed file)
    raw = json.loads(run(repo, root, "doc", "list", "--json", secrets="allow").stdout)
    assert raw["documents"][0]["title"] == f"{TITLE} {SECRET}" and raw["notices"] == []
    assert stored(root) == before


def test_a_title_kept_under_allow_gives_no_credential_to_the_file_name(store):
    repo, root = store
    created = json.loads(run(repo, root, "doc", "create", "--title", f"{TITLE} {SECRET}", "--content", "Steps.",
                             "--json", "--secrets", "allow").stdout)
    document = created["document"]
    assert document["title"] == f"{TITLE} {SECRET}"  # the title follows allow
    assert document["filename"] == f"staging-deploy-redacted-github-token-{document['id'][:8]}.md"
    names = [p.name for p in root.rglob("*")]
    assert document["filename"] in names and not any(SECRET.lower() in n.lower() for n in names)
    doctor = run(repo, root, "doctor", check=False)
    assert SECRET.lower() not in (doctor.stdout + doctor.stderr).lower()


def test_an_archived_title_is_redacted_where_it_is_shown_and_the_wake_only_counts_it(store):
    repo, root = store
    created = json.loads(run(repo, root, "doc", "create", "--title", TITLE, "--content", "Steps.", "--json").stdout)
    document_id = created["document"]["id"]
    run(repo, root, "doc", "archive", document_id, "--revision", "1")
    index = root / "documents" / "index.json"
    data = json.loads(index.read_text())
    data["documents"][0]["title"] = f"{TITLE} {SECRET}"
    index.write_bytes((json.dumps(data, indent=2, ensure_ascii=False) + "\n").encode())
    before = index.read_bytes()
    wake = run(repo, root, "wake").stdout
    assert "Active: 0 documents, 0 of 10485760 UTF-8 bytes; archived: 1\n" in wake
    assert SECRET not in wake and "another program wrote" not in wake  # not listed there: nothing to redact
    listed = run(repo, root, "doc", "list", "--status", "archived").stdout
    assert listed.startswith(f"{document_id[:8]}  r2  archived  {TITLE} [redacted:github-token]\nnote: "
                             f"{root / 'documents' / 'index.json'}: document {document_id[:8]} title holds what "
                             "looks like a credential (github-token)"), listed
    assert index.read_bytes() == before
