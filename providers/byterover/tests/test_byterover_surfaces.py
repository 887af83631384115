"""mnemon-ls with ByteRover enabled, through its real surfaces (CLI subprocesses, the language server, the MCP
server), on the real ``brv``: what a ByteRover space cannot do (related, link, merge, graph, browse) is refused on
each surface with the same error and said in ``provider list``; what it can do (recall in both languages,
remember from a code action's target list, forget) works on each; every stdout stays ours (JSON-RPC for the
servers)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mnemon_ls.spaces import SpacesService
from provider_surfaces import check_language_server, check_mcp, cli, root_env
from servers import wait_for


@pytest.fixture
def root(tmp_path: Path, project, brv: str) -> dict[str, str]:
    """A global root with a native space and an active ByteRover space (a project ``brv vc init`` made) holding
    one memory; the environment of the CLI/servers on it (``--scope global``, ``MNEMON_DATA_DIR``; the session's
    ByteRover state comes with this process's environment)."""
    rover = project("rover")
    data = tmp_path / "data"
    service = SpacesService(data, provider_timeout=120)
    service.create_space("Project", "project decisions", active=True)
    service.remember("We chose SQLite FTS5 for the side index")
    service.thirdparty.enable("byterover", {"cliPath": brv})
    team = next(v.record.id for v in service.list_spaces() if v.record.external_id == str(rover))
    service.activate(team)
    item = service.remember("We deploy on Tuesdays after review", space_id=team).to_dict()["id"]
    service.close()
    return {"data": str(data), "team": team, "item": item, "project": str(rover), **root_env(data)}


def test_the_cli_says_what_byterover_cannot_do_refuses_it_and_recalls_and_forgets(root: dict[str, str]) -> None:
    listed = cli(root, "provider", "list")
    line = next(x for x in listed.stdout.splitlines() if x.startswith("byterover "))
    assert "enabled" in line and "mnemon-ls-provider-byterover" in line, line
    assert line.endswith("cannot list items without a query, walk related items, link items, merge spaces or show "
                         "a graph"), line
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
    zh = wait_for(lambda: (lambda done: done if "发布前必须先在预发环境验证数据库迁移" in done.stdout else None)(
        cli(root, "recall", "发布前", "--space", root["team"])), "the Chinese write through the CLI")
    assert zh.returncode == 0 and zh.stderr == ""
    forget = cli(root, "space", "forget", root["item"], "--space", root["team"])
    assert forget.returncode == 0, forget.stderr
    assert not (Path(root["project"]) / ".brv" / "context-tree" / root["item"].replace("~", "/")).exists()
    again = cli(root, "space", "forget", root["item"], "--space", root["team"])
    assert again.returncode != 0 and "ITEM_ID: is not an item of this space" in again.stderr, again.stderr
    gone = cli(root, "recall", "when do we deploy", "--space", root["team"])
    assert gone.returncode == 0 and "We deploy on Tuesdays after review" not in gone.stdout


def test_the_language_server_gates_by_capability_and_offers_the_space_as_a_write_target(
        root: dict[str, str], tmp_path: Path) -> None:
    check_language_server(root, tmp_path, browse=False)


def test_the_mcp_server_refuses_what_byterover_cannot_do_and_recalls_from_it(root: dict[str, str],
                                                                             tmp_path: Path) -> None:
    check_mcp(root, tmp_path)
