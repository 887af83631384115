"""Runtime checks seen through the language server (issue 15 defects 8 and 12, issue 8 item 5).

``mnemon/status`` lists a hand-written entry that breaks a rule and a target edited past its limit in
its ``problems``; ``mnemon/wake`` leaves the entry out with a notice; an add that differs from an entry
only in case, whitespace or punctuation is committed and its result carries ``similar``.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.lsp.conftest import MnemonClient, memory_file

AT = "2026-09-01T08:00:00.000Z"


def _write_truth(root: Path, entries: list[dict]) -> Path:
    runtime = root / "runtime"
    runtime.mkdir(parents=True, exist_ok=True)
    body = {"version": 1, "entries": [{"content": c, "created_at": AT, "updated_at": AT, "target": t,
                                       "importance": "normal"} for t, c in entries]}
    (runtime / "memories.json").write_text(json.dumps(body, ensure_ascii=False, indent=2) + "\n")
    return runtime / "memories.json"


async def test_status_and_wake_report_an_oversized_hand_written_entry_and_an_over_limit_user(
        client: MnemonClient, repo_dir: Path):
    root = repo_dir / ".mnemon"
    user = [("user", f"profile line {i} " + "u" * 500) for i in range(9)]
    memories = _write_truth(root, [("memory", "small fact"), ("memory", "x" * 51_200), *user])
    used_user = sum(len(c) for _, c in user) + 4 * 8

    status = await client.call("mnemon/status", {})
    problems = status["workspaces"][0]["problems"]
    assert len(problems) == 2, problems
    assert problems[0].startswith(f"{memories} entries[1] (memory, 'xxx")
    assert "content: is 51200 UTF-8 bytes; an entry is at most 8192 bytes" in problems[0]
    assert problems[1].startswith(f"user (USER.md) uses {used_user} of its 4096 UTF-8 bytes, "
                                  f"{used_user - 4096} over the limit")
    assert status["workspaces"][0]["usage"]["memory"] == {"used": len("small fact"), "limit": 10240}

    wake = await client.call("mnemon/wake", {})
    assert f"Notice: {problems[0]}" in wake["text"]
    assert "x" * 100 not in wake["text"]
    assert memory_file(root).read_bytes() == b"small fact\n"
    assert "x" * 51_200 in memories.read_text()  # never dropped from the truth


async def test_near_duplicate_add_result_carries_similar(client: MnemonClient, repo_dir: Path):
    await client.call("mnemon/runtime/mutate", {"action": "add", "content": "Run `make check` before a push."})
    result = await client.call("mnemon/runtime/mutate", {"action": "add", "content": "run make check before a push"})
    assert result["changed"] is True and result["entryCount"] == 2
    assert result["similar"] == ["Run `make check` before a push."]
    assert "differs only in case, whitespace or punctuation" in result["message"]
    assert memory_file(repo_dir / ".mnemon").read_bytes() == \
        "Run `make check` before a push.\n\u00a7\nrun make check before a push\n".encode()
