"""``mnemon/import/scan`` and ``mnemon/import/apply`` through a real language server (issue 28 item 2, the
editors' "Import Memory from Other Assistants"): the scan finds every source of the workspace and the home
directory (real files in a real git repository and ``$HOME``), each item with a stable id, where it would go
and why, or why it is skipped; the apply imports exactly the picked items; bad input (an unknown id, an id
twice, a malformed or unknown fingerprint, a file changed, added or gone since the scan, items needing a
Memory Space when there is none) is refused naming the field and the rule, with nothing written."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.gitrepo import make_repo
from tests.helpers import procs
from tests.lsp.conftest import Launcher, uri

INIT = {"storageScope": "workspace", "runtimeUserScope": "storage"}

CLAUDE_MD = """# Project

- Build everything with `just build`.
- I prefer answers in British English.
- The staging database is read-only on Fridays.
"""
AGENTS_MD = """# Agents

- Build everything with `just build`.
- Releases are tagged from the main branch only.
"""
CURSOR_RULE = """---
description: Style rules
alwaysApply: true
---
- Use four spaces for indentation in Python files.
"""
HERMES_USER = "Call me Sam.\n§\nMy time zone is Europe/Oslo.\n"


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    path = Path(tmp_path.resolve()) / "repo"
    make_repo(path, "main")
    (path / "CLAUDE.md").write_text(CLAUDE_MD, encoding="utf-8")
    (path / "AGENTS.md").write_text(AGENTS_MD, encoding="utf-8")
    (path / ".cursor" / "rules").mkdir(parents=True)
    (path / ".cursor" / "rules" / "style.mdc").write_text(CURSOR_RULE, encoding="utf-8")
    return path


def hermes(lsp: Launcher) -> Path:
    memories = lsp.home / ".hermes" / "memories"
    memories.mkdir(parents=True)
    (memories / "USER.md").write_text(HERMES_USER, encoding="utf-8")
    return memories / "USER.md"


def by_text(scan: dict) -> dict[str, dict]:
    """Every item of the scan by its text (the first of equal texts), with its source."""
    found: dict[str, dict] = {}
    for source in scan["sources"]:
        for item in source["items"]:
            found.setdefault(item["text"], {**item, "source": source["source"]})
    return found


def entries(ws: Path, target: str) -> list[str]:
    data = json.loads((ws / ".mnemon" / "runtime" / "memories.json").read_text(encoding="utf-8"))
    return [e["content"] for e in data["entries"] if e["target"] == target]


async def test_scan_lists_every_source_with_ids_destinations_and_what_is_skipped(lsp: Launcher, ws: Path):
    hermes(lsp)
    client = await lsp.start(folders=[ws], init=INIT)
    await client.call("mnemon/runtime/mutate", {"action": "add", "target": "memory",
                                                "content": "The staging database is read-only on Fridays."})
    scan = await client.call("mnemon/import/scan", {"workspace": uri(ws)})
    assert [(s["source"], s["title"]) for s in scan["sources"]] == [
        ("claude-code", "Claude Code"), ("agents-md", "AGENTS.md"), ("cursor", "Cursor"), ("hermes", "Hermes")]
    assert [f["path"] for s in scan["sources"] for f in s["files"]] == [
        str(ws / "CLAUDE.md"), str(ws / "AGENTS.md"), str(ws / ".cursor" / "rules" / "style.mdc"),
        str(lsp.home / ".hermes" / "memories" / "USER.md")]
    items = by_text(scan)
    where = {text: (i["source"], i["destination"], i["skip"]) for text, i in items.items()}
    assert where["Build everything with `just build`."] == ("claude-code", "memory", None)
    assert where["I prefer answers in British English."] == ("claude-code", "user", None)
    assert where["The staging database is read-only on Fridays."] == (
        "claude-code", "memory", {"why": "exact-duplicate", "of": "MEMORY.md"})
    assert where["Releases are tagged from the main branch only."] == ("agents-md", "memory", None)
    assert where["Use four spaces for indentation in Python files."] == ("cursor", "memory", None)
    assert where["Call me Sam."] == ("hermes", "user", None)
    assert where["My time zone is Europe/Oslo."] == ("hermes", "user", None)
    agents = [i for i in scan["sources"][1]["items"] if i["text"].startswith("Build everything")]
    assert [i["skip"] for i in agents] == [{"why": "exact-duplicate", "of": "CLAUDE.md: Project"}]
    assert len(items) == 8 - 1  # the repeated bullet is one text, two items
    assert sum(len(s["items"]) for s in scan["sources"]) == 8 == scan["counts"]["items"]
    cursor = scan["sources"][2]["items"][0]
    assert cursor["title"] == "Style rules" and cursor["reason"] == "a project fact or convention"
    assert cursor["preview"] == "Use four spaces for indentation in Python files."
    assert {k: scan["counts"][k] for k in ("user", "memory", "exactDuplicates", "refusedFiles")} == {
        "user": 3, "memory": 3, "exactDuplicates": 2, "refusedFiles": 0}
    ids = [i["id"] for s in scan["sources"] for i in s["items"]]
    assert all(re.fullmatch(r"[0-9a-f]{16}", i) for i in ids) and len(set(ids)) == len(ids)
    assert re.fullmatch(r"[0-9a-f]{64}", scan["fingerprint"])
    # Stable: a second scan answers the same ids and fingerprint; another line in a file keeps the others' ids.
    again = await client.call("mnemon/import/scan", {"workspace": uri(ws)})
    assert [i["id"] for s in again["sources"] for i in s["items"]] == ids
    assert again["fingerprint"] == scan["fingerprint"]
    (ws / "CLAUDE.md").write_text(CLAUDE_MD + "- Lint with ruff.\n", encoding="utf-8")
    changed = await client.call("mnemon/import/scan", {"workspace": uri(ws)})
    assert [i["id"] for s in changed["sources"] for i in s["items"] if i["text"] != "Lint with ruff."] == ids
    assert changed["fingerprint"] != scan["fingerprint"]


async def test_apply_imports_exactly_the_picked_items(lsp: Launcher, ws: Path):
    hermes(lsp)
    client = await lsp.start(folders=[ws], init=INIT)
    scan = await client.call("mnemon/import/scan", {"workspace": uri(ws)})
    items = by_text(scan)
    picked = ["Build everything with `just build`.", "Call me Sam.", "Use four spaces for indentation in Python files."]
    # AGENTS.md's copy of the build bullet, picked alone, is imported: duplicates are decided among the picks.
    agents_build = next(i["id"] for i in scan["sources"][1]["items"] if i["text"].startswith("Build everything"))
    receipt = await client.call("mnemon/import/apply", {"workspace": uri(ws), "fingerprint": scan["fingerprint"],
                                                        "ids": [items[t]["id"] for t in picked] + [agents_build]})
    assert receipt["counts"] == {"written": 3, "user": 1, "memory": 2, "document": 0, "space": 0, "skipped": 1,
                                 "refusedItems": 0}
    assert [(a["source"], a["title"], a["destination"]) for a in receipt["applied"]] == [
        ("claude-code", "Project", "memory"), ("cursor", "Style rules", "memory"), ("hermes", "USER.md", "user")]
    assert [(s["source"], s["why"], s["of"]) for s in receipt["skipped"]] == [
        ("agents-md", "exact-duplicate", "CLAUDE.md: Project")]
    assert entries(ws, "memory") == ["Build everything with `just build`.",
                                     "Use four spaces for indentation in Python files."]
    assert entries(ws, "user") == ["Call me Sam."]
    assert "I prefer answers in British English." not in (ws / ".mnemon" / "runtime" / "USER.md").read_text()
    ledger = [json.loads(line) for line in (ws / ".mnemon" / "state" / "imports.jsonl").read_text().splitlines()]
    assert [(r["source"], r["destination"], r["origin"]) for r in ledger] == [
        ("claude-code", "memory", "imported"), ("cursor", "memory", "imported"), ("hermes", "user", "imported")]

    # The next scan skips what was imported, and picking an imported item again writes nothing.
    second = await client.call("mnemon/import/scan", {"workspace": uri(ws)})
    after = by_text(second)
    assert after["Call me Sam."]["skip"] == {"why": "already-imported", "of": "an earlier import"}
    # AGENTS.md's copy of the imported build bullet is a duplicate of CLAUDE.md's in this scan, and says so
    builds = [(s["source"], i["skip"]) for s in second["sources"] for i in s["items"]
              if i["text"] == "Build everything with `just build`."]
    assert builds == [("claude-code", {"why": "already-imported", "of": "an earlier import"}),
                      ("agents-md", {"why": "exact-duplicate", "of": "CLAUDE.md: Project"})]
    assert after["My time zone is Europe/Oslo."]["skip"] is None
    again = await client.call("mnemon/import/apply", {"workspace": uri(ws), "fingerprint": scan["fingerprint"],
                                                      "ids": [items["Call me Sam."]["id"]]})
    assert again["counts"]["written"] == 0 and [s["why"] for s in again["skipped"]] == ["already-imported"]
    assert entries(ws, "user") == ["Call me Sam."]


async def test_bad_input_is_refused_by_field_and_rule_and_writes_nothing(lsp: Launcher, ws: Path):
    user_md = hermes(lsp)
    client = await lsp.start(folders=[ws], init=INIT)
    scan = await client.call("mnemon/import/scan", {"workspace": uri(ws)})
    one = by_text(scan)["Call me Sam."]["id"]
    fingerprint = scan["fingerprint"]
    root = ws / ".mnemon"
    before = procs.tree_snapshot(root)

    async def refused(params: dict, code: str, field: str, rule: str) -> str:
        error = await client.call_error("mnemon/import/apply", {"workspace": uri(ws), **params})
        assert (error.data["code"], error.data.get("field")) == (code, field), error.data
        assert rule in error.message, error.message
        assert procs.tree_snapshot(root) == before
        return error.message

    await refused({"fingerprint": fingerprint, "ids": ["0123456789abcdef"]}, "invalid-input", "ids[0]",
                  "ids[0]: is not an item of the scan ('0123456789abcdef')")
    await refused({"fingerprint": fingerprint, "ids": [one, "not an id"]}, "invalid-input", "ids[1]",
                  "is not an item of the scan")
    await refused({"fingerprint": fingerprint, "ids": [one, one]}, "invalid-input", "ids[1]",
                  "ids[1]: names the same item as ids[0]")
    await refused({"fingerprint": fingerprint, "ids": []}, "invalid-input", "ids", "at least 1 item")
    await refused({"fingerprint": "abc", "ids": [one]}, "invalid-input", "fingerprint", "should match pattern")
    await refused({"fingerprint": "0" * 64, "ids": [one]}, "invalid-input", "fingerprint",
                  "is not the fingerprint of the files as they are now, nor of a recent scan")
    await refused({"ids": [one]}, "invalid-input", "fingerprint", "is required")

    # A file changed, added or gone between the scan and the apply: the scan's digests name it.
    user_md.write_text(HERMES_USER + "§\nI review on Mondays.\n", encoding="utf-8")
    await refused({"fingerprint": fingerprint, "ids": [one]}, "revision-conflict", "fingerprint",
                  f"fingerprint: {user_md} changed since the scan; nothing was imported: scan again")
    user_md.write_text(HERMES_USER, encoding="utf-8")
    (ws / ".github").mkdir()
    (ws / ".github" / "copilot-instructions.md").write_text("- Prefer pytest fixtures.\n", encoding="utf-8")
    await refused({"fingerprint": fingerprint, "ids": [one]}, "revision-conflict", "fingerprint",
                  f"{ws / '.github' / 'copilot-instructions.md'} appeared since the scan")
    (ws / ".github" / "copilot-instructions.md").unlink()
    (ws / "AGENTS.md").unlink()
    await refused({"fingerprint": fingerprint, "ids": [one]}, "revision-conflict", "fingerprint",
                  f"{ws / 'AGENTS.md'} is gone or unreadable since the scan")
    (ws / "AGENTS.md").write_text(AGENTS_MD, encoding="utf-8")

    # An entry too long for runtime memory goes to a Memory Space; there is none, so nothing is imported.
    (ws / ".cursorrules").write_text("long " * 300 + "\n", encoding="utf-8")
    scan = await client.call("mnemon/import/scan", {"workspace": uri(ws)})
    long_item = next(i for s in scan["sources"] for i in s["items"] if i["text"].startswith("long"))
    assert long_item["destination"] == "space" and scan["spaceProblem"].startswith("there is no Memory Space yet")
    before = procs.tree_snapshot(root)
    await refused({"fingerprint": scan["fingerprint"], "ids": [one, long_item["id"]]}, "invalid-input", "spaceId",
                  "1 picked item(s) go to a Memory Space, but there is no Memory Space yet")
    # The same fingerprint still imports the picks once the bad one is left out.
    receipt = await client.call("mnemon/import/apply", {"workspace": uri(ws), "fingerprint": scan["fingerprint"],
                                                        "ids": [one]})
    assert receipt["counts"]["written"] == 1 and entries(ws, "user") == ["Call me Sam."]
