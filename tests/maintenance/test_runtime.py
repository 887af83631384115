"""MEMORY.md overflow archival (issue 9): plan + greedy packing, destinations (one space, BM25 routing across
several, explicit routes, the local archive), evidence, lineage, the wake's Archived line, `runtime archived`
and the doctor check. Real git repositories (pygit2), real SQLite stores (the embedded provider), the Host
operation every surface calls."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from mnemon_ls.errors import InvalidInput, RuntimeCapacityError
from mnemon_ls.host import WorkspaceHost
from mnemon_ls.maintenance import lineage as lineage_mod
from mnemon_ls.maintenance import read_lineage, verify_lineage
from mnemon_ls.maintenance.runtime import eligible_spaces, route_entries
from mnemon_ls.runtime import ops
from mnemon_ls.runtime.model import projection_bytes
from mnemon_ls.settings import load_settings

from tests.conftest import disk_state
from tests.gitrepo import create_branch, make_repo, switch

LIMIT = 1024


def make_host(repo_dir: Path, **runtime_memory) -> WorkspaceHost:
    settings = load_settings({"storageScope": "workspace", "runtimeUserScope": "storage",
                              "runtimeMemory": {"memoryLimitBytes": LIMIT, **runtime_memory}})
    return WorkspaceHost(repo_dir, settings)


@pytest.fixture
def repo_dir(tmp_path: Path) -> Path:
    path = tmp_path / "repo"
    make_repo(path, "main")
    return path


def add(host: WorkspaceHost, content: str, importance: str | None = None, branches=None, routes=None):
    request = ops.validate_request("add", "memory", content, None, importance, branches)
    return host.mutate_runtime(request, routes)


def fact(n: int) -> str:
    return f"Fact {n:03d}: the build cache lives in .cache/build-{n} and is safe to delete"


def space_contents(root: Path, space_id: str) -> dict[str, list[str]]:
    """content -> tags of every live item, read straight from the Mnemon CLI's SQLite schema."""
    db = sqlite3.connect(root / "data" / space_id / "mnemon.db")
    try:
        rows = db.execute("SELECT content, tags FROM insights WHERE deleted_at IS NULL").fetchall()
    finally:
        db.close()
    return {content: json.loads(tags or "[]") for content, tags in rows}


def hot(host: WorkspaceHost) -> list[str]:
    return [e.content for e in host.runtime.read().memory]


# ------------------------------------------------------------------------------------------ one space


def test_200_adds_with_an_active_space_keep_every_fact_in_hot_memory_or_the_space(repo_dir: Path) -> None:
    host = make_host(repo_dir)
    space = host.spaces.create_space("Project", "Build and CI facts", active=True).record.id
    scoped = {n for n in range(200) if n % 7 == 3}
    receipts = [add(host, fact(n), "critical" if n % 50 == 0 else None,
                    ["feature/cache"] if n in scoped else None) for n in range(200)]
    archivals = [r.detail["maintenance"] for r in receipts if "maintenance" in r.detail]
    assert archivals and all(m["kind"] == "mnemon-archive" for m in archivals)
    assert all(r.used <= LIMIT for r in receipts)
    in_hot = set(hot(host))
    stored = space_contents(host.root, space)
    for n in range(200):
        assert fact(n) in in_hot or fact(n) in stored, n
    assert len(in_hot) + len(stored) == 200  # archived entries left hot memory (no entry is in both)
    # importance critical never left: the packing keeps it first
    assert {fact(n) for n in (0, 50, 100, 150)} <= in_hot
    # branch scope travels as tags, and recall on another branch does not bring it back
    for content, tags in stored.items():
        n = int(content[5:8])
        assert ("branch:feature/cache" in tags) == (n in scoped)
    archived_scoped = [n for n in scoped if fact(n) in stored]
    archived_plain = [n for n in range(200) if n not in scoped and fact(n) in stored]
    assert archived_scoped and archived_plain
    on_main = host.spaces.recall(fact(archived_scoped[0]), branch="main", mode="keyword", limit=50)
    assert fact(archived_scoped[0]) not in [r["content"] for r in on_main.results]
    on_feature = host.spaces.recall(fact(archived_scoped[0]), branch="feature/cache", mode="keyword", limit=50)
    assert fact(archived_scoped[0]) in [r["content"] for r in on_feature.results]
    plain = host.spaces.recall(fact(archived_plain[0]), branch="main", mode="keyword", limit=50)
    assert fact(archived_plain[0]) in [r["content"] for r in plain.results]
    # one lineage line per archived fact, naming the item that holds exactly its content
    log = read_lineage(host.root)
    assert not log.damaged and len(log.records) == len(stored)
    db_ids = {}
    db = sqlite3.connect(host.root / "data" / space / "mnemon.db")
    for item_id, content in db.execute("SELECT id, content FROM insights WHERE deleted_at IS NULL"):
        db_ids[item_id] = content
    db.close()
    for record in log.records:
        space_id, item_id = record.space_item
        assert space_id == space and db_ids[item_id] in stored
        assert record.destination.digest == lineage_mod.sha256_hex(db_ids[item_id])
        assert record.source.layer_id == "runtime" and record.source.reference.startswith("runtime:")
    # the receipt of one archival says what went where and how many bytes it freed
    first = archivals[0]
    assert first["destinations"] == [{"kind": "memory-space", "spaceId": space, "spaceName": "Project",
                                      "count": len(first["archived"])}]
    assert first["bytesFreed"] > 0 and first["summary"].startswith(f"Archived {len(first['archived'])} entries")
    assert all(a["evidence"] == "committed" and a["destination"]["spaceId"] == space for a in first["archived"])
    assert verify_lineage(host.root, host.spaces)[-1].level == "ok"
    # nothing went to the local archive
    assert not (host.root / "runtime" / "archived" / "memories.jsonl").exists()
    # the wake counts what was archived
    snapshot, _ = host.wake()
    assert snapshot.archived == len(stored)
    assert f"Archived: {len(stored)} entries left MEMORY.md when it was full, {len(stored)} into Memory Spaces" \
        in snapshot.text


def test_packing_keeps_the_plan_budget_and_the_source_indexes_number_the_plan(repo_dir: Path) -> None:
    host = make_host(repo_dir)
    host.spaces.create_space("Project", "Build facts", active=True)
    n = 0
    while True:
        receipt = add(host, fact(n))
        n += 1
        if "maintenance" in receipt.detail:
            break
    maintenance = receipt.detail["maintenance"]
    plan_entries = [fact(i) for i in range(n - 1)]
    # budget floor(1024 * 0.7) - bytes(pending) - 4; equal importance keeps the oldest (ties in order)
    budget = 716 - len(fact(n - 1).encode()) - 4
    kept = ops.pack([ops.Candidate(c, "normal") for c in plan_entries], budget)
    assert hot(host) == [plan_entries[i] for i in kept] + [fact(n - 1)]
    assert [a["sourceIndex"] for a in maintenance["archived"]] == [i + 1 for i in range(n - 1) if i not in kept]
    assert [a["summary"] for a in maintenance["archived"]] == [plan_entries[i] for i in range(n - 1) if i not in kept]
    revision = maintenance["planRevision"]
    assert [a["source"] for a in maintenance["archived"]] == [f"runtime:{revision}:memory:{a['sourceIndex']}"
                                                              for a in maintenance["archived"]]
    assert maintenance["bytesFreed"] == len("\n§\n".join(plan_entries + [fact(n - 1)]).encode()) - receipt.used
    record = read_lineage(host.root).records[0]
    assert record.source.digest == lineage_mod.entry_digest(plan_entries[maintenance["archived"][0]["sourceIndex"] - 1],
                                                            "normal")


def test_a_replace_over_capacity_archives_too_and_the_replaced_text_is_not_archived(repo_dir: Path) -> None:
    host = make_host(repo_dir, memoryLimitBytes=300)
    for n in range(4):
        add(host, fact(n))
    request = ops.validate_request("replace", "memory", fact(3) + " and more " * 8, fact(3), None, None)
    receipt = host.mutate_runtime(request)
    assert receipt.detail["maintenance"]["kind"] == "local-archive"
    assert hot(host)[-1] == fact(3) + " and more" * 8
    assert fact(3) not in [json.loads(line)["content"] for line in
                           (host.root / "runtime" / "archived" / "memories.jsonl").read_text().splitlines()]


def test_reject_keeps_the_capacity_error_and_changes_nothing(repo_dir: Path) -> None:
    host = make_host(repo_dir, maintenance="reject")
    host.spaces.create_space("Project", "Build facts", active=True)
    n = 0
    with pytest.raises(RuntimeCapacityError):
        while True:
            add(host, fact(n))
            n += 1
    before = disk_state(host.root)
    with pytest.raises(RuntimeCapacityError):
        add(host, fact(n))
    assert disk_state(host.root) == before


def test_a_pending_entry_over_the_limit_alone_keeps_the_capacity_error(repo_dir: Path) -> None:
    host = make_host(repo_dir, memoryLimitBytes=100)
    add(host, "short fact")
    before = disk_state(host.root)
    with pytest.raises(RuntimeCapacityError) as error:
        add(host, "x" * 101)
    assert error.value.data["projected"] == 10 + 4 + 101
    assert disk_state(host.root) == before


# ------------------------------------------------------------------------------------------ no space


def test_200_adds_without_a_space_go_to_the_local_archive(repo_dir: Path) -> None:
    host = make_host(repo_dir)
    for n in range(200):
        receipt = add(host, fact(n))
        if "maintenance" in receipt.detail:
            assert receipt.detail["maintenance"]["kind"] == "local-archive"
    archive = host.root / "runtime" / "archived"
    lines = [json.loads(line) for line in (archive / "memories.jsonl").read_text().splitlines()]
    archived = [line["content"] for line in lines]
    assert sorted(hot(host) + archived) == sorted(fact(n) for n in range(200))
    assert all(line["target"] == "memory" and len(line["revision"]) == 64 and line["archived_at"] for line in lines)
    # the archive's MEMORY.md is in the projection format: contents joined by "\n§\n", one final newline
    assert (archive / "MEMORY.md").read_bytes() == "\n§\n".join(archived).encode() + b"\n"
    log = read_lineage(host.root)
    assert [r.summary for r in log.records] == archived
    assert {r.destination.reference for r in log.records} == {"runtime/archived/memories.jsonl"}
    assert verify_lineage(host.root, None)[-1].level == "ok"
    snapshot, _ = host.wake()
    assert f"{len(archived)} into the local archive runtime/archived/MEMORY.md" in snapshot.text
    # a local archive entry that disappears is a doctor problem
    (archive / "memories.jsonl").write_text("\n".join(json.dumps(line) for line in lines[1:]) + "\n")
    problems = [f for f in verify_lineage(host.root, None) if f.level == "problem"]
    assert len(problems) == 1 and log.records[0].source.reference in problems[0].message


def test_an_inactive_space_is_not_eligible_and_is_not_activated(repo_dir: Path) -> None:
    host = make_host(repo_dir)
    space = host.spaces.create_space("Project", "Build facts", active=False).record.id
    for n in range(30):
        add(host, fact(n))
    assert host.spaces.get_space(space).record.active is False
    assert space_contents(host.root, space) == {}
    assert (host.root / "runtime" / "archived" / "memories.jsonl").exists()


# ------------------------------------------------------------------------------------------ several spaces


def test_routes_across_two_spaces_by_name_and_description(repo_dir: Path) -> None:
    host = make_host(repo_dir, memoryLimitBytes=400)
    build = host.spaces.create_space("Build", "compiler toolchain cache linker", active=True).record.id
    design = host.spaces.create_space("Design", "colors layout typography screens", active=True).record.id
    assert build == "default"
    facts = ["The linker needs the toolchain from /opt/llvm", "Screens use the 8px layout grid",
             "Brand colors are teal and sand", "Clear the compiler cache after upgrades",
             "Nothing here matches either space"]
    assert route_entries(facts, eligible_spaces(host.spaces)) == [build, design, design, build, build]
    for text in facts:
        add(host, text, "low")  # archived first: packing keeps critical, then normal
    for n in range(12):
        add(host, f"Unrelated note number {n} about meetings")
    stored_build, stored_design = space_contents(host.root, build), space_contents(host.root, design)
    in_hot = set(hot(host))
    for text, where in zip(facts, (stored_build, stored_design, stored_design, stored_build, stored_build)):
        assert text in in_hot or text in where, text
    assert set(stored_build) & set(stored_design) == set()
    assert any(t in stored_design for t in facts[1:3])


def test_bm25_ties_go_to_the_default_space_then_the_first(repo_dir: Path) -> None:
    host = make_host(repo_dir)
    first = host.spaces.create_space("Alpha", "one", active=True).record.id
    second = host.spaces.create_space("Beta", "two", active=True).record.id
    spaces = eligible_spaces(host.spaces)
    assert first == "default"
    assert route_entries(["no overlap at all"], spaces) == ["default"]
    assert route_entries(["no overlap at all"], list(reversed(spaces))) == ["default"]
    host.spaces.deactivate(first)
    third = host.spaces.create_space("Gamma", "three", active=True).record.id
    assert [s.record.id for s in eligible_spaces(host.spaces)] == [second, third]
    assert route_entries(["no overlap"], eligible_spaces(host.spaces)) == [second]


def fill_to_overflow(host: WorkspaceHost) -> int:
    """Adds facts until the next add would overflow (with maintenance reject on a copy of the settings)."""
    n = 0
    while True:
        request = ops.validate_request("add", "memory", fact(n), None, None, None)
        try:
            host.runtime.mutate(request)
        except RuntimeCapacityError:
            return n
        n += 1


def test_explicit_routes_put_each_entry_where_they_say(repo_dir: Path) -> None:
    host = make_host(repo_dir)
    a = host.spaces.create_space("Build", "compiler", active=True).record.id
    b = host.spaces.create_space("Design", "colors", active=True).record.id
    n = fill_to_overflow(host)
    routes = [{"sourceIndexes": list(range(1, n + 1, 2)), "spaceId": b},
              {"sourceIndexes": list(range(2, n + 1, 2)), "spaceId": a}]
    receipt = add(host, fact(n), routes=routes)
    for item in receipt.detail["maintenance"]["archived"]:
        expected = b if item["sourceIndex"] % 2 else a
        assert item["destination"]["spaceId"] == expected
        assert item["summary"] in space_contents(host.root, expected)


ROUTE_ERRORS = {
    "not-a-list": ({"sourceIndexes": [1]}, "routes", "must be a non-empty list"),
    "empty": ([], "routes", "must be a non-empty list"),
    "string-index": ([{"sourceIndexes": ["1"], "spaceId": "A"}], "routes[0].sourceIndexes[0]", "must be an integer >= 1"),
    "float-index": ([{"sourceIndexes": [1.0], "spaceId": "A"}], "routes[0].sourceIndexes[0]", "must be an integer >= 1"),
    "bool-index": ([{"sourceIndexes": [True], "spaceId": "A"}], "routes[0].sourceIndexes[0]", "must be an integer >= 1"),
    "zero-index": ([{"sourceIndexes": [0], "spaceId": "A"}], "routes[0].sourceIndexes[0]", "must be an integer >= 1"),
    "no-space": ([{"sourceIndexes": [1]}], "routes[0].spaceId", "must be a space id"),
    "extra-key": ([{"sourceIndexes": [1], "spaceId": "A", "why": 1}], "routes[0].why", "is not a route field"),
    "unknown-space": ("ALL:ghost", "routes[0].spaceId", "is not an eligible Memory Space"),
    "inactive-space": ("ALL:C", "routes[0].spaceId", "is not an eligible Memory Space"),
    "repeat": ("REPEAT", "routes[1].sourceIndexes[0]", "entry 1 is already routed by routes[0]"),
    "skip": ("SKIP", "routes", "must cover every entry 1..N exactly once (missing 2)"),
    "too-big": ("BIG", "routes[0].sourceIndexes[N]", "must be an entry number in 1..N"),
}


@pytest.mark.parametrize("case", list(ROUTE_ERRORS))
def test_bad_routes_name_the_field_and_the_rule_and_change_nothing(repo_dir: Path, case: str) -> None:
    host = make_host(repo_dir)
    a = host.spaces.create_space("Build", "compiler", active=True).record.id
    b = host.spaces.create_space("Design", "colors", active=True).record.id
    c = host.spaces.create_space("Old", "inactive", active=False).record.id
    ids = {"A": a, "B": b, "C": c}
    n = fill_to_overflow(host)
    raw, field, rule = ROUTE_ERRORS[case]
    every = list(range(1, n + 1))
    if isinstance(raw, str) and raw.startswith("ALL:"):
        raw = [{"sourceIndexes": every, "spaceId": ids.get(raw[4:], raw[4:])}]
    elif raw == "REPEAT":
        raw = [{"sourceIndexes": every, "spaceId": a}, {"sourceIndexes": [1], "spaceId": b}]
    elif raw == "SKIP":
        raw = [{"sourceIndexes": [1] + every[2:], "spaceId": a}]
    elif raw == "BIG":
        raw = [{"sourceIndexes": every + [n + 1], "spaceId": a}]
    else:
        raw = json.loads(json.dumps(raw).replace('"A"', json.dumps(a)))
    field, rule = field.replace("[N]", f"[{n}]"), rule.replace("1..N", f"1..{n}")
    before = disk_state(host.root)
    with pytest.raises(InvalidInput) as error:
        add(host, fact(n), routes=raw)
    assert error.value.field == field
    assert rule in error.value.rule
    assert disk_state(host.root) == before


def test_routes_without_an_eligible_space_say_so(repo_dir: Path) -> None:
    host = make_host(repo_dir)
    n = fill_to_overflow(host)
    before = disk_state(host.root)
    with pytest.raises(InvalidInput) as error:
        add(host, fact(n), routes=[{"sourceIndexes": list(range(1, n + 1)), "spaceId": "default"}])
    assert error.value.field == "routes[0].spaceId"
    assert "no space is eligible; leave routes out to use the local archive" in error.value.rule
    assert disk_state(host.root) == before


# ------------------------------------------------------------------------------------------ evidence, lineage


def test_a_skipped_duplicate_is_evidence_when_the_space_holds_the_exact_content(repo_dir: Path) -> None:
    host = make_host(repo_dir)
    space = host.spaces.create_space("Project", "Build facts", active=True).record.id
    n = fill_to_overflow(host)
    host.spaces.remember(fact(n - 1), space_id=space)  # the entry packing will archive is already there
    receipt = add(host, fact(n))
    archived = {a["summary"]: a for a in receipt.detail["maintenance"]["archived"]}
    assert archived[fact(n - 1)]["evidence"] == "duplicate"
    assert list(space_contents(host.root, space)).count(fact(n - 1)) == 1


def test_doctor_reports_a_destination_item_that_was_forgotten(repo_dir: Path) -> None:
    host = make_host(repo_dir)
    space = host.spaces.create_space("Project", "Build facts", active=True).record.id
    n = fill_to_overflow(host)
    add(host, fact(n))
    record = read_lineage(host.root).records[0]
    assert verify_lineage(host.root, host.spaces)[-1].level == "ok"
    host.spaces.forget(space, record.space_item[1])
    problems = [f for f in verify_lineage(host.root, host.spaces) if f.level == "problem"]
    assert len(problems) == 1 and "the item is gone" in problems[0].message
    assert record.destination.reference in problems[0].message


def test_lineage_reader_skips_a_torn_last_line_and_appends_after_it(tmp_path: Path) -> None:
    record = lineage_mod.LineageRecord(
        "mnemon-archive", "run", "2026-12-01T00:00:00.000Z",
        lineage_mod.LineageEnd("runtime", "runtime:abc:memory:1", lineage_mod.entry_digest("x", "low", ["a/b"])),
        lineage_mod.LineageEnd("memory-spaces", lineage_mod.space_reference("my space", "id/1"),
                               lineage_mod.sha256_hex("x")), "x", 1)
    lineage_mod.append_lineage(tmp_path, [record])
    path = lineage_mod.lineage_path(tmp_path)
    with path.open("ab") as handle:
        handle.write(b'{"kind": "mnemon-arch')
    log = read_lineage(tmp_path)
    assert log.records == [record] and log.damaged == [2]
    lineage_mod.append_lineage(tmp_path, [record])
    log = read_lineage(tmp_path)
    assert log.records == [record, record] and log.damaged == [2]
    assert record.destination.reference == "memory-space:my%20space/item:id%2F1"
    assert record.space_item == ("my space", "id/1")
    # digest of compact JSON {content, importance, branches}, as JavaScript's JSON.stringify writes it
    import hashlib
    assert record.source.digest == hashlib.sha256(b'{"content":"x","importance":"low","branches":["a/b"]}').hexdigest()
    assert lineage_mod.count_archived(tmp_path) == (2, 0)


def test_typescript_root_with_entries_archived_still_opens_byte_compatibly(repo_dir: Path) -> None:
    """A root the TypeScript plugin wrote (tests/fixtures/ts/basic) overflows here: the result parses with
    the plugin's rules (2-space JSON, key order, trailing newline, projections joined by \\n§\\n)."""
    fixture = Path(__file__).resolve().parents[1] / "fixtures" / "ts" / "basic"
    host = make_host(repo_dir, memoryLimitBytes=700)
    runtime_dir = host.root / "runtime"
    runtime_dir.mkdir(parents=True)
    for name in ("memories.json", "USER.md", "MEMORY.md"):
        (runtime_dir / name).write_bytes((fixture / name).read_bytes())
    original = json.loads((fixture / "memories.json").read_text())
    n = 0
    while not read_lineage(host.root).records:
        add(host, fact(n))
        n += 1
    data = (runtime_dir / "memories.json").read_bytes()
    doc = json.loads(data)
    expected = json.dumps(doc, ensure_ascii=False, indent=2) + "\n"
    assert data.decode("utf-8") == expected
    for entry in doc["entries"]:
        assert list(entry)[:5] == ["content", "created_at", "updated_at", "target", "importance"]
        assert set(entry) <= {"content", "created_at", "updated_at", "target", "importance", "branches"}
    user = [e for e in original["entries"] if e["target"] == "user"]
    assert [e for e in doc["entries"] if e["target"] == "user"] == user  # untouched, same order and bytes
    memory = [e for e in doc["entries"] if e["target"] == "memory"]
    assert (runtime_dir / "MEMORY.md").read_bytes() == ("\n§\n".join(e["content"] for e in memory) + "\n").encode()
    # what left: original entries keep their timestamps and branches in the archive
    archived = [json.loads(line) for line in (runtime_dir / "archived" / "memories.jsonl").read_text().splitlines()]
    originals = {e["content"]: e for e in original["entries"]}
    for line in archived:
        if line["content"] in originals:
            assert {k: line[k] for k in originals[line["content"]]} == originals[line["content"]]
    kept_originals = [e for e in memory if e["content"] in originals]
    assert all(e == originals[e["content"]] for e in kept_originals)
    assert projection_bytes(host.runtime.memory_store.read().entries, "memory") == \
        (runtime_dir / "MEMORY.md").read_bytes()


def test_wake_counts_nothing_without_lineage(repo_dir: Path) -> None:
    host = make_host(repo_dir)
    add(host, fact(1))
    snapshot, _ = host.wake()
    assert snapshot.archived == 0 and "Archived:" not in snapshot.text


def test_archived_branch_scoped_facts_follow_the_checked_out_branch(repo_dir: Path) -> None:
    import pygit2

    repo = pygit2.Repository(str(repo_dir))
    create_branch(repo, "feature/cache")
    host = make_host(repo_dir)
    host.spaces.create_space("Project", "Build facts", active=True)
    for n in range(30):
        add(host, fact(n), "low" if n % 2 else "normal", ["feature/cache"] if n % 2 else None)
    scoped = [r.summary for r in read_lineage(host.root).records if int(r.summary[5:8]) % 2]
    assert scoped
    on_main = [r["content"] for r in host.recall(scoped[0], mode="keyword", limit=50).results]
    switch(repo, "feature/cache")
    on_feature = [r["content"] for r in host.recall(scoped[0], mode="keyword", limit=50).results]
    assert scoped[0] not in on_main and scoped[0] in on_feature


@pytest.mark.parametrize("target, routes, field, rule", [
    ("memory", [{"sourceIndexes": [1, 1], "spaceId": "nope"}], "routes[0].sourceIndexes[1]", "already routed"),
    ("user", [{"sourceIndexes": [1], "spaceId": "default"}], "routes", "apply to MEMORY.md overflow only"),
])
def test_routes_are_checked_even_when_nothing_overflows(repo_dir: Path, target: str, routes, field: str,
                                                        rule: str) -> None:
    """An attack pass: routes that could never be valid were accepted whenever the add fitted."""
    from mnemon_ls.errors import InvalidInput

    host = make_host(repo_dir)
    before = host.runtime.read().revision
    with pytest.raises(InvalidInput) as info:
        host.mutate_runtime(ops.validate_request("add", target, "fits easily", None, None, None), routes)
    assert info.value.field == field and rule in info.value.rule
    assert host.runtime.read().revision == before
