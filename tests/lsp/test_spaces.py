"""Memory Spaces through the LSP: ``mnemon/spaces/*``, ``mnemon/remember|recall|related|link|forget``, the
"Remember selection in space <name>" code action, branch-tag scoping on real git branches, and the wake cover.

Every test runs the real server on a real repository (``tests.gitrepo``; storageScope ``workspace``, so the
storage root is ``<repo>/.mnemon`` and the first space's store ``<repo>/.mnemon/data/default/mnemon.db``).
Branch switches are made with pygit2 while the server runs; recall probes the branch per request.
"""

from __future__ import annotations

import re
import hashlib
from pathlib import Path

import pygit2
from lsprotocol import types

from tests.gitrepo import create_branch, switch
from tests.lsp.conftest import BRANCH_CHANGED, Launcher, MnemonClient, stamp_view_revision, uri

REMEMBER = "mnemon.server.rememberSelection"
SHOW_WAKE = "mnemon.server.showWakeSnapshot"
CREATE_DOCUMENT = "mnemon.server.createDocumentFromFile"
UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
ISO_MS = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z")
ISO_S = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ")
NO_EDGES = {"temporal": 0, "entity": 0, "causal": 0, "semantic": 0}
CAPABILITIES = {"search": True, "browse": True, "graph": True, "entities": True, "related": True, "link": True,
                "forget": True, "merge": True, "write": "exact", "delete": "soft", "normalizedScores": True}
COVER_HEAD = ("MNEMON MEMORY SPACES\nLong-term memory lives in these active spaces. Before assuming a past "
              "decision, preference or fact is unknown, recall it from them (mnemon/recall).")


async def _space(client: MnemonClient, name: str = "Project", description: str = "Facts about this project") -> dict:
    return await client.call("mnemon/spaces/create", {"name": name, "description": description, "active": True})


async def _remember(client: MnemonClient, content: str, **extra) -> dict:
    receipt = await client.call("mnemon/remember", {"content": content, **extra})
    assert receipt["status"] == "committed" and receipt["action"] == "added", receipt
    assert UUID.fullmatch(receipt["id"]) and ISO_S.fullmatch(receipt["createdAt"])
    return receipt


def _hits(result: dict) -> list[tuple[str, str]]:
    return [(r["id"], r["content"]) for r in result["results"]]


def _source(result: dict) -> dict:
    [source] = result["sources"]
    return source


# ------------------------------------------------------------------------------------------ directory


async def test_create_space_and_remember(client: MnemonClient, repo_dir: Path):
    root = repo_dir / ".mnemon"
    ws = uri(repo_dir)
    assert await client.call("mnemon/spaces/list", {}) == {"spaces": [], "workspace": ws}
    space = await _space(client)
    assert ISO_MS.fullmatch(space["createdAt"]) and space["updatedAt"] == space["createdAt"]
    assert space == {
        "id": "default", "name": "Project", "description": "Facts about this project", "active": True,
        "providerId": "mnemon-native", "providerLabel": "Mnemon", "kind": "native", "driver": "embedded",
        "location": {"dataDir": str(root), "store": "default", "path": str(root / "data" / "default" / "mnemon.db")},
        "capabilities": CAPABILITIES, "available": True, "createdAt": space["createdAt"],
        "updatedAt": space["createdAt"], "workspace": ws,
    }
    assert (root / "data" / "default" / "mnemon.db").is_file()
    listed = await client.call("mnemon/spaces/list", {"activeOnly": True})
    assert listed == {"spaces": [{k: v for k, v in space.items() if k != "workspace"}], "workspace": ws}

    receipt = await _remember(client, "  We use   成语接龙 as the team game ", importance=4, category="preference")
    assert receipt == {
        "status": "committed", "action": "added", "spaceId": "default", "spaceName": "Project", "id": receipt["id"],
        "message": "Remembered in Project.", "activated": False, "edgesCreated": NO_EDGES, "entities": [],
        "tags": [], "createdAt": receipt["createdAt"], "workspace": ws,
    }
    # Content is stored trimmed (inner whitespace kept); byte-identical content is skipped as a duplicate.
    again = await client.call("mnemon/remember", {"content": "We use   成语接龙 as the team game", "spaceId": "default"})
    assert (again["status"], again["action"], again["id"], again["duplicateOf"]) == (
        "skipped", "skipped", receipt["id"], receipt["id"])
    assert again["message"] == f"Already remembered in Project as {receipt['id']}; no new item was stored."
    [hit] = (await client.call("mnemon/recall", {"query": "成语接龙"}))["results"]
    assert (hit["id"], hit["content"], hit["category"], hit["importance"]) == (
        receipt["id"], "We use   成语接龙 as the team game", "preference", 4)

    # A second space gets a UUID id and is inactive unless asked.
    second = await client.call("mnemon/spaces/create", {"name": "Archive", "description": "Old facts"})
    assert UUID.fullmatch(second["id"]) and second["active"] is False
    assert [s["id"] for s in (await client.call("mnemon/spaces/list", {}))["spaces"]] == ["default", second["id"]]
    assert [s["id"] for s in (await client.call("mnemon/spaces/list", {"activeOnly": True}))["spaces"]] == ["default"]


async def test_recall_cjk_and_identifiers(lsp: Launcher, repo, repo_dir: Path):
    client = await lsp.start("visual-studio-code", [repo_dir], {"mnemon": {"storageScope": "workspace"}})
    await _space(client)
    texts = {"game": "我们使用成语接龙作为团队游戏", "parser": "The function parse_config_file reads TOML settings",
             "camel": "Call getUserName before rendering the header"}
    ids = {"game": (await _remember(client, texts["game"], importance=4))["id"]}
    for key in ("parser", "camel"):
        ids[key] = (await _remember(client, texts[key]))["id"]
    for query, key in (("成语接龙", "game"), ("接龙", "game"), ("parse_config_file", "parser"), ("config", "parser"),
                       ("getUserName", "camel"), ("user name", "camel")):
        result = await client.call("mnemon/recall", {"query": query})
        assert _hits(result) == [(ids[key], texts[key])], query
        [hit] = result["results"]
        assert (hit["spaceId"], hit["spaceName"], hit["providerId"], hit["source"], hit["branches"]) == (
            "default", "Project", "mnemon-native", "user", []), query
        assert "branchLabel" not in hit and 0 < hit["score"] <= 1
        assert (result["query"], result["mode"], result["limit"], result["hidden"], result["truncated"],
                result["hint"]) == (query, "smart", 10, {"otherBranch": 0, "detachedHead": 0}, 0, None)
        assert result["branch"] == {"name": "main", "recall": "filter", "detachedHeadPolicy": "hide"}
    assert (await client.call("mnemon/recall", {"query": "成语接龙"}))["results"][0]["importance"] == 4
    nothing = await client.call("mnemon/recall", {"query": "kubernetes"})
    assert (nothing["results"], nothing["hint"]) == ([], "nothing matched")


async def test_related_link_forget(lsp: Launcher, repo, repo_dir: Path):
    client = await lsp.start("neovim", [repo_dir], {"mnemon": {"storageScope": "workspace"}})
    await _space(client)
    first = await _remember(client, "Releases are cut on Thursdays")
    second = await _remember(client, "The release checklist lives in docs/release.md")
    linked = await client.call("mnemon/link", {"spaceId": "default", "sourceId": first["id"],
                                               "targetId": second["id"], "edgeType": "causal", "weight": 0.8})
    assert linked == {
        "status": "committed", "action": "linked", "spaceId": "default", "spaceName": "Project", "id": first["id"],
        "message": f"Linked {first['id']} -> {second['id']} (causal).", "activated": False,
        "sourceId": first["id"], "targetId": second["id"], "edgeType": "causal", "weight": 0.8,
        "workspace": uri(repo_dir),
    }
    related = await client.call("mnemon/related", {"spaceId": "default", "id": first["id"], "edgeType": "causal"})
    assert {k: v for k, v in related.items() if k != "items"} == {
        "spaceId": "default", "spaceName": "Project", "id": first["id"], "workspace": uri(repo_dir)}
    assert [(i["id"], i["content"], i["depth"], i["edgeType"]) for i in related["items"]] == [
        (second["id"], "The release checklist lives in docs/release.md", 1, "causal")]

    forgotten = await client.call("mnemon/forget", {"spaceId": "default", "id": second["id"]})
    assert forgotten == {
        "status": "committed", "action": "deleted", "spaceId": "default", "spaceName": "Project",
        "id": second["id"], "message": f"Forgot {second['id']} (soft delete).", "activated": False,
        "workspace": uri(repo_dir),
    }
    assert (await client.call("mnemon/related", {"spaceId": "default", "id": first["id"]}))["items"] == []
    assert _hits(await client.call("mnemon/recall", {"query": "release checklist"})) == []
    assert _hits(await client.call("mnemon/recall", {"query": "Thursdays"})) == [
        (first["id"], "Releases are cut on Thursdays")]


# ------------------------------------------------------------------------------------------ code action


def _open(client: MnemonClient, path: Path, text: str) -> None:
    path.write_text(text)
    client.text_document_did_open(types.DidOpenTextDocumentParams(
        types.TextDocumentItem(uri=uri(path), language_id="python", version=1, text=text)))


async def _actions(client: MnemonClient, path: Path, rng: types.Range) -> list[types.CodeAction]:
    params = types.CodeActionParams(types.TextDocumentIdentifier(uri(path)), rng,
                                    types.CodeActionContext(diagnostics=[]))
    return list(await client.text_document_code_action_async(params) or [])


def _action(title: str, command: str, argument: dict) -> types.CodeAction:
    return types.CodeAction(title=title, kind="refactor.mnemon",
                            command=types.Command(title=title, command=command, arguments=(argument,)))


SOURCE = "import os\n# cache entries expire after   ten minutes\nprint(os.getcwd())\n"
SELECTION = types.Range(types.Position(1, 2), types.Position(1, 46))
SELECTED = "cache entries expire after   ten minutes"


async def test_remember_selection_in_space_action(client: MnemonClient, repo_dir: Path):
    source = repo_dir / "cache.py"
    _open(client, source, SOURCE)
    # the range as sent: the selection's end past the line's 42 characters comes clamped to the line's end
    base = {"uri": uri(source), "text": SELECTED,
            "range": {"start": {"line": 1, "character": 2}, "end": {"line": 1, "character": 42}}}
    plain = [
        _action("Remember selection", REMEMBER, base),
        _action("Remember selection for branch main", REMEMBER, base | {"branches": ["main"]}),
        _action("Show wake snapshot", SHOW_WAKE, {"uri": uri(source)}),
        _action("Create document from file", CREATE_DOCUMENT, {"uri": uri(source)}),
    ]
    assert await _actions(client, source, SELECTION) == plain
    # An inactive space offers nothing; once it is active the action appears after the branch one.
    created = await client.call("mnemon/spaces/create", {"name": "Team notes", "description": "Shared"})
    assert await _actions(client, source, SELECTION) == plain
    await client.call("mnemon/spaces/activate", {"spaceId": created["id"]})
    actions = await _actions(client, source, SELECTION)
    in_space = _action("Remember selection in space Team notes", REMEMBER, base | {"spaceId": "default"})
    assert actions == [*plain[:2], in_space, *plain[2:]]

    result = await client.command(REMEMBER, in_space.command.arguments[0])
    assert UUID.fullmatch(result["id"]) and ISO_S.fullmatch(result["createdAt"])
    assert result == {
        "status": "committed", "action": "added", "spaceId": "default", "spaceName": "Team notes",
        "id": result["id"], "message": "Remembered in Team notes.", "activated": False, "edgesCreated": NO_EDGES,
        "entities": [], "tags": [], "createdAt": result["createdAt"], "success": True, "workspace": uri(repo_dir),
        "cites": [{"path": "cache.py", "startLine": 2, "endLine": 2, "freshness": "fresh",
                   "sha256": hashlib.sha256(b"# cache entries expire after   ten minutes\n").hexdigest()}],
    }
    assert [(m.type, m.message) for m in client.messages] == [
        (types.MessageType.Info, "mnemon: Remembered in Team notes. (space Team notes)")]
    recalled = await client.call("mnemon/recall", {"query": "cache entries expire"})
    assert _hits(recalled) == [(result["id"], "cache entries expire after ten minutes")]
    assert recalled["results"][0]["source"] == "user" and recalled["results"][0]["importance"] == 3
    # MEMORY.md (the Runtime tier) is untouched by the space target.
    assert not (repo_dir / ".mnemon" / "runtime" / "MEMORY.md").exists()


# ------------------------------------------------------------------------------------------ branch scope


async def test_branch_tag_filter_follows_checkout(lsp: Launcher, repo: pygit2.Repository, repo_dir: Path):
    client = await lsp.start("visual-studio-code", [repo_dir], {"mnemon": {"storageScope": "workspace"}})
    create_branch(repo, "other")
    await _space(client)
    scoped = await _remember(client, "Deploy the staging cluster from this branch", scopeToBranch=True)
    assert scoped["tags"] == ["branch:main"]
    shared = await _remember(client, "Deploy logs go to the ops channel")
    query = {"query": "deploy"}
    # the shared fact, remembered again for this branch: already recalled on every branch, and it says so
    again = await client.call("mnemon/remember", {"content": "Deploy logs go to the ops channel", "scopeToBranch": True})
    assert (again["status"], again["id"], again["branchScope"]) == ("skipped", shared["id"], [])
    assert again["message"] == (f"Already remembered in Project as {shared['id']} for every branch (it has no "
                                "branch scope, so branch main recalls it too); no new item was stored.")

    on_main = await client.call("mnemon/recall", query)
    assert sorted(_hits(on_main)) == sorted([(scoped["id"], "Deploy the staging cluster from this branch"),
                                             (shared["id"], "Deploy logs go to the ops channel")])
    assert {r["id"]: r["branches"] for r in on_main["results"]} == {scoped["id"]: ["main"], shared["id"]: []}
    assert all("branchLabel" not in r for r in on_main["results"])
    assert on_main["hidden"] == {"otherBranch": 0, "detachedHead": 0}

    armed = client.expect(BRANCH_CHANGED)
    switch(repo, "other")
    assert await client.received(armed) == {"workspace": uri(repo_dir), "branch": "other", "detached": False,
                                            "reason": None, "previous": "main"}
    on_other = await client.call("mnemon/recall", query)
    assert _hits(on_other) == [(shared["id"], "Deploy logs go to the ops channel")]
    assert on_other["hidden"] == {"otherBranch": 1, "detachedHead": 0}
    assert on_other["branch"] == {"name": "other", "recall": "filter", "detachedHeadPolicy": "hide"}
    assert _source(on_other)["stats"]["branchHidden"] == 1
    # Naming the branch-only words alone finds nothing on this branch (and says it hid one).
    only = await client.call("mnemon/recall", {"query": "staging cluster"})
    assert (only["results"], only["hidden"]["otherBranch"]) == ([], 1)

    armed = client.expect(BRANCH_CHANGED)
    switch(repo, "main")
    assert (await client.received(armed))["branch"] == "main"
    back = await client.call("mnemon/recall", query)
    assert sorted(_hits(back)) == sorted(_hits(on_main))
    assert back["hidden"] == {"otherBranch": 0, "detachedHead": 0}


async def test_branch_recall_label(lsp: Launcher, repo: pygit2.Repository, repo_dir: Path):
    client = await lsp.start("neovim@v0.7", [repo_dir], {"mnemon": {"storageScope": "workspace",
                                                                    "branchRecall": "label"}})
    create_branch(repo, "other")
    await _space(client)
    scoped = await _remember(client, "Deploy the staging cluster from this branch", scopeToBranch=True)
    switch(repo, "other")
    result = await client.call("mnemon/recall", {"query": "staging cluster"})
    assert _hits(result) == [(scoped["id"], "Deploy the staging cluster from this branch")]
    [hit] = result["results"]
    assert (hit["branches"], hit["branchLabel"]) == (["main"], "other-branch")
    assert result["hidden"] == {"otherBranch": 0, "detachedHead": 0}
    assert result["branch"] == {"name": "other", "recall": "label", "detachedHeadPolicy": "hide"}
    switch(repo, "main")
    [hit] = (await client.call("mnemon/recall", {"query": "staging cluster"}))["results"]
    assert hit["branches"] == ["main"] and "branchLabel" not in hit


# ------------------------------------------------------------------------------------------ errors


async def _invalid(client: MnemonClient, method: str, params: dict, field: str) -> dict:
    error = await client.call_error(method, params)
    assert (error.code, error.data["code"], error.data["field"]) == (-32602, "invalid-input", field), (
        method, params, error.message, error.data)
    assert error.message.startswith(f"{field}: ")
    return error.data


async def test_invalid_input(lsp: Launcher, repo, repo_dir: Path):
    client = await lsp.start("visual-studio-code", [repo_dir], {"mnemon": {"storageScope": "workspace"}})
    # Without any space: a write has no target.
    await _invalid(client, "mnemon/remember", {"content": "orphan"}, "spaceId")
    await _space(client)
    kept = await _remember(client, "The only stored item")

    assert await _invalid(client, "mnemon/recall", {"query": ""}, "query") == {
        "code": "invalid-input", "field": "query", "rule": "is required (an empty query is not allowed)", "value": ""}
    await _invalid(client, "mnemon/recall", {"query": "   "}, "query")
    assert await _invalid(client, "mnemon/recall", {"query": "stored", "limit": 51}, "limit") == {
        "code": "invalid-input", "field": "limit", "rule": "must be an integer in 1..50 (got 51)", "value": 51}
    await _invalid(client, "mnemon/recall", {"query": "stored", "limit": 0}, "limit")
    assert len((await client.call("mnemon/recall", {"query": "stored", "limit": 50}))["results"]) == 1
    assert await _invalid(client, "mnemon/recall", {"query": "stored", "spaces": ["nope"]}, "spaces[0]") == {
        "code": "invalid-input", "field": "spaces[0]", "rule": "is not a registered space id or name", "spaceId": "nope"}
    await _invalid(client, "mnemon/recall", {"query": "stored", "mode": "fuzzy"}, "mode")

    unknown = {"code": "invalid-input", "field": "spaceId", "rule": "is not a registered space id or name",
               "spaceId": "nope"}
    assert await _invalid(client, "mnemon/remember", {"content": "x", "spaceId": "nope"}, "spaceId") == unknown
    assert await _invalid(client, "mnemon/related", {"spaceId": "nope", "id": kept["id"]}, "spaceId") == unknown
    assert await _invalid(client, "mnemon/forget", {"spaceId": "nope", "id": kept["id"]}, "spaceId") == unknown
    assert await _invalid(client, "mnemon/link", {"spaceId": "nope", "sourceId": kept["id"],
                                                  "targetId": kept["id"]}, "spaceId") == unknown
    assert await _invalid(client, "mnemon/spaces/activate", {"spaceId": "nope"}, "spaceId") == unknown
    # The service's one naming rule (mnemon_ls.spaces.naming), as on the CLI and MCP: a name works, a near miss
    # is answered with the space it probably meant, a second space of the same name is refused.
    assert (await client.call("mnemon/spaces/status", {"spaceId": "project"}))["space"]["id"] == "default"
    assert await _invalid(client, "mnemon/spaces/status", {"spaceId": "Projcet"}, "spaceId") == {
        "code": "invalid-input", "field": "spaceId", "spaceId": "Projcet", "suggestions": ["default"],
        "rule": "is not a registered space id or name; did you mean Project (default)?"}
    await _invalid(client, "mnemon/spaces/create", {"name": "PROJECT", "description": "again"}, "name")
    # An id in another case is that id, a fullwidth twin is the same name, a zero-width character is refused.
    notes = await client.call("mnemon/spaces/create", {"name": "Notes", "description": "scratch"})
    for method in ("mnemon/spaces/status", "mnemon/spaces/deactivate", "mnemon/spaces/activate"):
        answer = await client.call(method, {"spaceId": notes["id"].upper()})
        assert (answer.get("space") or answer)["id"] == notes["id"], method
    assert (await client.call("mnemon/spaces/status", {"spaceId": "DEFAULT"}))["space"]["id"] == "default"
    await _invalid(client, "mnemon/spaces/create", {"name": "ＰＲＯＪＥＣＴ", "description": "twin"}, "name")
    hidden = await _invalid(client, "mnemon/spaces/update", {"spaceId": notes["id"].upper(),
                                                             "name": "No\u200dtes"}, "name")
    assert hidden["rule"].startswith("must not contain invisible format characters such as zero-width spaces "
                                     "(found U+200D ZERO WIDTH JOINER, Unicode category Cf)")
    await client.call("mnemon/spaces/deactivate", {"spaceId": notes["id"]})

    assert await _invalid(client, "mnemon/remember", {"content": "x", "importance": 6}, "importance") == {
        "code": "invalid-input", "field": "importance", "rule": "must be an integer in 1..5 (got 6)"}
    await _invalid(client, "mnemon/remember", {"content": "x", "importance": 0}, "importance")
    await _invalid(client, "mnemon/remember", {"content": "x", "importance": "high"}, "importance")
    assert await _invalid(client, "mnemon/remember", {"content": "a" * 8001}, "content") == {
        "code": "invalid-input", "field": "content", "rule": "must be at most 8000 UTF-8 bytes", "bytes": 8001}
    # The limit counts UTF-8 bytes, not characters: 4001 x "é" is 8002 bytes.
    assert (await _invalid(client, "mnemon/remember", {"content": "\u00e9" * 4001}, "content"))["bytes"] == 8002
    await _invalid(client, "mnemon/remember", {"content": "   "}, "content")
    await _invalid(client, "mnemon/remember", {"content": "x", "unknownField": 1}, "unknownField")

    # Nothing was written by the rejected requests; exactly 8000 bytes is accepted.
    assert (await client.call("mnemon/spaces/status", {"spaceId": "default"}))["space"]["id"] == "default"
    wake = (await client.call("mnemon/wake", {}))["text"]
    assert "- Project (id default, 1 item): Facts about this project" in wake.splitlines()
    await _remember(client, "\u00e9" * 4000)


# ------------------------------------------------------------------------------------------ wake cover


async def test_wake_gains_spaces_cover(lsp: Launcher, repo, repo_dir: Path):
    client = await lsp.start("neovim", [repo_dir], {"mnemon": {"storageScope": "workspace"}})
    plain = (await client.call("mnemon/wake", {}))["text"]
    assert "MNEMON MEMORY SPACES" not in plain
    await _space(client)
    await _remember(client, "One fact")
    await _remember(client, "Another fact")
    wake = await client.call("mnemon/wake", {})
    # The cover is part of what the wake shows: the Revision line covers it too.
    assert wake["text"] == stamp_view_revision(
        plain + "\n\n" + COVER_HEAD + "\n- Project (id default, 2 items): Facts about this project")
    assert wake["revision"] != (await client.call("mnemon/wake", {"branch": "main"}))["revision"]
    # For an assistant's tools (VS Code's language-model tools) the wake names the tool, not the request.
    tool = await client.call("mnemon/wake", {"surface": "tool"})
    assert "recall it from them (mnemon_recall)." in tool["text"] and "mnemon/recall" not in tool["text"]
    assert wake["chars"] == len(wake["text"])
    await client.call("mnemon/spaces/deactivate", {"spaceId": "default"})
    assert (await client.call("mnemon/wake", {}))["text"] == stamp_view_revision(plain + "\n\n" + (
        "MNEMON MEMORY SPACES\nNo Memory Space is active for reading; long-term memory is not recalled "
        "until one is activated."))


# ------------------------------------------------------------------------------------------ bugs


async def test_remember_selection_in_space_bad_branch_names_the_argument(lsp: Launcher, repo, repo_dir: Path):
    client = await lsp.start("visual-studio-code", [repo_dir], {"mnemon": {"storageScope": "workspace"}})
    await _space(client)
    source = repo_dir / "cache.py"
    _open(client, source, SOURCE)
    runtime = await client.command(REMEMBER, {"uri": uri(source), "text": SELECTED, "branches": ["bad name"]})
    assert (runtime["success"], runtime["error"]["field"]) == (False, "branches[0]")
    in_space = await client.command(REMEMBER, {"uri": uri(source), "text": SELECTED, "branches": ["bad name"],
                                               "spaceId": "default"})
    assert (in_space["success"], in_space["error"]["code"], in_space["error"]["field"]) == (
        False, "invalid-input", "branches[0]")


async def test_space_list_names_a_rebuilt_registry_until_the_copy_is_deleted(client: MnemonClient, repo_dir: Path):
    # the operation's notes, as `space list` prints them on stderr and the MCP tool adds them to its text
    ws = uri(repo_dir)
    await _space(client)
    (repo_dir / ".mnemon" / "data" / ".dsh-memory-bodies.json").write_text('{"broken')
    listed = await client.call("mnemon/spaces/list", {})
    [copy] = sorted((repo_dir / ".mnemon" / "data" / ".quarantine").iterdir())
    assert [s["id"] for s in listed["spaces"]] == ["default"] and listed["workspace"] == ws
    [note] = listed["notes"]
    assert "was damaged (not valid JSON" in note and str(copy) in note
    assert (await client.call("mnemon/spaces/list", {}))["notes"] == [note]
    [row] = (await client.call("mnemon/status", {}))["workspaces"]
    assert row["notes"] == [note]  # the folder's status says it too, as MCP mnemon_status does
    copy.unlink()
    assert set(await client.call("mnemon/spaces/list", {})) == {"spaces", "workspace"}
    assert "notes" not in (await client.call("mnemon/status", {}))["workspaces"][0]


async def test_space_delete_asks_for_confirm_when_the_space_holds_items(client: MnemonClient, repo_dir: Path):
    # mnemon/spaces/delete of a space with items: confirmation-required (the data an editor needs to ask the
    # person and send again with confirm: true), nothing changed; confirmed, the store is kept in data/.deleted/
    await _space(client)
    other = await client.call("mnemon/spaces/create", {"name": "Build facts", "description": "how it builds"})
    await _remember(client, "Builds take four minutes", spaceId=other["id"])
    store = repo_dir / ".mnemon" / "data" / other["id"]
    error = await client.call_error("mnemon/spaces/delete", {"spaceId": "Build facts"})
    assert (error.code, error.data) == (-32025, {"code": "confirmation-required", "field": "confirm",
                                                 "spaceId": other["id"], "spaceName": "Build facts", "items": 1})
    assert error.message.startswith(f"confirm: space Build facts ({other['id']}) holds 1 item; ")
    assert (store / "mnemon.db").is_file()
    assert [s["id"] for s in (await client.call("mnemon/spaces/list", {}))["spaces"]] == ["default", other["id"]]
    deleted = await client.call("mnemon/spaces/delete", {"spaceId": "Build facts", "confirm": True})
    kept = Path(deleted["keptAt"])
    assert (deleted["deleted"], deleted["items"], kept.parent) == (other["id"], 1, store.parent / ".deleted")
    assert (kept / "mnemon.db").is_file() and not store.exists()
