"""mnemon_ls.runtime.store: the durable, locked Runtime store of one root.

Real files under tmp_path, real lock files, a frozen clock; no mocks. "Nothing changed" is checked on
bytes, mtime_ns and inode of every file under runtime/ (mtimes are pinned to a past instant first, see
conftest.disk_state). Reference: shared/reference/dsh-mnemon.md sections 3, 4.1, 4.3 and cases 1-39 of
section 10 (18, concurrency, is tested elsewhere).

tests/fixtures/ts/ holds stores exactly as the TypeScript plugin writes them (2-space JSON, key order
content, created_at, updated_at, target, importance[, branches], non-ASCII unescaped, trailing newline;
projections joined by "\\n§\\n" plus "\\n"; an empty target is a 0-byte file):

- basic/: two user entries (CJK; emoji with an NFD "é"), a legacy memory entry without branches that
  needs JSON escapes, and a memory entry scoped to ["main", "feature/deep"];
- memory-only/: one memory entry and a 0-byte USER.md.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import stat
import unicodedata
import os
import time
from pathlib import Path

import pytest

from mnemon_ls.errors import (
    AmbiguousMatch,
    DuplicateContent,
    InvalidInput,
    NoMatch,
    RevisionConflict,
    RuntimeCapacityError,
    UnreadableStore,
)
from mnemon_ls.runtime.model import Entry
from mnemon_ls.runtime.ops import Candidate, compaction_budget, validate_request
from mnemon_ls.runtime.store import RuntimeStore
from mnemon_ls.settings import RuntimeMemorySettings

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "ts"
NOW = "2026-09-15T08:00:00.000Z"
STAMP = "20260915T080000.000Z"
EMPTY_STORE = b'{\n  "version": 1,\n  "entries": []\n}\n'
SEP = "\n\u00a7\n"


def make_store(root: Path, clock, user: int = 4096, memory: int = 10240, hand_edits: str = "restore") -> RuntimeStore:
    """A store with pinned limits and clock; ``handEdits=restore`` (the repair tests here are about restoring;
    importing hand edits is tested in tests/runtime/test_handedits.py)."""
    return RuntimeStore(root, RuntimeMemorySettings(userLimitBytes=user, memoryLimitBytes=memory), clock=clock,
                        hand_edits=hand_edits)


def add(store, content, target="memory", **kw):
    return store.mutate(validate_request("add", target, content, **kw))


def replace(store, old, content, target="memory", **kw):
    return store.mutate(validate_request("replace", target, content, old, **kw))


def remove(store, old, target="memory"):
    return store.mutate(validate_request("remove", target, old_text=old))


def rt(root: Path) -> Path:
    return root / "runtime"


def read(root: Path, name: str) -> bytes:
    return (rt(root) / name).read_bytes()


def sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def compact_revision(document_text: str) -> str:
    """Revision computed independently: sha256 of the compact JSON of the parsed document."""
    return sha(json.dumps(json.loads(document_text), ensure_ascii=False, separators=(",", ":")))


def pretty(entries: list[dict]) -> bytes:
    return (json.dumps({"version": 1, "entries": entries}, ensure_ascii=False, indent=2) + "\n").encode("utf-8")


def raw(content, target="memory", importance="normal", at="2026-09-01T08:00:00.000Z", **extra):
    return {"content": content, "created_at": at, "updated_at": at, "target": target,
            "importance": importance, **extra}


def write_store(root: Path, entries: list[dict]) -> None:
    """Write memories.json and both projections by hand (the plugin's format)."""
    rt(root).mkdir(exist_ok=True)
    (rt(root) / "memories.json").write_bytes(pretty(entries))
    for target, name in (("user", "USER.md"), ("memory", "MEMORY.md")):
        contents = [x["content"] for x in entries if x["target"] == target]
        (rt(root) / name).write_bytes((SEP.join(contents) + "\n").encode() if contents else b"")


def no_lock_left(root: Path) -> bool:
    return not (rt(root) / ".memories.lock").exists()


# ================================================================= basic cases (reference section 10)


def test_case_1_whitespace_collapses_and_projection_is_one_line(root, clock):
    store = make_store(root, clock)
    receipt = add(store, "第一条\n  测试")
    assert receipt.to_dict() == {
        "success": True, "message": "Entry added.", "target": "memory", "entryCount": 1,
        "usage": {"used": 16, "limit": 10240}, "revision": receipt.revision, "changed": True,
        "added": "第一条 测试",
    }
    assert read(root, "MEMORY.md") == "第一条 测试\n".encode()
    assert read(root, "USER.md") == b""
    assert store.read().entries == (Entry("第一条 测试", NOW, NOW, "memory", "normal"),)
    assert receipt.revision == compact_revision(read(root, "memories.json").decode())
    assert no_lock_left(root)


def test_case_2_projection_bytes_and_empty_target(root, clock):
    store = make_store(root, clock)
    add(store, "A")
    add(store, "B")
    assert read(root, "MEMORY.md") == b"A\n\xc2\xa7\nB\n"
    assert read(root, "USER.md") == b""


def test_case_5_8192_bytes_accepted(root, clock):
    store = make_store(root, clock)
    receipt = add(store, "\u8bed" * 2730 + "xy")
    assert receipt.used == 8192
    assert read(root, "MEMORY.md") == ("\u8bed" * 2730 + "xy\n").encode()


def test_case_6_duplicate_add_is_a_no_op_other_target_is_new(root, clock, disk):
    store = make_store(root, clock)
    add(store, "same text")
    clock.advance(days=1)
    before = disk.freeze(rt(root))
    receipt = add(store, "  same\ttext ")
    assert receipt.message == "Entry already exists."
    assert (receipt.changed, receipt.entry_count, receipt.detail) == (False, 1, {"added": "same text"})
    assert disk.state(rt(root)) == before
    assert store.read().entries[0].updated_at == NOW
    other = add(store, "same text", "user")
    assert other.entry_count == 1 and other.changed
    assert [(x.target, x.content) for x in store.read().entries] == [("memory", "same text"), ("user", "same text")]


def test_case_6_nfd_spelling_is_a_duplicate_and_bytes_follow_stored_spelling(root, clock, disk):
    store = make_store(root, clock)
    nfc, nfd = "Caf\u00e9 r\u00e9sum\u00e9", unicodedata.normalize("NFD", "Caf\u00e9 r\u00e9sum\u00e9")
    assert add(store, nfd).used == len(nfd.encode())  # 17 bytes, not the NFC 14
    before = disk.freeze(rt(root))
    assert add(store, nfc).message == "Entry already exists."
    assert disk.state(rt(root)) == before
    receipt = replace(store, nfc, "Caf\u00e9 menu")
    assert receipt.detail == {"replaced": {"from": nfd, "to": "Caf\u00e9 menu"}}
    assert receipt.used == len("Caf\u00e9 menu".encode())


def test_case_7_default_importance_and_replace_keeps_it(root, clock):
    store = make_store(root, clock)
    add(store, "plain")
    add(store, "vital", importance="critical")
    replace(store, "vital", "vital v2")
    assert [(x.content, x.importance) for x in store.read().entries] == [("plain", "normal"), ("vital v2", "critical")]


def test_case_8_user_capacity_in_bytes_not_characters(root, clock, disk):
    store = make_store(root, clock)
    add(store, "x" * 4090, "user")
    before = disk.freeze(rt(root))
    with pytest.raises(RuntimeCapacityError) as info:
        add(store, "\u8d85\u51fa", "user")
    data = dict(info.value.data)
    assert data.pop("maintenance")["budgetBytes"] > 0  # the compaction plan for the assistant (issue 9)
    assert data == {"target": "user", "used": 4090, "projected": 4100, "limit": 4096}
    assert disk.state(rt(root)) == before
    assert no_lock_left(root)


def test_cases_9_10_configured_limit_usage_and_maintenance_plan(root, clock, disk):
    store = make_store(root, clock, memory=20480)
    add(store, "a" * 8000)
    receipt = add(store, "b" * 8000)
    assert receipt.to_dict()["usage"] == {"used": 16004, "limit": 20480}
    before = disk.freeze(rt(root))
    plan = store.maintenance.plan(validate_request("add", "memory", "c" * 5000))
    assert disk.state(rt(root)) == before
    assert (plan.used, plan.projected, plan.limit, plan.requires_maintenance) == (16004, 21008, 20480, True)
    assert plan.revision == store.read().revision
    assert [x.content for x in plan.entries] == ["a" * 8000, "b" * 8000]
    assert plan.pending == Entry("c" * 5000, NOW, NOW, "memory", "normal")
    assert plan.excluded is None
    assert plan.to_dict()["requiresMaintenance"] is True
    small = store.maintenance.plan(validate_request("add", "memory", "c" * 4000))
    assert (small.projected, small.requires_maintenance) == (20008, False)


def test_case_11_replace_by_unique_substring(root, clock):
    store = make_store(root, clock)
    add(store, "Frontend uses TypeScript 5.4", importance="low")
    add(store, "Backend uses Go")
    clock.set("2026-09-16T09:30:00.250Z")
    receipt = replace(store, "TypeScript", "Frontend uses TypeScript 5.6", importance="critical")
    assert receipt.detail == {"replaced": {"from": "Frontend uses TypeScript 5.4", "to": "Frontend uses TypeScript 5.6"}}
    assert store.read().entries[0] == Entry("Frontend uses TypeScript 5.6", NOW, "2026-09-16T09:30:00.250Z",
                                            "memory", "critical")


def test_case_12_remove_by_unique_substring(root, clock):
    store = make_store(root, clock)
    add(store, "drop the SQLite cache", "user")
    receipt = remove(store, "SQLite", "user")
    assert receipt.message == "Entry removed."
    assert receipt.to_dict()["removed"] == "drop the SQLite cache"
    assert (receipt.entry_count, receipt.used) == (0, 0)
    assert read(root, "USER.md") == b""


@pytest.mark.parametrize("target", ["memory", "user"])
def test_case_15_whitespace_padded_exact_text_selects_x(root, clock, target):
    store = make_store(root, clock)
    add(store, "EGO_LINUX_CHROME", target)
    add(store, "X", target)
    replace(store, " \nX\t ", "Y", target)
    assert [x.content for x in store.read().of(target)] == ["EGO_LINUX_CHROME", "Y"]
    remove(store, " \nY\t ", target)
    assert [x.content for x in store.read().of(target)] == ["EGO_LINUX_CHROME"]


def test_case_16_exact_match_in_other_target_falls_back_to_substring(root, clock):
    store = make_store(root, clock)
    add(store, "X", "user")
    add(store, "X11 forwarding on", "memory")
    remove(store, "X", "memory")
    assert [(x.target, x.content) for x in store.read().entries] == [("user", "X")]


def test_case_17_identical_entries_are_ambiguous(root, clock, disk):
    write_store(root, [raw("same"), raw("same"), raw("unique")])
    store = make_store(root, clock)
    before = disk.freeze(rt(root))
    for request in (validate_request("remove", "memory", old_text="same"),
                    validate_request("replace", "memory", "new", "same")):
        with pytest.raises(AmbiguousMatch) as info:
            store.mutate(request)
        assert info.value.data["matches"] == 2
    assert disk.state(rt(root)) == before


def test_case_20_fresh_root_is_created_on_first_write_only(root, clock):
    store = make_store(root, clock)
    assert store.read().entries == () and store.read().exists is False
    assert store.projections.repair().to_dict() == {"repaired": [], "preserved": {}, "skipped": None}
    assert list(root.iterdir()) == []
    add(store, "first")
    assert sorted(p.name for p in rt(root).iterdir()) == [
        ".memories.last-good.json", ".projections-history.json", "MEMORY.md", "USER.md", "memories.json"]
    remove(store, "first")
    assert read(root, "memories.json") == EMPTY_STORE
    assert read(root, "MEMORY.md") == b"" and read(root, "USER.md") == b""
    assert read(root, ".memories.last-good.json") == EMPTY_STORE


def test_case_25_branches_stored_in_given_order(root, clock):
    store = make_store(root, clock)
    add(store, "scoped", branches=["main", "feature/deep"])
    assert json.loads(read(root, "memories.json"))["entries"][0]["branches"] == ["main", "feature/deep"]
    assert list(json.loads(read(root, "memories.json"))["entries"][0]) == [
        "content", "created_at", "updated_at", "target", "importance", "branches"]


def test_case_29_replace_keeps_replaces_or_clears_branches(root, clock):
    store = make_store(root, clock)
    add(store, "scoped fact", branches=["main"])

    def stored():
        return json.loads(read(root, "memories.json"))["entries"][0]

    replace(store, "scoped", "scoped fact v2")
    assert stored()["branches"] == ["main"]
    replace(store, "scoped", "scoped fact v3", branches=["dev"])
    assert stored()["branches"] == ["dev"]
    replace(store, "scoped", "scoped fact v3", branches=[])
    assert "branches" not in stored()
    assert store.read().entries[0].visible_on("anything")


# ================================================================= rejections change nothing


STARTING_ENTRIES = [
    raw("x" * 4090, "user"),
    raw("SQLite for cache"),
    raw("SQLite for index"),
    raw("dup"),
    raw("dup"),
    raw("TypeScript 5 toolchain", importance="critical"),
]
CASE_26 = ["has space", "dot..dot", "/leading-slash", "trailing/", "trailing.", "z" * 129, "bad*name",
           "a@{b", "a^b", "a:b", "a~b"]


def _rejections():
    r = validate_request
    cases = [
        ("section-sign", lambda s: s.mutate(r("add", "memory", "a \u00a7 b")), InvalidInput, "content"),
        ("section-sign-only", lambda s: s.mutate(r("add", "memory", "\u00a7")), InvalidInput, "content"),
        ("empty", lambda s: s.mutate(r("add", "memory", "")), InvalidInput, "content"),
        ("whitespace-only", lambda s: s.mutate(r("add", "user", " \n\t\u3000")), InvalidInput, "content"),
        ("8193-ascii", lambda s: s.mutate(r("add", "memory", "x" * 8193)), InvalidInput, "content"),
        ("8193-cjk", lambda s: s.mutate(r("add", "memory", "\u8bed" * 2731)), InvalidInput, "content"),
        ("8193-emoji", lambda s: s.mutate(r("add", "memory", "\U0001f600" * 2048 + "!")), InvalidInput, "content"),
        ("user-capacity-cjk", lambda s: s.mutate(r("add", "user", "\u8d85\u51fa")), RuntimeCapacityError,
         {"target": "user", "used": 4090, "projected": 4100, "limit": 4096}),
        ("user-capacity-replace", lambda s: s.mutate(r("replace", "user", "y" * 4097, "xxx")), RuntimeCapacityError,
         {"target": "user", "used": 4090, "projected": 4097, "limit": 4096}),
        ("branches-on-user", lambda s: s.mutate(r("add", "user", "u", branches=["main"])), InvalidInput, "branches"),
        ("branches-on-user-empty", lambda s: s.mutate(r("add", "user", "u", branches=[])), InvalidInput, "branches"),
        ("branch-17", lambda s: s.mutate(r("add", "memory", "m", branches=[f"b{i}" for i in range(17)])),
         InvalidInput, "branches"),
        ("branch-repeat", lambda s: s.mutate(r("add", "memory", "m", branches=["a", "b", "a"])),
         InvalidInput, "branches[2]"),
        ("replace-no-match", lambda s: s.mutate(r("replace", "memory", "n", "nothing-like-this")), NoMatch,
         "oldText: no memory entry contains 'nothing-like-this'"),
        ("replace-two-substrings", lambda s: s.mutate(r("replace", "memory", "n", "SQLite")), AmbiguousMatch,
         "oldText: 2 memory entries "),
        ("replace-two-exact", lambda s: s.mutate(r("replace", "memory", "n", "dup")), AmbiguousMatch,
         "oldText: 2 memory entries "),
        ("replace-empty-old", lambda s: s.mutate(r("replace", "memory", "n", " ")), InvalidInput, "oldText"),
        ("replace-into-duplicate", lambda s: s.mutate(r("replace", "memory", "SQLite for index", "cache")),
         InvalidInput, "content"),
        ("remove-no-match", lambda s: s.mutate(r("remove", "user", old_text="SQLite")), NoMatch,
         "oldText: no user entry contains 'SQLite'"),
        ("remove-two-substrings", lambda s: s.mutate(r("remove", "memory", old_text="for")), AmbiguousMatch,
         "oldText: 2 memory entries "),
        ("remove-two-exact", lambda s: s.mutate(r("remove", "memory", old_text="dup")), AmbiguousMatch,
         "oldText: 2 memory entries "),
        ("remove-empty-old", lambda s: s.mutate(r("remove", "memory", old_text="")), InvalidInput, "oldText"),
        ("compact-stale-revision", lambda s: s.maintenance.compact_target("0" * 64, "memory", [{"content": "k"}]),
         RevisionConflict, "changed since revision"),
        ("compact-duplicate", lambda s: s.maintenance.compact_target(s.read().revision, "memory",
                                                          [{"content": "k"}, {"content": " k "}]),
         DuplicateContent, "candidates[1].content"),
        ("compact-bad-budget", lambda s: s.maintenance.compact_target(s.read().revision, "memory", [{"content": "k"}], 10241),
         InvalidInput, "maxBytes"),
        ("compact-user-over-budget", lambda s: s.maintenance.compact_target(s.read().revision, "user", [{"content": "u"}], -1),
         InvalidInput, "maxBytes"),
        ("compact-mutate-no-match", lambda s: s.maintenance.compact_and_mutate(
            s.read().revision, r("remove", "memory", old_text="absent"), [{"content": "k"}]), NoMatch, "absent"),
    ]
    for name in ["-x", "-", "a..b", "a@{b", "x/", "y" * 129, *CASE_26]:
        cases.append((f"branch-{name[:20]}", (lambda n: lambda s: s.mutate(r("add", "memory", "m", branches=["ok", n])))(name),
                      InvalidInput, "branches[1]"))
    return cases


@pytest.mark.parametrize("name, operation, error, expect", _rejections(), ids=[c[0] for c in _rejections()])
def test_rejection_changes_no_byte(root, clock, disk, name, operation, error, expect):
    write_store(root, STARTING_ENTRIES)
    store = make_store(root, clock)
    add(store, "committed once so every file exists")
    before = disk.freeze(rt(root))
    assert set(before) == {"memories.json", "USER.md", "MEMORY.md", ".memories.last-good.json", ".projections-history.json"}
    with pytest.raises(error) as info:
        operation(store)
    assert disk.state(rt(root)) == before
    assert no_lock_left(root)
    if isinstance(expect, dict):
        data = dict(info.value.data)
        data.pop("maintenance", None)  # a USER.md overflow with entries carries its compaction plan (issue 9)
        assert data == expect
    elif isinstance(info.value, InvalidInput):
        assert info.value.field == expect
        assert info.value.message.startswith(expect + ": ")
    else:
        assert expect in info.value.message


# ================================================================= damaged truth file


FIVE = [raw(f"entry {i} \u7b2c{i}\u6761 \U0001f600", "memory" if i % 2 else "user",
            at=f"2026-09-0{i}T08:00:00.000Z") for i in range(1, 6)]


def _truncated(root: Path) -> bytes:
    body = read(root, "memories.json")
    return body[: body.index("entry 3".encode()) + 4]


def _bad_entry(root: Path) -> bytes:
    entries = [*FIVE[:2], raw("bad importance", importance="urgent"), *FIVE[2:]]
    return pretty(entries)


def _utf16(root: Path) -> bytes:
    return read(root, "memories.json").decode("utf-8").encode("utf-16")


@pytest.mark.parametrize(
    "damage, reason, readable",
    [
        (_truncated, "is not valid JSON", [0, 1]),
        (_bad_entry, "entries[2].importance", [0, 1, 2, 3, 4]),
        (_utf16, "UTF-16", [0, 1, 2, 3, 4]),
    ],
    ids=["truncated", "bad-entry", "utf-16"],
)
def test_damaged_store_refuses_every_write_and_reads_what_it_can(root, clock, disk, damage, reason, readable):
    write_store(root, FIVE)  # as the plugin wrote it: no last-good copy exists
    damaged = damage(root)
    (rt(root) / "memories.json").write_bytes(damaged)
    store = make_store(root, clock)
    before = disk.freeze(rt(root))
    memories = str(rt(root) / "memories.json")
    operations = [
        lambda: add(store, "new"),
        lambda: replace(store, "entry 1", "changed"),
        lambda: remove(store, "entry 2", "user"),
        lambda: store.maintenance.plan(validate_request("add", "memory", "new")),
        lambda: store.maintenance.compact_target(store.read().revision, "memory", [{"content": "k"}]),
        lambda: store.maintenance.compact_and_mutate(store.read().revision, validate_request("add", "memory", "n"), []),
    ]
    for operation in operations:
        with pytest.raises(UnreadableStore) as info:
            operation()
        assert info.value.data["file"] == memories
        assert memories in info.value.message and reason in info.value.message
        assert info.value.code == "unreadable-store"
    report = store.projections.repair()
    assert report.skipped is not None and memories in report.skipped
    assert (report.repaired, report.preserved) == ([], {})
    assert disk.state(rt(root)) == before
    state = store.read()
    assert state.problem is not None and memories in state.problem and reason in state.problem
    assert state.exists is True
    assert [x.content for x in state.entries] == [FIVE[i]["content"] for i in readable]


def test_case_21_version_2_fails_closed(root, clock, disk):
    rt(root).mkdir()
    (rt(root) / "memories.json").write_bytes(b'{\n  "version": 2,\n  "entries": []\n}\n')
    store = make_store(root, clock)
    before = disk.freeze(rt(root))
    with pytest.raises(UnreadableStore) as info:
        add(store, "x")
    assert "version: must be 1 (got 2)" in info.value.message
    assert disk.state(rt(root)) == before


# ================================================================= TypeScript plugin format


def copy_fixture(name: str, root: Path) -> dict[str, bytes]:
    rt(root).mkdir()
    files = {}
    for path in (FIXTURES / name).iterdir():
        shutil.copyfile(path, rt(root) / path.name)
        files[path.name] = path.read_bytes()
    return files


BASIC_ENTRIES = (
    Entry("用户偏好简体中文回复，代码注释用英文", "2026-05-01T08:00:00.000Z", "2026-05-01T08:00:00.000Z", "user", "critical"),
    Entry('Build with "npm run build" in C:\\work\\app \U0001f680 </script> & <b>', "2026-05-02T10:15:00.000Z",
          "2026-06-02T09:30:15.250Z", "memory", "normal"),
    Entry("feature/deep uses the staging DB 数据库 \U0001f44d\U0001f3fd", "2026-05-03T00:00:00.000Z",
          "2026-05-03T00:00:00.000Z", "memory", "low", ("main", "feature/deep")),
    Entry("Emoji \U0001f600 and a cafe\u0301 written NFD", "2026-05-04T12:00:00.999Z", "2026-05-04T12:00:00.999Z",
          "user", "normal"),
)
JSON_TAIL = "\n    }\n  ]\n}\n"


def test_ts_fixture_files_are_consistent():
    """Guard for the fixture itself: projections are the plugin's join of the JSON contents."""
    text = (FIXTURES / "basic" / "memories.json").read_text("utf-8")
    assert text.endswith(JSON_TAIL) and "\\u" not in text
    assert (FIXTURES / "basic" / "USER.md").read_bytes() == (
        BASIC_ENTRIES[0].content + SEP + BASIC_ENTRIES[3].content + "\n").encode()
    assert (FIXTURES / "memory-only" / "USER.md").read_bytes() == b""


def test_ts_store_reads_with_same_entries_and_revision(root, clock, disk):
    files = copy_fixture("basic", root)
    store = make_store(root, clock)
    before = disk.freeze(rt(root))
    state = store.read()
    assert state.problem is None and state.exists
    assert state.entries == BASIC_ENTRIES
    assert state.revision == compact_revision(files["memories.json"].decode())
    assert store.projections.repair().to_dict() == {"repaired": [], "preserved": {}, "skipped": None}
    assert disk.state(rt(root)) == before


def test_ts_store_add_appends_in_the_same_format(root, clock, disk):
    files = copy_fixture("basic", root)
    store = make_store(root, clock)
    before = disk.freeze(rt(root))
    receipt = add(store, 'Release \u201cv1\u201d \\ "quoted" \U0001f389 新条目', importance="low", branches=["release/1.0"])
    new_block = (
        ",\n    {\n"
        '      "content": "Release \u201cv1\u201d \\\\ \\"quoted\\" \U0001f389 新条目",\n'
        f'      "created_at": "{NOW}",\n'
        f'      "updated_at": "{NOW}",\n'
        '      "target": "memory",\n'
        '      "importance": "low",\n'
        '      "branches": [\n'
        '        "release/1.0"\n'
        "      ]\n"
        "    }"
    )
    fixture_text = files["memories.json"].decode()
    expected = fixture_text[: -len("\n  ]\n}\n")] + new_block + "\n  ]\n}\n"
    assert read(root, "memories.json") == expected.encode("utf-8")
    assert read(root, ".memories.last-good.json") == expected.encode("utf-8")
    assert receipt.revision == compact_revision(expected)
    new_content = 'Release \u201cv1\u201d \\ "quoted" \U0001f389 新条目'
    assert read(root, "MEMORY.md") == files["MEMORY.md"] + ("\u00a7\n" + new_content + "\n").encode()
    after = disk.state(rt(root))
    assert after["USER.md"] == before["USER.md"]  # untouched target is not rewritten
    assert receipt.used == len((BASIC_ENTRIES[1].content + SEP + BASIC_ENTRIES[2].content + SEP + new_content).encode())
    assert not (rt(root) / "edits").exists()


def test_ts_store_user_add_into_empty_target(root, clock):
    files = copy_fixture("memory-only", root)
    store = make_store(root, clock)
    add(store, "喜欢简洁的回答", "user", importance="critical")
    new_block = (
        ",\n    {\n"
        '      "content": "喜欢简洁的回答",\n'
        f'      "created_at": "{NOW}",\n'
        f'      "updated_at": "{NOW}",\n'
        '      "target": "user",\n'
        '      "importance": "critical"\n'
        "    }"
    )
    expected = files["memories.json"].decode()[: -len("\n  ]\n}\n")] + new_block + "\n  ]\n}\n"
    assert read(root, "memories.json") == expected.encode()
    assert read(root, "USER.md") == "喜欢简洁的回答\n".encode()
    assert read(root, "MEMORY.md") == files["MEMORY.md"]


def test_ts_store_replace_and_remove_keep_other_entries_byte_exact(root, clock):
    files = copy_fixture("basic", root)
    store = make_store(root, clock)
    remove(store, "Emoji", "user")
    text = files["memories.json"].decode()
    start = text.index(",\n    {\n      \"content\": \"Emoji")
    expected = text[:start] + "\n  ]\n}\n"
    assert read(root, "memories.json") == expected.encode()
    assert read(root, "USER.md") == (BASIC_ENTRIES[0].content + "\n").encode()
    replace(store, "staging DB", "feature/deep uses the prod DB")
    expected = expected.replace("feature/deep uses the staging DB 数据库 \U0001f44d\U0001f3fd", "feature/deep uses the prod DB")
    expected = expected.replace('"updated_at": "2026-05-03T00:00:00.000Z"', f'"updated_at": "{NOW}"')
    assert read(root, "memories.json") == expected.encode()


def test_empty_store_after_add_then_remove_is_plugin_empty_format(root, clock):
    copy_fixture("memory-only", root)
    store = make_store(root, clock)
    remove(store, "make ship")
    assert read(root, "memories.json") == EMPTY_STORE
    assert read(root, "MEMORY.md") == b""
    assert read(root, "USER.md") == b""


# ================================================================= compaction (cases 32-37)


def test_case_32_compact_with_stale_revision_conflicts(root, clock, disk):
    store = make_store(root, clock)
    add(store, "first")
    revision = store.read().revision
    add(store, "second")
    before = disk.freeze(rt(root))
    with pytest.raises(RevisionConflict) as info:
        store.maintenance.compact_target(revision, "memory", [{"content": "merged"}])
    assert info.value.data == {"expected": revision, "actual": store.read().revision}
    assert info.value.code == "revision-conflict"
    assert disk.state(rt(root)) == before
    assert [x.content for x in store.read().entries] == ["first", "second"]


def test_case_33_compact_budget_28_and_local_archive(root, clock):
    store = make_store(root, clock)
    long_text = "normal entry that is exactly forty-eight chars.."
    assert len(long_text) == 48
    add(store, "a user fact", "user")
    add(store, long_text)
    add(store, "critical rule", importance="critical")
    add(store, "low detail", importance="low")
    revision = store.read().revision
    clock.advance(hours=1)
    receipt = store.maintenance.compact_target(revision, "memory", [
        {"content": long_text, "importance": "normal"},
        {"content": "critical rule", "importance": "critical"},
        {"content": "low detail", "importance": "low"},
    ], 28)
    assert store.read().entries == (
        Entry("a user fact", NOW, NOW, "user", "normal"),
        Entry("critical rule", NOW, NOW, "memory", "critical"),
        Entry("low detail", NOW, NOW, "memory", "low"),
    )
    assert (receipt.detail["kept"], receipt.detail["dropped"], receipt.detail["archived"]) == (
        ["critical rule", "low detail"], [long_text], 1)
    assert receipt.message == "Compacted memory: kept 2 of 3."
    assert (receipt.used, receipt.entry_count) == (27, 2)
    lines = read(root, "archived/memories.jsonl").decode().splitlines()
    assert [json.loads(line) for line in lines] == [
        {"content": long_text, "created_at": NOW, "updated_at": NOW, "target": "memory", "importance": "normal",
         "archived_at": "2026-09-15T09:00:00.000Z", "revision": revision}]
    assert read(root, "archived/MEMORY.md") == (long_text + "\n").encode()
    assert read(root, "MEMORY.md") == b"critical rule\n\xc2\xa7\nlow detail\n"


def test_case_34_duplicate_candidates_rejected(root, clock, disk):
    store = make_store(root, clock)
    add(store, "one")
    before = disk.freeze(rt(root))
    with pytest.raises(DuplicateContent) as info:
        store.maintenance.compact_target(store.read().revision, "memory", [{"content": "one"}, {"content": "one"}])
    assert info.value.code == "invalid-input"
    assert info.value.data["field"] == "candidates[1].content"
    assert disk.state(rt(root)) == before


@pytest.mark.parametrize(
    "action, candidates, field, rule",
    [
        ("replace", [{"content": "other"}, {"content": "use pnpm"}], "candidates[1].content",
         "duplicates the pending mutation"),
        ("replace", [{"content": "use yarn"}], "candidates[0].content", "reintroduces the entry being replaced"),
        ("remove", [{"content": "other"}, {"content": "use yarn"}], "candidates[1].content",
         "reintroduces the entry being removed"),
        ("add", [{"content": "use pnpm"}], "candidates[0].content", "duplicates the pending mutation"),
    ],
)
def test_case_35_compact_and_mutate_rejects_pending_or_excluded_text(root, clock, disk, action, candidates, field, rule):
    store = make_store(root, clock)
    add(store, "use yarn")
    add(store, "other")
    before = disk.freeze(rt(root))
    request = {
        "replace": validate_request("replace", "memory", "use pnpm", "yarn"),
        "remove": validate_request("remove", "memory", old_text="yarn"),
        "add": validate_request("add", "memory", "use pnpm"),
    }[action]
    with pytest.raises(InvalidInput) as info:
        store.maintenance.compact_and_mutate(store.read().revision, request, candidates)
    assert (info.value.field, info.value.rule) == (field, rule)
    assert disk.state(rt(root)) == before


def test_case_35_compact_and_mutate_replace_succeeds(root, clock):
    store = make_store(root, clock)
    add(store, "use yarn", importance="critical")
    add(store, "other")
    clock.set("2026-09-20T00:00:00.000Z")
    receipt = store.maintenance.compact_and_mutate(
        store.read().revision, validate_request("replace", "memory", "use pnpm", "yarn"), [{"content": "other"}])
    assert store.read().entries == (
        Entry("other", NOW, NOW, "memory", "normal"),
        Entry("use pnpm", NOW, "2026-09-20T00:00:00.000Z", "memory", "critical"),
    )
    assert receipt.message == "Entry replaced. Compacted memory: kept 1 of 1."
    assert receipt.detail["archived"] == 0
    assert not (rt(root) / "archived").exists()


def test_case_36_compact_and_mutate_conflict_and_capacity(root, clock, disk):
    store = make_store(root, clock, memory=100)
    add(store, "a" * 40)
    stale = store.read().revision
    add(store, "b" * 40)
    before = disk.freeze(rt(root))
    request = validate_request("add", "memory", "c" * 30)
    with pytest.raises(RevisionConflict):
        store.maintenance.compact_and_mutate(stale, request, [{"content": "a" * 40}])
    assert disk.state(rt(root)) == before
    with pytest.raises(RuntimeCapacityError) as info:
        store.maintenance.compact_and_mutate(store.read().revision, request, [{"content": "a" * 40}, {"content": "b" * 40}])
    assert info.value.data == {"target": "memory", "used": 84, "projected": 118, "limit": 100}
    assert disk.state(rt(root)) == before
    assert not (rt(root) / "archived").exists()


def test_case_37_over_capacity_remove_plan_and_compact_and_mutate(root, clock, disk):
    big = make_store(root, clock, memory=20480)
    add(big, "a" * 4000, importance="normal")
    add(big, "b" * 4000, importance="critical")
    add(big, "c" * 4000, importance="low", branches=["main"])
    add(big, "remove me")
    store = make_store(root, clock, memory=10240)
    before = disk.freeze(rt(root))
    request = validate_request("remove", "memory", old_text="remove me")
    with pytest.raises(RuntimeCapacityError) as info:
        store.mutate(request)
    assert info.value.data == {"target": "memory", "used": 12021, "projected": 12008, "limit": 10240}
    plan = store.maintenance.plan(request)
    assert disk.state(rt(root)) == before
    assert [x.content for x in plan.entries] == ["a" * 4000, "b" * 4000, "c" * 4000]
    assert plan.pending is None
    assert plan.excluded.content == "remove me"
    assert (plan.used, plan.projected, plan.limit, plan.requires_maintenance) == (12021, 12008, 10240, True)
    budget = compaction_budget(plan.limit, None, bool(plan.entries))
    assert budget == 7168
    candidates = [Candidate(x.content, x.importance, x.branches) for x in plan.entries]
    receipt = store.maintenance.compact_and_mutate(plan.revision, request, candidates, budget)
    assert [x.content for x in store.read().entries] == ["b" * 4000]
    assert receipt.to_dict()["removed"] == "remove me"
    assert receipt.detail["archived"] == 2
    archived = [json.loads(line) for line in read(root, "archived/memories.jsonl").decode().splitlines()]
    assert archived == [
        {**raw("a" * 4000, at=NOW), "archived_at": NOW, "revision": plan.revision},
        {**raw("c" * 4000, importance="low", at=NOW), "branches": ["main"], "archived_at": NOW,
         "revision": plan.revision},
    ]
    assert "remove me" not in read(root, "archived/memories.jsonl").decode()
    assert read(root, "archived/MEMORY.md") == ("a" * 4000 + SEP + "c" * 4000 + "\n").encode()


def test_second_local_archive_appends_with_delimiter(root, clock):
    store = make_store(root, clock)
    for text in ("one", "two", "three"):
        add(store, text)
    store.maintenance.compact_target(store.read().revision, "memory", [{"content": "two"}, {"content": "three"}])
    store.maintenance.compact_target(store.read().revision, "memory", [{"content": "three"}])
    assert read(root, "archived/MEMORY.md") == b"one\n\xc2\xa7\ntwo\n"
    assert len(read(root, "archived/memories.jsonl").splitlines()) == 2


def test_compact_user_target_keeps_memory_entries_first(root, clock):
    store = make_store(root, clock)
    add(store, "u1", "user")
    add(store, "m1")
    add(store, "u2", "user")
    store.maintenance.compact_target(store.read().revision, "user", [{"content": "u2"}, {"content": "u3 new", "importance": "low"}])
    assert [(x.target, x.content, x.created_at) for x in store.read().entries] == [
        ("memory", "m1", NOW), ("user", "u2", NOW), ("user", "u3 new", NOW)]
    assert read(root, "archived/USER.md") == b"u1\n"


def test_compaction_inherits_branches_of_identical_entry(root, clock):
    store = make_store(root, clock)
    add(store, "scoped", branches=["main"])
    add(store, "global")
    store.maintenance.compact_target(store.read().revision, "memory", [{"content": "scoped"}, {"content": "new", "branches": ["dev"]}])
    assert [(x.content, x.branches) for x in store.read().entries] == [("scoped", ("main",)), ("new", ("dev",))]


# ================================================================= hand edits and repair


def test_hand_edit_is_preserved_then_repaired_and_second_repair_does_nothing(root, clock, disk):
    store = make_store(root, clock)
    add(store, "A")
    add(store, "B")
    garbage = "# my notes\nA\n§\nB edited by hand 手改\n".encode()
    (rt(root) / "MEMORY.md").write_bytes(garbage)
    report = store.projections.repair()
    saved = rt(root) / "edits" / f"{STAMP}-MEMORY.md"
    assert report.to_dict() == {"repaired": ["MEMORY.md"], "preserved": {"MEMORY.md": str(saved)}, "skipped": None}
    assert saved.read_bytes() == garbage
    assert read(root, "MEMORY.md") == b"A\n\xc2\xa7\nB\n"
    before = disk.freeze(rt(root))
    assert store.projections.repair().to_dict() == {"repaired": [], "preserved": {}, "skipped": None}
    assert disk.state(rt(root)) == before
    assert no_lock_left(root)


def test_two_hand_edits_in_the_same_millisecond_get_distinct_files(root, clock):
    store = make_store(root, clock)
    add(store, "A")
    (rt(root) / "MEMORY.md").write_bytes(b"first edit\n")
    store.projections.repair()
    (rt(root) / "MEMORY.md").write_bytes(b"second edit\n")
    report = store.projections.repair()
    second = rt(root) / "edits" / f"{STAMP}-MEMORY-2.md"
    assert report.preserved == {"MEMORY.md": str(second)}
    assert second.read_bytes() == b"second edit\n"
    assert (rt(root) / "edits" / f"{STAMP}-MEMORY.md").read_bytes() == b"first edit\n"


def test_missing_projection_is_recreated_without_an_edit_file(root, clock):
    store = make_store(root, clock)
    add(store, "profile", "user")
    (rt(root) / "USER.md").unlink()
    report = store.projections.repair()
    assert report.to_dict() == {"repaired": ["USER.md"], "preserved": {}, "skipped": None}
    assert read(root, "USER.md") == b"profile\n"
    assert not (rt(root) / "edits").exists()


def test_hand_edit_unrepaired_at_commit_is_preserved(root, clock):
    store = make_store(root, clock)
    add(store, "A")
    add(store, "profile", "user")
    (rt(root) / "MEMORY.md").write_bytes(b"hand edit of memory\n")
    (rt(root) / "USER.md").write_bytes(b"hand edit of user\n")
    receipt = add(store, "C")
    memory_saved = rt(root) / "edits" / f"{STAMP}-MEMORY.md"
    user_saved = rt(root) / "edits" / f"{STAMP}-USER.md"
    assert receipt.preserved == {"USER.md": str(user_saved), "MEMORY.md": str(memory_saved)}
    assert receipt.to_dict()["preserved"] == receipt.preserved
    assert memory_saved.read_bytes() == b"hand edit of memory\n"
    assert user_saved.read_bytes() == b"hand edit of user\n"
    assert read(root, "MEMORY.md") == b"A\n\xc2\xa7\nC\n"
    assert read(root, "USER.md") == b"profile\n"


def test_stale_projection_left_by_an_interrupted_commit_is_not_called_a_hand_edit(root, clock):
    store = make_store(root, clock)
    add(store, "A")
    (rt(root) / "MEMORY.md").write_bytes(b"")  # emptied: nothing to preserve
    receipt = add(store, "B")
    assert receipt.preserved == {}
    assert not (rt(root) / "edits").exists()


# ================================================================= recover


def _five_committed(root, clock) -> RuntimeStore:
    store = make_store(root, clock)
    for item in FIVE:
        add(store, item["content"], item["target"])
    return store


def test_recover_truncated_file_with_last_good_copy(root, clock):
    store = _five_committed(root, clock)
    good = read(root, "memories.json")
    cut = good[: good.index("entry 3".encode()) + 3]
    (rt(root) / "memories.json").write_bytes(cut)
    state = store.read()
    assert state.problem is not None
    assert [x.content for x in state.entries] == [x["content"] for x in FIVE]
    clock.set("2026-09-16T10:11:12.131Z")
    result = store.recover()
    quarantined = rt(root) / "quarantine" / "20260916T101112.131Z-memories.json"
    assert result == {
        "recovered": True, "quarantined": str(quarantined), "entries": 5, "fromDamaged": 2, "fromLastGood": 3,
        "damagedEntries": 0, "preserved": {}, "message": result["message"],
    }
    assert quarantined.read_bytes() == cut
    assert read(root, "memories.json") == good
    assert store.read().problem is None
    assert add(store, "writes work again").entry_count == 4


def test_recover_utf16_file_salvages_every_entry(root, clock):
    files = copy_fixture("basic", root)
    utf16 = files["memories.json"].decode().encode("utf-16")
    (rt(root) / "memories.json").write_bytes(utf16)
    store = make_store(root, clock)
    result = store.recover()
    assert (result["recovered"], result["entries"], result["fromDamaged"], result["fromLastGood"]) == (True, 4, 4, 0)
    assert read(root, "memories.json") == files["memories.json"]
    assert Path(result["quarantined"]).read_bytes() == utf16
    assert read(root, "USER.md") == files["USER.md"] and read(root, "MEMORY.md") == files["MEMORY.md"]


def test_recover_bad_entry_keeps_the_rest_and_quarantines(root, clock):
    write_store(root, [raw("good one"), raw("bad", importance="urgent"), raw("good two", "user")])
    damaged = read(root, "memories.json")
    store = make_store(root, clock)
    result = store.recover()
    assert (result["entries"], result["damagedEntries"]) == (2, 1)
    assert read(root, "memories.json") == pretty([raw("good one"), raw("good two", "user")])
    assert Path(result["quarantined"]).read_bytes() == damaged
    assert result["preserved"] == {"MEMORY.md": str(rt(root) / "edits" / f"{STAMP}-MEMORY.md")}


def test_recover_missing_truth_file_from_last_good(root, clock):
    store = _five_committed(root, clock)
    good = read(root, "memories.json")
    (rt(root) / "memories.json").unlink()
    assert store.read().problem is not None
    with pytest.raises(UnreadableStore):
        add(store, "x")
    result = store.recover()
    assert (result["quarantined"], result["fromLastGood"]) == (None, 5)
    assert read(root, "memories.json") == good


def test_recover_on_valid_store_does_nothing(root, clock, disk):
    _five_committed(root, clock)
    store = make_store(root, clock)
    before = disk.freeze(rt(root))
    result = store.recover()
    assert (result["recovered"], result["quarantined"], result["entries"]) == (False, None, 5)
    assert disk.state(rt(root)) == before


# ================================================================= file modes


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_modes_runtime_dir_0700_files_0600(tmp_path, clock):
    root = tmp_path / "new" / "root"
    store = make_store(root, clock, memory=30)
    add(store, "A")
    add(store, "profile", "user")
    (rt(root) / "MEMORY.md").write_bytes(b"edit\n")
    store.projections.repair()
    store.maintenance.compact_target(store.read().revision, "memory", [{"content": "B"}])
    (rt(root) / "memories.json").write_bytes(b"{")
    store.recover()
    for directory in (tmp_path / "new", root, rt(root), rt(root) / "edits", rt(root) / "archived",
                      rt(root) / "quarantine"):
        assert mode(directory) == 0o700, directory
    files = [p for p in rt(root).rglob("*") if p.is_file()]
    assert sorted(str(p.relative_to(rt(root))) for p in files) == sorted([
        ".memories.last-good.json", ".projections-history.json", "MEMORY.md", "USER.md", "memories.json",
        f"edits/{STAMP}-MEMORY.md", "archived/memories.jsonl", "archived/MEMORY.md",
        f"quarantine/{STAMP}-memories.json",
    ])
    for path in files:
        assert mode(path) == 0o600, path
    assert not list(rt(root).glob(".*.tmp"))


# ================================================================= diagnose (read-only health check)


def findings(store):
    from mnemon_ls.runtime.store import diagnose

    return [(f.level, f.subject, f.message) for f in diagnose(store)]


def test_diagnose_fresh_root_writes_nothing(root, clock):
    store = make_store(root, clock)
    assert findings(store) == [("ok", str(rt(root)), "no Runtime memory yet (created on the first write)")]
    assert list(root.iterdir()) == []


def test_diagnose_valid_store_and_its_warnings(root, clock, disk):
    big = make_store(root, clock, user=4096)
    add(big, "u" * 20, "user")
    add(big, "m")
    add(big, "hand", "memory")
    (rt(root) / "MEMORY.md").write_bytes(b"edited\n")
    (rt(root) / "USER.md").unlink()
    (rt(root) / "memories.json").chmod(0o644)
    store = make_store(root, clock, user=10)
    revision = store.read().revision
    before = disk.freeze(rt(root))
    assert findings(store) == [
        ("ok", str(rt(root) / "memories.json"), f"valid: 1 user and 2 memory entries, revision {revision[:12]}"),
        ("problem", "user", "USER.md uses 20 of its 10 UTF-8 bytes, 10 over the limit"),
        ("warning", str(rt(root) / "USER.md"), "missing"),
        ("warning", str(rt(root) / "MEMORY.md"), "differs from memories.json (hand edit or interrupted write)"),
        ("warning", str(rt(root) / "memories.json"), "mode 0644 is wider than 0600"),
    ]
    assert disk.state(rt(root)) == before


def test_diagnose_damaged_store_counts_what_recover_restores(root, clock, disk):
    store = _five_committed(root, clock)
    good = read(root, "memories.json")
    (rt(root) / "memories.json").write_bytes(good[: good.index("entry 3".encode())])
    (rt(root) / ".memories.lock").write_text("999999999\n")
    before = disk.freeze(rt(root))
    from mnemon_ls.runtime.store import diagnose

    result = diagnose(store)
    assert disk.state(rt(root)) == before
    problem = result[0]
    assert (problem.level, problem.subject) == ("problem", str(rt(root) / "memories.json"))
    assert problem.message == store.read().problem.removeprefix(f"{rt(root) / 'memories.json'}: ")
    assert problem.message.startswith("is not valid JSON")
    assert "restores 5 entries (2 readable in the damaged file, 0 damaged there" in problem.advice
    lock = result[1]
    assert (lock.level, lock.subject) == ("warning", str(rt(root) / ".memories.lock"))
    assert lock.message.startswith("left by pid 999999999, which is no longer running (")  # no such process


# ================================================================= rejected operations on a never-used root


@pytest.mark.parametrize("operation", ["remove-no-match", "plan"])
def test_rejected_operation_on_never_used_root_creates_nothing(tmp_path, clock, operation):
    root = tmp_path / "never-used"
    store = make_store(root, clock)
    if operation == "plan":
        plan = store.maintenance.plan(validate_request("add", "memory", "x"))
        assert plan.requires_maintenance is False
    else:
        with pytest.raises(NoMatch):
            remove(store, "anything")
    assert list(tmp_path.iterdir()) == []


def test_repair_waits_for_an_in_place_save_to_finish(tmp_path):
    """An editor saving MEMORY.md in place truncates it, then writes. A repair that reads the empty file in
    between must not rename over it (the editor's bytes would go to the replaced inode and be lost): it waits
    until the file has been quiet, then preserves the whole edit.

    The 0.2 s pause models a slow editor between its truncate and its write (it is the condition under
    test, not a synchronisation); the store's settle period is set to 2 s so the margin is wide. Without
    the settle wait the repair finishes long before the write and the edit is lost (the test fails)."""
    import threading

    from mnemon_ls.runtime.ops import validate_request
    from mnemon_ls.runtime.store import RuntimeStore

    store = RuntimeStore(tmp_path / "root", hand_edits="restore")
    store.mutate(validate_request("add", "memory", "kept fact"))
    store.settle_seconds = 2.0
    memory = store.projection_path("memory")
    edit = b"kept fact\n\xc2\xa7\nmy hand-written line\n"
    outcome: dict = {}
    with open(memory, "r+b") as editor:
        editor.truncate(0)  # first half of an in-place save
        editor.flush()
        worker = threading.Thread(target=lambda: outcome.update(report=store.projections.repair()))
        worker.start()
        time.sleep(0.2)  # the slow editor
        editor.write(edit)  # second half of the save, through the editor's own descriptor
        editor.flush()
        os.fsync(editor.fileno())
    worker.join(timeout=30)
    report = outcome["report"]
    assert report.repaired == ["MEMORY.md"]
    assert Path(report.preserved["MEMORY.md"]).read_bytes() == edit
    assert memory.read_bytes() == b"kept fact\n"


@pytest.mark.parametrize("path_taken", ["repair", "commit"])
def test_an_emptied_projection_is_waited_for_past_the_settle_period(tmp_path, monkeypatch, path_taken):
    """An in-place save stopped between its truncation and its write for longer than the settle period (a loaded
    machine): the repair (a watcher or a wake) and a commit (another writer) must wait for the empty file to be
    written, not rename over it, so the editor's bytes are never written into a replaced inode.

    The truncation is dated 0.5 s back, past the 0.15 s settle period and inside the 2 s grace for an empty
    file; the editor's write is made from the seam that runs when the store starts waiting for the empty file
    (no sleep). Without the grace the store reads the empty file at once and rebuilds it: the seam never runs and
    the edit written afterwards is in no file (the test fails on the first assertion)."""
    from mnemon_ls.runtime import repair as repair_module
    from mnemon_ls.runtime.ops import validate_request
    from mnemon_ls.runtime.store import RuntimeStore

    store = RuntimeStore(tmp_path / "root", hand_edits="restore")
    store.mutate(validate_request("add", "memory", "kept fact"))
    memory = store.projection_path("memory")
    edit = b"kept fact\n\xc2\xa7\nmy hand-written line\n"
    with open(memory, "r+b") as editor:
        editor.truncate(0)  # first half of an in-place save
        editor.flush()
        back = time.time() - 0.5
        os.utime(memory, (back, back))
        written: list[Path] = []

        def finish_save(path: Path) -> None:  # the editor resumes: second half of its save, same descriptor
            if not written:
                editor.write(edit)
                editor.flush()
                written.append(path)

        monkeypatch.setattr(repair_module, "_empty_wait_hook", finish_save)
        if path_taken == "repair":
            report = store.projections.repair()
            assert written == [memory]
            assert report.repaired == ["MEMORY.md"]
            saved = report.preserved["MEMORY.md"]
        else:
            receipt = store.mutate(validate_request("add", "memory", "added by another writer"))
            assert written == [memory]
            saved = receipt.preserved["MEMORY.md"]
    assert Path(saved).read_bytes() == edit  # the whole edit is kept, none of it went to a replaced inode
    expected = b"kept fact\n" if path_taken == "repair" else b"kept fact\n\xc2\xa7\nadded by another writer\n"
    assert memory.read_bytes() == expected


def test_an_empty_projection_older_than_the_grace_is_rebuilt_without_waiting(tmp_path, monkeypatch):
    """An empty MEMORY.md last modified more than 2 s ago (a power loss, a person's deliberate empty save) is
    rebuilt at once: the seam that runs while the store waits for an empty file never runs."""
    from mnemon_ls.runtime import repair as repair_module
    from mnemon_ls.runtime.ops import validate_request
    from mnemon_ls.runtime.store import RuntimeStore

    store = RuntimeStore(tmp_path / "root", hand_edits="restore")
    store.mutate(validate_request("add", "memory", "kept fact"))
    memory = store.projection_path("memory")
    memory.write_bytes(b"")
    back = time.time() - 5
    os.utime(memory, (back, back))
    waited: list[Path] = []
    monkeypatch.setattr(repair_module, "_empty_wait_hook", waited.append)
    report = store.projections.repair()
    assert waited == []
    assert report.repaired == ["MEMORY.md"] and report.preserved == {}
    assert memory.read_bytes() == b"kept fact\n"
