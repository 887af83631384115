"""mnemon-ls with OpenViking enabled, through its real surfaces (CLI subprocesses, the language server, the MCP
server; tests/helpers/provider_surfaces.py), on a real OpenViking server: what an OpenViking space cannot do
(related, link, merge, graph) is refused on each surface with the same error and said in ``provider list``; what
it can do (recall in both languages, remember from a code action's target list, forget) works on each; every
stdout stays ours (JSON-RPC for the servers)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from provider_surfaces import check_language_server, check_mcp, cli, make_root


@pytest.fixture
def root(tmp_path: Path, openviking, folder: str) -> dict[str, str]:
    return make_root(tmp_path / "data", "openviking", {"endpoint": openviking.endpoint}, f"Team {folder}",
                     "We deploy on Tuesdays after review")


def test_the_cli_says_what_openviking_cannot_do_refuses_it_and_recalls_and_forgets(root: dict[str, str],
                                                                                   openviking) -> None:
    listed = cli(root, "provider", "list")
    line = next(x for x in listed.stdout.splitlines() if x.startswith("openviking "))
    assert "enabled" in line and "mnemon-ls-provider-openviking" in line, line
    assert line.endswith("cannot walk related items, link items, merge spaces or show a graph"), line
    recall = cli(root, "recall", "when do we deploy", "--space", root["team"])
    assert recall.returncode == 0 and recall.stderr == "", recall.stderr
    assert "We deploy on Tuesdays after review" in recall.stdout
    related = cli(root, "space", "related", root["item"], "--space", root["team"])
    assert related.returncode != 0 and related.stdout == ""
    assert related.stderr == f"mnemon-ls: error: space {root['team']} does not support related\n", related.stderr
    other = cli(root, "remember", "发布前必须先在预发环境验证数据库迁移", "--space", root["team"], "--json")
    assert json.loads(other.stdout)["status"] == "committed", other.stderr
    link = cli(root, "space", "link", root["item"], json.loads(other.stdout)["id"], "--space", root["team"])
    assert link.returncode != 0 and f"space {root['team']} does not support link" in link.stderr, link.stderr
    zh = cli(root, "recall", "数据库迁移", "--space", root["team"])
    assert "发布前必须先在预发环境验证数据库迁移" in zh.stdout, zh.stdout
    forget = cli(root, "space", "forget", root["item"], "--space", root["team"])
    assert forget.returncode == 0, forget.stderr
    stat = openviking.call("GET", f"/api/v1/fs/stat?uri={root['externalId']}/{root['item']}.md")
    assert stat["error"]["code"] == "NOT_FOUND", stat
    again = cli(root, "space", "forget", root["item"], "--space", root["team"])
    assert again.returncode != 0 and "ITEM_ID: is not an item of this space" in again.stderr, again.stderr


def test_the_language_server_gates_by_capability_and_offers_the_space_as_a_write_target(
        root: dict[str, str], tmp_path: Path) -> None:
    check_language_server(root, tmp_path)


def test_the_mcp_server_refuses_what_openviking_cannot_do_and_recalls_from_it(root: dict[str, str],
                                                                              tmp_path: Path) -> None:
    check_mcp(root, tmp_path)
