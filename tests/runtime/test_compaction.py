"""USER.md overflow: the plan in ``data.maintenance`` and the assistant's compaction (reference 4.1, 4.4).

Real stores under tmp_path, a frozen clock. Every rejected compaction is checked to leave every byte,
mtime and inode under the root as it was.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mnemon_ls.errors import InvalidInput, RevisionConflict, RuntimeCapacityError
from mnemon_ls.roots import resolve_root
from mnemon_ls.runtime.ops import validate_request
from mnemon_ls.runtime.source import RuntimeSource
from mnemon_ls.runtime.store import RuntimeStore
from mnemon_ls.settings import RuntimeMemorySettings, Settings

SEP = "\n\u00a7\n"
# Three user entries of 30 bytes: 98 bytes used of 120; adding the 20-byte PENDING makes 122.
ALPHA = "prefers tabs over spaces in Go"
BRAVO = "never force-push to main, ever"
CHARLIE = "likes short commit subject line"[:30]
PENDING = "works in UTC+2 hours"


def make_store(root: Path, clock, user: int = 120) -> RuntimeStore:
    return RuntimeStore(root, RuntimeMemorySettings(userLimitBytes=user, memoryLimitBytes=10240), clock=clock)


def filled(root: Path, clock) -> RuntimeStore:
    store = make_store(root, clock)
    for content, importance in ((ALPHA, "normal"), (BRAVO, "critical"), (CHARLIE, "low")):
        store.mutate(validate_request("add", "user", content, importance=importance))
    return store


def overflow(store: RuntimeStore, content: str = PENDING) -> RuntimeCapacityError:
    with pytest.raises(RuntimeCapacityError) as info:
        store.mutate(validate_request("add", "user", content))
    return info.value


def test_user_overflow_carries_the_plan(tmp_path, clock, disk):
    store = filled(tmp_path, clock)
    before = disk.freeze(tmp_path)
    error = overflow(store)
    assert disk.state(tmp_path) == before
    plan = error.data["maintenance"]
    assert error.data["target"] == "user" and error.data["projected"] == 122 and error.data["limit"] == 120
    assert plan["kind"] == "local-compaction" and plan["method"] == "mnemon/runtime/compact"
    assert plan["revision"] == store.read().revision
    assert plan["entries"] == [
        {"index": 1, "content": ALPHA, "importance": "normal", "bytes": 30},
        {"index": 2, "content": BRAVO, "importance": "critical", "bytes": 30},
        {"index": 3, "content": CHARLIE, "importance": "low", "bytes": 30},
    ]
    assert plan["pending"] == {"action": "add", "content": PENDING}
    assert plan["pendingEntry"] == {"content": PENDING, "importance": "normal"}
    # floor(120 * 0.7) = 84, minus the 20 pending bytes, minus the 4-byte delimiter.
    assert plan["budgetBytes"] == 60
    assert "data.maintenance holds the plan (3 numbered entries, budget 60 bytes)" in error.message


def test_memory_overflow_has_no_user_plan(tmp_path, clock):
    store = RuntimeStore(tmp_path, RuntimeMemorySettings(memoryLimitBytes=40), clock=clock)
    store.mutate(validate_request("add", "memory", "x" * 30))
    with pytest.raises(RuntimeCapacityError) as info:
        store.mutate(validate_request("add", "memory", "y" * 20))
    assert "maintenance" not in info.value.data


def test_compact_round_trip_commits_compaction_and_pending_at_once(tmp_path, clock):
    store = filled(tmp_path, clock)
    plan = overflow(store).data["maintenance"]
    receipt = store.maintenance.compact_plan(plan["revision"], "user", [
        {"content": "tabs in Go; never force-push main", "importance": "critical", "sourceIndexes": [2, 1]},
        {"content": "short commit subjects", "importance": "low", "sourceIndexes": [3]},
    ], validate_request("add", "user", PENDING))
    projection = (tmp_path / "runtime" / "USER.md").read_text()
    assert projection == SEP.join(["tabs in Go; never force-push main", "short commit subjects", PENDING]) + "\n"
    data = receipt.to_dict()
    maintenance = data["maintenance"]
    archive = str(tmp_path / "runtime" / "archived" / "memories.jsonl")
    assert len(maintenance.pop("runId")) == 32
    assert maintenance == {
        "kind": "local-compaction", "target": "user", "planRevision": plan["revision"], "revision": data["revision"],
        "archived": [{"sourceIndex": i, "source": f"runtime:{plan['revision']}:user:{i}", "summary": content,
                      "bytes": 30, "evidence": "local",
                      "destination": {"kind": "local-archive", "reference": "runtime/archived/memories.jsonl",
                                      "path": archive}}
                     for i, content in enumerate((ALPHA, BRAVO, CHARLIE), start=1)],
        "destinations": [{"kind": "local-archive", "path": archive, "count": 3}],
        "bytesFreed": 122 - 82, "kept": 2, "memoryBodyIds": [], "dropped": [], "bytesBefore": 98, "bytesAfter": 82,
        "summary": "Compacted USER.md: 2 entries replace 3 (82/120 bytes); the replaced text is kept in runtime/archived/",
        "entries": [{"content": "tabs in Go; never force-push main", "importance": "critical", "sourceIndexes": [2, 1]},
                    {"content": "short commit subjects", "importance": "low", "sourceIndexes": [3]}]}
    assert data["added"] == PENDING and data["entryCount"] == 3
    # The originals are kept on the machine (runtime/archived), never lost.
    archived = [json.loads(line) for line in (tmp_path / "runtime/archived/memories.jsonl").read_text().splitlines()]
    assert [a["content"] for a in archived] == [ALPHA, BRAVO, CHARLIE]
    assert {a["revision"] for a in archived} == {plan["revision"]}
    assert (tmp_path / "runtime/archived/USER.md").read_text() == SEP.join([ALPHA, BRAVO, CHARLIE]) + "\n"


GOOD = [{"content": "merged one", "importance": "critical", "sourceIndexes": [1, 2]},
        {"content": "merged two", "importance": "low", "sourceIndexes": [3]}]


def _with(index: int, **changes):
    entries = [dict(e) for e in GOOD]
    entries[index].update(changes)
    return entries


BAD = {
    "lowered-importance": (_with(0, importance="normal"), "entries[0].importance",
                           "lowers importance: source index 2 is critical, this entry normal"),
    "reintroduces-pending": (_with(1, content=PENDING), "entries[1].content",
                             "duplicates the pending mutation (it is added after the compaction; leave it out)"),
    "pending-up-to-case-and-punctuation": (_with(1, content="Works in UTC+2, hours."), "entries[1].content",
                                           "duplicates the pending mutation (it is added after the compaction; "
                                           "leave it out)"),
    "section-sign": (_with(1, content="a \u00a7 b"), "entries[1].content",
                     "must not contain '\u00a7' (U+00A7), the reserved entry delimiter"),
    "over-budget": ([{"content": "x" * 40, "importance": "critical", "sourceIndexes": [1, 2]},
                     {"content": "y" * 20, "importance": "low", "sourceIndexes": [3]}], "entries",
                    "use 64 UTF-8 bytes joined, over the budget of 60 (floor(limit x 0.7) minus the pending entry); "
                    "shorten or merge more"),
    "out-of-range": (_with(1, sourceIndexes=[3, 4]), "entries[1].sourceIndexes[1]", "index 4 is out of range 1..3"),
    "zero": (_with(1, sourceIndexes=[0, 3]), "entries[1].sourceIndexes[0]", "index 0 is out of range 1..3"),
    "repeated": (_with(1, sourceIndexes=[3, 1]), "entries[1].sourceIndexes[1]",
                 "index 1 is used twice (also in entries[0].sourceIndexes); each index exactly once"),
    "repeated-in-one-entry": (_with(1, sourceIndexes=[3, 3]), "entries[1].sourceIndexes[1]",
                              "index 3 is used twice (earlier in this entry); each index exactly once"),
    "missing": (_with(0, sourceIndexes=[2]), "entries",
                "does not cover source index 1 (every index 1..3 must be in exactly one entry's sourceIndexes)"),
    "non-integer": (_with(1, sourceIndexes=["3"]), "entries[1].sourceIndexes[0]", "must be an integer in 1..3 (got '3')"),
    "float": (_with(1, sourceIndexes=[3.0]), "entries[1].sourceIndexes[0]", "must be an integer in 1..3 (got 3.0)"),
    "boolean": (_with(1, sourceIndexes=[True, 3]), "entries[1].sourceIndexes[0]", "must be an integer in 1..3 (got True)"),
    "empty-indexes": (_with(1, sourceIndexes=[]), "entries[1].sourceIndexes", "must be a non-empty list of integers in 1..3"),
    "no-indexes": ([GOOD[0], {"content": "merged two", "importance": "low"}], "entries[1].sourceIndexes",
                   "must be a non-empty list of integers in 1..3"),
    "duplicate-content": (_with(1, content="merged one", importance="critical"), "entries[1].content",
                          "repeats entries[0].content"),
    "empty-content": (_with(1, content="  "), "entries[1].content", "is required (empty or only whitespace)"),
    "bad-importance": (_with(1, importance="urgent"), "entries[1].importance",
                       "must be one of critical, normal, low (got 'urgent')"),
    "not-an-object": ([GOOD[0], "merged two"], "entries[1]", "must be an object with content, importance and sourceIndexes"),
    "unknown-field": (_with(1, weight=2), "entries[1].weight",
                      "is not a known field (content, importance, sourceIndexes, branches)"),
    "branches-on-user": (_with(1, branches=["main"]), "entries[1].branches", "applies to target=memory only"),
}


@pytest.mark.parametrize("name", sorted(BAD))
def test_every_bad_compaction_names_the_entry_and_the_rule_and_changes_nothing(tmp_path, clock, disk, name):
    entries, field, rule = BAD[name]
    store = filled(tmp_path, clock)
    plan = overflow(store).data["maintenance"]
    before = disk.freeze(tmp_path)
    with pytest.raises(InvalidInput) as info:
        store.maintenance.compact_plan(plan["revision"], "user", entries, validate_request("add", "user", PENDING))
    assert (info.value.field, info.value.rule.split("; 1 more: ")[0].split("; 2 more: ")[0]) == (field, rule)
    assert info.value.data["problems"][0] == {"field": field, "rule": rule}
    assert disk.state(tmp_path) == before


def test_every_problem_is_listed(tmp_path, clock):
    store = filled(tmp_path, clock)
    plan = overflow(store).data["maintenance"]
    with pytest.raises(InvalidInput) as info:
        store.maintenance.compact_plan(plan["revision"], "user", [
            {"content": "one", "importance": "low", "sourceIndexes": [2, 9]},
        ], validate_request("add", "user", PENDING))
    assert info.value.data["problems"] == [
        {"field": "entries[0].sourceIndexes[1]", "rule": "index 9 is out of range 1..3"},
        {"field": "entries[0].importance", "rule": "lowers importance: source index 2 is critical, this entry low"},
        {"field": "entries", "rule": "does not cover source index 1, 3 (every index 1..3 must be in exactly one "
                                     "entry's sourceIndexes)"},
    ]
    assert info.value.message.endswith(  # every problem in the message: a CLI without --json shows only that
        "; 2 more: entries[0].importance: lowers importance: source index 2 is critical, this entry low; entries: "
        "does not cover source index 1, 3 (every index 1..3 must be in exactly one entry's sourceIndexes)")


def test_reintroducing_the_removed_entry_is_refused(tmp_path, clock, disk):
    store = filled(tmp_path, clock)
    # A replace that grows CHARLIE past the limit: CHARLIE is excluded from the plan (2 entries).
    request = validate_request("replace", "user", "likes short commit subject lines, always written in English", old_text=CHARLIE)
    with pytest.raises(RuntimeCapacityError) as info:
        store.mutate(request)
    plan = info.value.data["maintenance"]
    assert [e["content"] for e in plan["entries"]] == [ALPHA, BRAVO] and plan["excluded"] == CHARLIE
    assert plan["pending"] == {"action": "replace", "content": "likes short commit subject lines, always written in English",
                               "oldText": CHARLIE}
    before = disk.freeze(tmp_path)
    with pytest.raises(InvalidInput) as refused:
        store.maintenance.compact_plan(plan["revision"], "user", [
            {"content": "tabs; no force-push", "importance": "critical", "sourceIndexes": [1, 2]},
            {"content": CHARLIE, "importance": "low", "sourceIndexes": []},
        ], request)
    assert {"field": "entries[1].content", "rule": "reintroduces the entry being replaced"} in refused.value.data["problems"]
    assert disk.state(tmp_path) == before


def test_stale_revision_is_a_conflict_and_changes_nothing(tmp_path, clock, disk):
    store = filled(tmp_path, clock)
    plan = overflow(store).data["maintenance"]
    store.mutate(validate_request("remove", "user", old_text=CHARLIE))  # a second writer
    before = disk.freeze(tmp_path)
    with pytest.raises(RevisionConflict) as info:
        store.maintenance.compact_plan(plan["revision"], "user", GOOD, validate_request("add", "user", PENDING))
    assert info.value.data["expected"] == plan["revision"]
    assert info.value.data["actual"] == store.read().revision
    assert disk.state(tmp_path) == before


def test_compact_without_pending_uses_the_seventy_percent_budget(tmp_path, clock):
    store = filled(tmp_path, clock)
    revision = store.read().revision
    with pytest.raises(InvalidInput) as info:  # 84 bytes allowed, 90 + 8 given
        store.maintenance.compact_plan(revision, "user", [{"content": c, "importance": i, "sourceIndexes": [n]}
                                              for n, (c, i) in enumerate(((ALPHA, "normal"), (BRAVO, "critical"),
                                                                          (CHARLIE, "low")), start=1)])
    assert info.value.rule == "use 98 UTF-8 bytes joined, over the budget of 84 (floor(limit x 0.7) minus the " \
                              "pending entry); shorten or merge more"
    receipt = store.maintenance.compact_plan(revision, "user", [{"content": "Go tabs, no force-push", "importance": "critical",
                                                     "sourceIndexes": [1, 2, 3]}])
    assert [e.content for e in store.read().of("user")] == ["Go tabs, no force-push"]
    assert len(receipt.detail["maintenance"]["archived"]) == 3


def test_memory_target_compaction_keeps_branch_scopes(tmp_path, clock):
    store = RuntimeStore(tmp_path, RuntimeMemorySettings(memoryLimitBytes=200), clock=clock)
    store.mutate(validate_request("add", "memory", "feature flag X lives in cfg.py", branches=["feat/x"]))
    store.mutate(validate_request("add", "memory", "feature flag X defaults off", branches=["feat/x"]))
    store.mutate(validate_request("add", "memory", "CI runs on every push"))
    revision = store.read().revision
    with pytest.raises(InvalidInput) as info:
        store.maintenance.compact_plan(revision, "memory", [{"content": "all", "importance": "normal", "sourceIndexes": [1, 2, 3]}])
    assert (info.value.field, info.value.rule) == ("entries[0].branches",
                                                   "is required: source indexes 1, 2, 3 have different branch scopes")
    store.maintenance.compact_plan(revision, "memory", [
        {"content": "flag X: cfg.py, default off", "importance": "normal", "sourceIndexes": [1, 2]},
        {"content": "CI runs on every push", "importance": "normal", "sourceIndexes": [3]},
    ])
    entries = store.read().of("memory")
    assert [(e.content, e.branches) for e in entries] == [("flag X: cfg.py, default off", ("feat/x",)),
                                                          ("CI runs on every push", ())]


def test_split_user_scope_compacts_the_global_store(tmp_path, clock):
    workspace = tmp_path / "ws"
    workspace.mkdir()
    settings = Settings(storageScope="workspace", runtimeUserScope="global",
                        runtimeMemory={"userLimitBytes": 120}, dataDir=str(tmp_path / "global"))
    source = RuntimeSource(resolve_root(workspace, settings, {}), settings, clock=clock)
    for content, importance in ((ALPHA, "normal"), (BRAVO, "critical"), (CHARLIE, "low")):
        source.mutate(validate_request("add", "user", content, importance=importance))
    with pytest.raises(RuntimeCapacityError) as info:
        source.mutate(validate_request("add", "user", PENDING))
    plan = info.value.data["maintenance"]
    assert plan["revision"] == source.user_store.read().revision
    source.compact(plan["revision"], "user", GOOD, plan["pending"])
    assert [e.content for e in source.read().user] == ["merged one", "merged two", PENDING]
    assert not (workspace / ".mnemon" / "runtime" / "USER.md").exists()


def test_pending_is_validated_with_its_field(tmp_path, clock):
    store = filled(tmp_path, clock)
    settings = Settings(storageScope="custom", dataDir=str(tmp_path), runtimeUserScope="storage",
                        runtimeMemory={"userLimitBytes": 120})
    source = RuntimeSource(resolve_root(None, settings, {}), settings, clock=clock)
    plan = overflow(store).data["maintenance"]
    with pytest.raises(InvalidInput) as info:
        source.compact(plan["revision"], "user", GOOD, {"action": "add", "content": "a\u00a7b"})
    assert info.value.field == "pending.content"
    with pytest.raises(InvalidInput) as info:
        source.compact(plan["revision"], "user", GOOD, {"action": "add", "content": "x", "target": "memory"})
    assert info.value.field == "pending.target"


def test_a_compaction_that_changes_nothing_is_refused_not_counted(tmp_path, clock, disk):
    # no pending change (``mnemon-ls runtime compact --entries - --revision REV``): every entry sent back as
    # its own source, word for word, would commit nothing and report "kept 3 of 3" as a compaction
    store = make_store(tmp_path, clock, user=200)  # 98 of 200 bytes: within the 140-byte budget as they are
    for content, importance in ((ALPHA, "normal"), (BRAVO, "critical"), (CHARLIE, "low")):
        store.mutate(validate_request("add", "user", content, importance=importance))
    revision = store.read().revision
    same = [{"content": c, "importance": i, "sourceIndexes": [n]}
            for n, (c, i) in enumerate(((ALPHA, "normal"), (BRAVO, "critical"), (CHARLIE, "low")), start=1)]
    before = disk.freeze(tmp_path)
    with pytest.raises(InvalidInput) as info:
        store.maintenance.compact_plan(revision, "user", same, None)
    assert info.value.field == "entries"
    assert info.value.rule == ("change nothing: each entry is its source index unchanged, so no USER.md byte is "
                               "freed (a compaction merges or shortens entries)")
    assert disk.state(tmp_path) == before
    # one entry shortened is a compaction
    shorter = [dict(e) for e in same]
    shorter[2]["content"] = "short subjects"
    receipt = store.maintenance.compact_plan(revision, "user", shorter, None)
    assert receipt.to_dict()["maintenance"]["kept"] == 3 and receipt.used == 30 + 4 + 30 + 4 + 14
