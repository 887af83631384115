"""Entries as loaded from disk follow the rules of new ones; over-budget stores and near duplicates are told.

- Issue 15 defect 8: an entry written into ``memories.json`` by hand (a second write path) that breaks a
  rule of a new entry (size, control characters, branch names) is a problem reported by ``doctor`` and
  the status, left out of the wake (with a notice) and of the projections, and kept in the file byte for
  byte through later mutations.
- Issue 15 defect 12: a store edited past its limit is a problem naming target, used bytes and limit.
- Issue 8 item 5: an add that differs from an entry only in case, whitespace or punctuation is added,
  and the receipt names the similar entry.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from mnemon_ls.roots import RootResolution
from mnemon_ls.runtime.model import parse_store
from mnemon_ls.runtime.ops import validate_request
from mnemon_ls.runtime.source import RuntimeSource
from mnemon_ls.runtime.store import RuntimeStore, diagnose
from mnemon_ls.settings import load_settings

from tests.helpers import procs
from tests.helpers.zygote import mnemon_command

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "ts"
AT = "2026-09-01T08:00:00.000Z"
NOW = "2026-09-15T08:00:00.000Z"
BIG = "x" * 51_200


def raw(content, target="memory", importance="normal", at=AT, **extra):
    return {"content": content, "created_at": at, "updated_at": at, "target": target, "importance": importance,
            **extra}


def pretty(entries: list[dict]) -> bytes:
    """The plugin's ``JSON.stringify(doc, null, 2) + "\\n"``."""
    return (json.dumps({"version": 1, "entries": entries}, ensure_ascii=False, indent=2) + "\n").encode("utf-8")


def source_for(root: Path, clock, **settings) -> RuntimeSource:
    return RuntimeSource(RootResolution(root, root, "custom", None), load_settings(settings), clock=clock)


def write_truth(root: Path, entries: list[dict]) -> Path:
    runtime = root / "runtime"
    runtime.mkdir(parents=True, exist_ok=True)
    (runtime / "memories.json").write_bytes(pretty(entries))
    return runtime


def findings(store: RuntimeStore) -> list[tuple[str, str, str]]:
    return [(f.level, f.subject, f.message) for f in diagnose(store)]


# ================================================================= defect 8: loaded entries are validated


HAND_WRITTEN = [
    # (stored entry, the rule it breaks as reported)
    (raw(BIG), "content: is 51200 UTF-8 bytes; an entry is at most 8192 bytes"),
    (raw("red \u001b[31malert\u001b[0m text"), "content: must not contain control characters (found U+001B)"),
    (raw("deploys from HEAD", branches=["HEAD"]), "branches[0]: must not be HEAD"),
    (raw("lock scoped", branches=["feature/a.lock"]), "branches[0]: must not have a component ending with '.lock'"),
    (raw("repeated scope", branches=["main", "main"]), "branches[1]: repeats the branch name 'main'"),
    (raw("too many scopes", branches=[f"b{i}" for i in range(17)]), "branches: has 17 names; at most 16"),
]


@pytest.mark.parametrize("bad,rule", HAND_WRITTEN, ids=[r.split(":")[0] + "-" + str(i) for i, (_, r) in enumerate(HAND_WRITTEN)])
def test_hand_written_entry_breaking_a_rule_is_reported_left_out_and_kept(root, clock, bad, rule):
    good = raw("Run tests with pytest -n 2")
    runtime = write_truth(root, [good, bad])
    source = source_for(root, clock)

    state = source.read()
    assert state.problems == ()  # the file itself is readable: writes stay allowed
    assert [e.content for e in state.memory] == ["Run tests with pytest -n 2"]
    assert len(state.entry_problems) == 1 and rule in state.entry_problems[0]
    assert f"{runtime / 'memories.json'} entries[1]" in state.entry_problems[0]
    assert state.entry_problems[0] in state.all_problems
    assert state.used["memory"] == len("Run tests with pytest -n 2")

    snapshot, _ = source.wake("main", "given")
    section = snapshot.text.split('<runtime-memory-file name="MEMORY.md">')[1].split("</runtime-memory-file>")[0]
    assert section == "\n[importance=normal; created=14d; updated=14d]\nRun tests with pytest -n 2\n"
    assert BIG not in snapshot.text and "\x1b" not in snapshot.text
    assert f"Notice: {state.entry_problems[0]}" in snapshot.text
    assert "Run tests with pytest -n 2" in snapshot.text
    assert (runtime / "MEMORY.md").read_bytes() == b"Run tests with pytest -n 2\n"

    doctor = findings(RuntimeStore(root))
    flagged = [f for f in doctor if f[1] == f"{runtime / 'memories.json'} entries[1]"]
    assert len(flagged) == 1 and flagged[0][0] == "problem" and rule in flagged[0][2]

    # A later mutation keeps the entry in memories.json exactly as it was written.
    receipt = source.mutate(validate_request("add", "memory", "Lint with ruff"))
    assert receipt.changed and receipt.used == len("Run tests with pytest -n 2") + 4 + len("Lint with ruff")
    assert (runtime / "memories.json").read_bytes() == pretty([good, bad, raw("Lint with ruff", at=NOW)])
    assert (runtime / "MEMORY.md").read_bytes() == b"Run tests with pytest -n 2\n\xc2\xa7\nLint with ruff\n"


def test_51kb_hand_written_entry_keeps_memory_md_within_its_budget(root, clock):
    runtime = write_truth(root, [raw("small fact"), raw(BIG)])
    snapshot, _ = source_for(root, clock).wake("main", "given")
    assert len((runtime / "MEMORY.md").read_bytes()) == len(b"small fact\n")
    assert snapshot.chars < 4000
    assert "UTF-8 bytes: 10/10240" in snapshot.text


def test_invalid_entry_can_be_fixed_by_replace_or_removed(root, clock):
    runtime = write_truth(root, [raw(BIG), raw("scoped to HEAD", branches=["HEAD"])])
    source = source_for(root, clock)

    fixed = source.mutate(validate_request("replace", "memory", "a short fact", old_text="x" * 100))
    assert fixed.changed and fixed.used == len("a short fact")
    rescoped = source.mutate(validate_request("replace", "memory", "scoped to main", old_text="scoped to HEAD",
                                              branches=["main"]))
    assert rescoped.changed
    state = source.read()
    assert state.entry_problems == ()
    assert [(e.content, e.branches) for e in state.memory] == [("a short fact", ()), ("scoped to main", ("main",))]

    write_truth(root, [raw("keep"), raw(BIG)])
    removed = source_for(root, clock).mutate(validate_request("remove", "memory", old_text="xxxxxxxx"))
    assert removed.changed
    assert [e["content"] for e in json.loads((runtime / "memories.json").read_bytes())["entries"]] == ["keep"]


def test_replace_that_keeps_invalid_stored_branches_is_refused(root, clock):
    from mnemon_ls.errors import InvalidInput

    runtime = write_truth(root, [raw("scoped to HEAD", branches=["HEAD"])])
    before = (runtime / "memories.json").read_bytes()
    with pytest.raises(InvalidInput) as caught:
        source_for(root, clock).mutate(validate_request("replace", "memory", "new text", old_text="scoped"))
    assert caught.value.field == "branches[0]"
    assert (runtime / "memories.json").read_bytes() == before


def test_compaction_never_evicts_or_archives_an_invalid_entry(root, clock):
    bad = raw(BIG)
    runtime = write_truth(root, [raw("one"), bad, raw("two")])
    store = RuntimeStore(root, clock=clock)
    store.maintenance.compact_target(store.read().revision, "memory", [{"content": "two"}])
    entries = json.loads((runtime / "memories.json").read_bytes())["entries"]
    assert bad in entries
    assert BIG not in (runtime / "archived" / "memories.jsonl").read_text()
    assert [json.loads(line)["content"] for line in (runtime / "archived" / "memories.jsonl").read_text().splitlines()] == ["one"]


@pytest.mark.parametrize("fixture", sorted(p.name for p in FIXTURES.iterdir()))
def test_typescript_plugin_stores_still_load_clean(tmp_path, clock, fixture):
    entries = parse_store((FIXTURES / fixture / "memories.json").read_bytes())
    assert entries and all(e.problem is None for e in entries)
    root = tmp_path / "root"
    (root / "runtime").mkdir(parents=True)
    for file in (FIXTURES / fixture).iterdir():
        (root / "runtime" / file.name).write_bytes(file.read_bytes())
    state = source_for(root, clock).read()
    assert (state.problems, state.entry_problems, state.capacity_problems) == ((), (), ())
    assert not [f for f in findings(RuntimeStore(root)) if f[0] == "problem"]


# ================================================================= defect 12: over-budget store


def test_store_edited_past_its_limit_is_a_problem_naming_target_used_and_limit(root, clock):
    entries = [raw(f"fact {i} " + "y" * 1000) for i in range(11)]
    write_truth(root, entries + [raw("who I am", "user")])
    used = sum(len(e["content"]) for e in entries) + 4 * 10
    assert used > 10240
    state = source_for(root, clock).read()
    assert state.capacity_problems == (
        f"memory (MEMORY.md) uses {used} of its 10240 UTF-8 bytes, {used - 10240} over the limit (memories.json was "
        "edited past it); a change that leaves it over the limit is refused: compact it (capacity maintenance) or "
        "raise runtimeMemory.memoryLimitBytes",)
    assert state.capacity_problems[0] in state.all_problems
    assert ("problem", "memory", f"MEMORY.md uses {used} of its 10240 UTF-8 bytes, {used - 10240} over the limit") \
        in findings(RuntimeStore(root))


def test_store_within_its_limit_has_no_capacity_problem(root, clock):
    write_truth(root, [raw("y" * 8000), raw("z" * 2236)])  # 10240 bytes exactly
    assert source_for(root, clock).read().capacity_problems == ()


# ================================================================= issue 8 item 5: near duplicates


@pytest.mark.parametrize("first,second", [
    ("Run `make check` before a push.", "run make check before a push"),
    ("Use pytest -n 2", "use pytest  -n2!"),
    ("Ärger vermeiden: Tests zuerst", "ärger vermeiden — tests zuerst"),
])
def test_near_duplicate_add_is_added_and_the_receipt_names_the_similar_entry(root, clock, first, second):
    store = RuntimeStore(root, clock=clock)
    store.mutate(validate_request("add", "memory", "an unrelated fact"))
    store.mutate(validate_request("add", "memory", first))
    receipt = store.mutate(validate_request("add", "memory", second))
    assert receipt.changed and receipt.entry_count == 3
    assert receipt.to_dict()["similar"] == [first]
    assert repr(first) in receipt.message and "differs only in case, whitespace or punctuation" in receipt.message
    assert [e.content for e in store.read().entries] == ["an unrelated fact", first, second.replace("  ", " ")]


@pytest.mark.parametrize("other", ["Use pytest -n 4", "Use pytest", "use pytest -n 2 always"])
def test_different_words_or_numbers_are_not_near_duplicates(root, clock, other):
    store = RuntimeStore(root, clock=clock)
    store.mutate(validate_request("add", "memory", "Use pytest -n 2"))
    receipt = store.mutate(validate_request("add", "memory", other))
    assert receipt.changed and "similar" not in receipt.to_dict()
    assert receipt.message == "Entry added."


def test_near_duplicate_in_the_other_target_is_not_named(root, clock):
    store = RuntimeStore(root, clock=clock)
    store.mutate(validate_request("add", "user", "Prefers short answers."))
    receipt = store.mutate(validate_request("add", "memory", "prefers short answers"))
    assert "similar" not in receipt.to_dict()


def test_cli_prints_the_similar_entry(tmp_path):
    data = tmp_path / "data"
    env = procs.child_env(HOME=str(tmp_path), MNEMON_DATA_DIR=str(data))
    base = mnemon_command("runtime", "add", "--scope", "custom", "--data-dir", str(data))
    first = subprocess.run([*base, "--content", "Deploy with make release."], capture_output=True, text=True, env=env)
    assert first.returncode == 0, first.stderr
    second = subprocess.run([*base, "--content", "deploy with make release"], capture_output=True, text=True, env=env)
    assert second.returncode == 0, second.stderr
    assert "differs only in case, whitespace or punctuation from 'Deploy with make release.'" in second.stdout
    stored = json.loads((data / "runtime" / "memories.json").read_bytes())["entries"]
    assert [e["content"] for e in stored] == ["Deploy with make release.", "deploy with make release"]


# ================================================================= defect 12: serve --log-file mode


def test_serve_log_file_is_created_0600(tmp_path):
    log = tmp_path / "server.log"
    env = procs.child_env(HOME=str(tmp_path), MNEMON_DATA_DIR=str(tmp_path / "data"))
    old = os.umask(0o022)
    try:
        proc = subprocess.run(mnemon_command("serve", "--log-file", str(log), "-v"),
                              input=b"", capture_output=True, env=env, timeout=procs.WAIT_SECONDS)
    finally:
        os.umask(old)
    assert proc.returncode == 0, proc.stderr
    assert log.exists()
    assert log.stat().st_mode & 0o777 == 0o600
