"""The language server's answers and code actions follow the provider's capabilities (real server, real
engine): a Holographic space offers remember, refuses link with ``space-refused``, and disappears from
code actions and lists once the provider is disabled."""

from __future__ import annotations

import os
from pathlib import Path

from lspclient import Server


def test_language_server_gates_on_capabilities(tmp_path: Path, hermes_db: Path, private_home: Path) -> None:
    folder = tmp_path / "repo"
    folder.mkdir()
    (folder / ".git").mkdir()  # a workspace marker; the root lives under $HOME/.mnemon/workspaces
    source = folder / "notes.md"
    source.write_text("Atlas releases need two approvals\n", encoding="utf-8")
    env = dict(os.environ, HOME=str(private_home))
    server = Server(env, folder)
    try:
        server.initialize(folder)
        not_yet = server.call("mnemon/providers/test", {"providerId": "holographic"})
        assert not_yet["error"]["data"]["code"] == "provider-not-configured", not_yet
        enabled = server.call("mnemon/providers/enable", {"providerId": "holographic",
                                                          "services": {"dataPath": str(hermes_db)}})["result"]
        assert enabled["enabled"] and len(enabled["discovered"]) == 2
        created = server.call("mnemon/spaces/create", {"name": "Releases", "description": "release rules",
                                                       "active": True, "provider": "holographic"})["result"]
        assert created["capabilities"]["link"] is False and created["available"]
        listed = server.call("mnemon/providers/list", {})["result"]["providers"]
        [holo] = [p for p in listed if p["providerId"] == "holographic"]
        assert holo["usable"] and holo["spaces"] == 3 and str(hermes_db) not in str(holo)  # names, not values
        selection = {"textDocument": {"uri": source.as_uri()},
                     "range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 33}},
                     "context": {"diagnostics": [], "triggerKind": 1}}
        server.notify("textDocument/didOpen", {"textDocument": {"uri": source.as_uri(), "languageId": "markdown",
                                                                "version": 1, "text": source.read_text()}})
        titles = [a["title"] for a in server.call("textDocument/codeAction", selection)["result"]]
        assert "Remember selection in space Releases" in titles
        receipt = server.call("mnemon/remember", {"content": "Atlas releases need two approvals",
                                                  "spaceId": created["id"]})["result"]
        assert receipt["status"] == "committed"
        second = server.call("mnemon/remember", {"content": "Atlas hotfixes need one approval",
                                                 "spaceId": created["id"]})["result"]
        recalled = server.call("mnemon/recall", {"query": "releases approvals", "spaces": [created["id"]]})["result"]
        assert receipt["id"] in [r["id"] for r in recalled["results"]]
        refused = server.call("mnemon/link", {"spaceId": created["id"], "sourceId": receipt["id"],
                                              "targetId": second["id"]})
        assert refused["error"]["data"]["code"] == "space-refused" and refused["error"]["data"]["reason"] == "link"
        disabled = server.call("mnemon/providers/disable", {"providerId": "holographic"})["result"]
        assert not disabled["enabled"] and disabled["spaces"] == 0
        titles = [a["title"] for a in server.call("textDocument/codeAction", selection)["result"]]
        assert not any("in space" in t for t in titles)
        assert server.call("mnemon/spaces/list", {})["result"]["spaces"] == []
        # a space made while the provider is off keeps its name when it comes back; the answer says so
        mine = server.call("mnemon/spaces/create", {"name": "PROJECT", "description": "mine"})["result"]
        again = server.call("mnemon/providers/enable", {"providerId": "holographic"})["result"]
        [renamed] = [r for r in again["renamed"] if r["externalId"] == "project"]
        assert (renamed["name"], renamed["wantedName"]) == ("project (2)", "project")
        assert renamed["takenBy"] == [{"what": "name", "spaceId": mine["id"], "label": f"PROJECT ({mine['id']})"}]
        names = [s["name"].casefold() for s in server.call("mnemon/spaces/list", {})["result"]["spaces"]]
        assert len(names) == len(set(names)) and "project" in names and "project (2)" in names
    finally:
        server.close()
