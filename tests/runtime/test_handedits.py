"""Hand edits of USER.md / MEMORY.md are imported (issue 8 item 3), crash leftovers never (issue 15 defect 11),
and a line-ending or BOM change is no edit (defect 13).

A person edits a projection some time after the last commit. The filesystem's clock ticks coarsely (a
write right after a commit can carry the same mtime), so :func:`hand_edit` writes the edit and then dates
the last commit of ``memories.json`` one second earlier: that is the situation of a real edit, and what
the "not newer than the last commit" rule looks at. Crash leftovers are made by real SIGKILLs of a writer
process at each commit step (``tests/helpers/writer.py --pause-at``), or, for power-loss states that a
SIGKILL cannot produce (a projection whose data never reached the disk), by writing exactly those bytes.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from mnemon_ls.runtime import handedit
from mnemon_ls.runtime.model import parse_store
from mnemon_ls.runtime.ops import validate_request
from mnemon_ls.runtime.store import RuntimeStore
from mnemon_ls.settings import RuntimeMemorySettings

from tests.conftest import FrozenClock
from tests.helpers import procs
from tests.helpers.zygote import mnemon_command

NOW = "2026-09-15T08:00:00.000Z"
LATER = "2026-09-16T09:30:00.000Z"
SEP = "\n\u00a7\n"


def make_store(root: Path, clock, **kw) -> RuntimeStore:
    return RuntimeStore(root, RuntimeMemorySettings(**kw), clock=clock)


def seed(store: RuntimeStore) -> None:
    """alpha (critical), beta (branch main), gamma (low) in MEMORY.md; 'Name: Ada' in USER.md."""
    store.mutate(validate_request("add", "memory", "alpha", importance="critical"))
    store.mutate(validate_request("add", "memory", "beta", branches=["main"]))
    store.mutate(validate_request("add", "memory", "gamma", importance="low"))
    store.mutate(validate_request("add", "user", "Name: Ada"))


def age_commit(store: RuntimeStore, seconds: float = 1.0) -> None:
    """Date the last commit of memories.json ``seconds`` before the newest projection's mtime."""
    newest = max(store.projection_path(t).stat().st_mtime_ns for t in ("user", "memory")
                 if store.projection_path(t).exists())
    then = newest - int(seconds * 1e9)
    os.utime(store.memories_path, ns=(then, then))


def hand_edit(store: RuntimeStore, name: str, data: bytes | str) -> bytes:
    """A person's edit: the bytes written, made after the last commit (see the module doc)."""
    raw = data.encode("utf-8") if isinstance(data, str) else data
    (store.runtime_dir / name).write_bytes(raw)
    age_commit(store)
    return raw


def entries(store: RuntimeStore) -> list[tuple]:
    return [(e.target, e.content, e.importance, e.branches, e.created_at, e.updated_at)
            for e in parse_store(store.memories_path.read_bytes())]


def edits(store: RuntimeStore) -> list[bytes]:
    return [p.read_bytes() for p in sorted(store.edits_dir.iterdir())] if store.edits_dir.exists() else []


@pytest.fixture
def store(root: Path, clock: FrozenClock) -> RuntimeStore:
    s = make_store(root, clock)
    seed(s)
    clock.set(LATER)
    return s


# ================================================================= imports


def test_added_items_become_entries_with_importance_normal_and_no_branches(store):
    edit = hand_edit(store, "MEMORY.md", "alpha\n§\nbeta\n§\ngamma\n§\ndelta, typed by hand\n§\nepsilon\n")
    report = store.projections.repair()
    result = report.hand_edits["MEMORY.md"]
    assert (result["status"], result["added"], result["removed"], result["replaced"]) == (
        "imported", ["delta, typed by hand", "epsilon"], [], [])
    assert result["message"] == "2 entries added from your edit of MEMORY.md"
    assert entries(store) == [
        ("memory", "alpha", "critical", (), NOW, NOW), ("memory", "beta", "normal", ("main",), NOW, NOW),
        ("memory", "gamma", "low", (), NOW, NOW), ("user", "Name: Ada", "normal", (), NOW, NOW),
        ("memory", "delta, typed by hand", "normal", (), LATER, LATER), ("memory", "epsilon", "normal", (), LATER, LATER)]
    assert edits(store) == [edit]  # copied before anything happened
    assert Path(report.preserved["MEMORY.md"]).read_bytes() == edit
    assert store.projection_path("memory").read_bytes() == (
        "alpha" + SEP + "beta" + SEP + "gamma" + SEP + "delta, typed by hand" + SEP + "epsilon\n").encode()
    assert store.memories_path.read_bytes() == store.last_good_path.read_bytes()
    assert store.projections.repair().to_dict() == {"repaired": [], "preserved": {}, "skipped": None}


def test_removed_and_changed_items_keep_the_metadata_of_the_rest(store):
    hand_edit(store, "MEMORY.md", "alpha\n§\nbeta, now with more detail\n")
    result = store.projections.repair().hand_edits["MEMORY.md"]
    assert (result["added"], result["removed"], result["replaced"]) == (
        [], ["gamma"], [{"from": "beta", "to": "beta, now with more detail"}])
    assert result["message"] == "1 entry replaced and 1 removed from your edit of MEMORY.md"
    assert entries(store) == [
        ("memory", "alpha", "critical", (), NOW, NOW),
        ("memory", "beta, now with more detail", "normal", ("main",), NOW, LATER),
        ("user", "Name: Ada", "normal", (), NOW, NOW)]


def test_mixed_edit_of_both_files_is_one_commit(store):
    before = store.read().revision
    hand_edit(store, "MEMORY.md", "alpha, reworded\n§\ngamma\n§\ndelta new\n")
    hand_edit(store, "USER.md", "Name: Ada Lovelace\n§\nPrefers tabs\n")
    history_before = json.loads(store.history_path.read_bytes())
    report = store.projections.repair()
    assert sorted(report.hand_edits) == ["MEMORY.md", "USER.md"]
    memory, user = report.hand_edits["MEMORY.md"], report.hand_edits["USER.md"]
    # gamma is unchanged; before it, entries alpha and beta face one item, which pairs with the more
    # similar entry (alpha); after it, 'delta new' faces no entry: an add.
    assert (memory["added"], memory["removed"], memory["replaced"]) == (
        ["delta new"], ["beta"], [{"from": "alpha", "to": "alpha, reworded"}])
    assert memory["message"] == "1 entry added, 1 replaced and 1 removed from your edit of MEMORY.md"
    assert (user["added"], user["replaced"]) == (["Prefers tabs"], [{"from": "Name: Ada", "to": "Name: Ada Lovelace"}])
    assert entries(store) == [
        ("memory", "alpha, reworded", "critical", (), NOW, LATER), ("memory", "gamma", "low", (), NOW, NOW),
        ("memory", "delta new", "normal", (), LATER, LATER), ("user", "Name: Ada Lovelace", "normal", (), NOW, LATER),
        ("user", "Prefers tabs", "normal", (), LATER, LATER)]  # each target in its file's order, in its slots
    # One commit: the history gained exactly one state per target (the old one was already its head).
    history = json.loads(store.history_path.read_bytes())
    for target in ("user", "memory"):
        assert history[target][1:] == history_before[target][:7]
        assert history[target][0] == handedit.digest(store.projection_path(target).read_bytes())
    assert store.read().revision != before


def test_moved_items_keep_their_entries_and_take_the_files_order(store):
    hand_edit(store, "MEMORY.md", "gamma\n§\nalpha\n§\nbeta\n")
    result = store.projections.repair().hand_edits["MEMORY.md"]
    assert (result["added"], result["removed"], result["replaced"], result["message"]) == (
        [], [], [], "entries reordered from your edit of MEMORY.md")
    assert [(c, i, b, u) for _, c, i, b, _, u in entries(store)] == [
        ("gamma", "low", (), NOW), ("alpha", "critical", (), NOW), ("beta", "normal", ("main",), NOW),
        ("Name: Ada", "normal", (), NOW)]


def test_spacing_only_and_multi_line_items_are_normalised_like_any_entry(store):
    hand_edit(store, "MEMORY.md", "  alpha  \n\n §  \nbeta\n§\ngamma\nwith a second line\n\n§\n\n§\n")
    result = store.projections.repair().hand_edits["MEMORY.md"]
    assert result["replaced"] == [{"from": "gamma", "to": "gamma with a second line"}]
    assert [e[1] for e in entries(store)] == ["alpha", "beta", "gamma with a second line", "Name: Ada"]


def test_unequal_groups_pair_the_most_similar_items(store):
    # gamma removed and beta reworded: beta's rewrite pairs with beta by similarity, not by position.
    hand_edit(store, "MEMORY.md", "alpha\n§\nbeta is reworded\n")
    result = store.projections.repair().hand_edits["MEMORY.md"]
    assert (result["replaced"], result["removed"]) == ([{"from": "beta", "to": "beta is reworded"}], ["gamma"])
    hand_edit(store, "MEMORY.md", "alpha\n§\nbeta is reworded\n§\nnew one\n§\ngamma comes back, longer\n")
    result = store.projections.repair().hand_edits["MEMORY.md"]
    assert (result["added"], result["replaced"]) == (["new one", "gamma comes back, longer"], [])


def test_restore_mode_saves_the_edit_and_rebuilds_the_file(root, clock):
    store = RuntimeStore(root, clock=clock, hand_edits="restore")
    seed(store)
    before = store.memories_path.read_bytes()
    edit = hand_edit(store, "MEMORY.md", "alpha\n§\nmine\n")
    report = store.projections.repair()
    assert (report.repaired, report.hand_edits, edits(store)) == (["MEMORY.md"], {}, [edit])
    assert store.memories_path.read_bytes() == before
    assert store.projection_path("memory").read_bytes() == ("alpha" + SEP + "beta" + SEP + "gamma\n").encode()


# ================================================================= rejected edits: saved, reported, nothing applied


_IMPORTANCE_RULE = ("importance cannot be set by a hand edit (the annotation would be stored as text); use "
                    "`mnemon-ls runtime replace --old-text TEXT --importance critical|normal|low`")

REJECTED = {
    "delimiter-inside-item": ("MEMORY.md", "alpha\n§\nbeta § gamma\n", {}, 2, "content",
                              "must not contain '\u00a7' (U+00A7), the reserved entry delimiter"),
    "item-of-8-KiB-plus-1": ("MEMORY.md", "alpha\n§\n" + "x" * 8193 + "\n", {}, 2, "content",
                             "is 8193 UTF-8 bytes; an entry is at most 8192 bytes"),
    "control-character": ("MEMORY.md", "alpha\n§\nbell \x07 here\n", {}, 2, "content",
                          "must not contain control characters (found U+0007); they would be written raw into "
                          "USER.md / MEMORY.md and the wake snapshot"),
    "user-branch-suffix": ("USER.md", "Name: Ada [branches=main]\n", {}, 1, "branches",
                           "USER.md entries are never branch-scoped (branches apply to target=memory only)"),
    "memory-branch-annotation": ("MEMORY.md", "alpha\n§\n[importance=normal; branches=dev]\nbeta\n", {}, 2,
                                 "branches", "branch scope cannot be set by a hand edit; use "
                                             "`mnemon-ls runtime replace --branch`"),
    # found by a new user: "[importance=critical]" over an entry, as the wake prints it, was stored as its words
    "memory-importance-annotation": ("MEMORY.md", "[importance=critical]\nalpha\n§\nbeta\n", {}, 1, "importance",
                                     _IMPORTANCE_RULE),
    "user-wake-annotation": ("USER.md", "[importance=normal; created=0d; updated=0d]\nName: Ada\n", {}, 1,
                             "importance", _IMPORTANCE_RULE),
    "repeated-item": ("MEMORY.md", "alpha\n§\nbeta\n§\nalpha\n", {}, 3, "content",
                      "repeats item 1 of MEMORY.md; an entry appears once"),
    "over-capacity": ("MEMORY.md", "alpha\n§\nbeta\n§\ngamma\n§\n" + "y" * 40 + "\n", {"memoryLimitBytes": 60}, None,
                      "capacity", "memory is over capacity: 66 of 60 UTF-8 bytes after this change (now 22); remove "
                                  "or shorten entries, or raise runtimeMemory.memoryLimitBytes"),
}


@pytest.mark.parametrize("case", list(REJECTED))
def test_an_edit_breaking_a_rule_is_saved_reported_and_not_applied(root, clock, case):
    name, text, limits, item, field, rule = REJECTED[case]
    store = make_store(root, clock, **limits)
    seed(store)
    truth = store.memories_path.read_bytes()
    projection = store.runtime_dir.joinpath(name).read_bytes()
    edit = hand_edit(store, name, text)
    report = store.projections.repair()
    result = report.hand_edits[name]
    assert result["status"] == "rejected"
    assert [(p["item"], p["field"], p["rule"]) for p in result["problems"]] == [(item, field, rule)]
    where = f"{name} item {item}" if item else name
    assert f"your edit of {name} was not applied: {where}" in result["message"]
    assert f"{field}: {rule}" in result["message"] and result["savedAs"] in result["message"]
    assert store.memories_path.read_bytes() == truth  # nothing applied
    assert store.runtime_dir.joinpath(name).read_bytes() == projection  # repaired
    assert edits(store) == [edit] and Path(result["savedAs"]).read_bytes() == edit
    assert report.repaired == [name]


def test_every_broken_item_is_named(store):
    hand_edit(store, "MEMORY.md", "a § b\n§\nfine\n§\n" + "z" * 9000 + "\n")
    result = store.projections.repair().hand_edits["MEMORY.md"]
    assert [(p["item"], p["field"]) for p in result["problems"]] == [(1, "content"), (3, "content")]


def test_a_valid_file_is_imported_beside_a_rejected_one(store):
    hand_edit(store, "MEMORY.md", "alpha\n§\nbeta\n§\ngamma\n§\nkept addition\n")
    hand_edit(store, "USER.md", "Name: Ada §\n")
    report = store.projections.repair()
    assert (report.hand_edits["MEMORY.md"]["status"], report.hand_edits["USER.md"]["status"]) == ("imported", "rejected")
    assert [e[1] for e in entries(store)] == ["alpha", "beta", "gamma", "Name: Ada", "kept addition"]
    assert store.projection_path("user").read_bytes() == b"Name: Ada\n"
    assert len(edits(store)) == 2


def test_an_edit_that_is_not_utf8_is_rejected(store):
    truth = store.memories_path.read_bytes()
    hand_edit(store, "MEMORY.md", "alpha\n§\ncaf\u00e9\n".encode("latin-1", errors="replace").replace(b"?", b"\xa7"))
    result = store.projections.repair().hand_edits["MEMORY.md"]
    assert (result["status"], result["problems"][0]["field"]) == ("rejected", "encoding")
    assert store.memories_path.read_bytes() == truth


# ================================================================= line endings and BOM (defect 13)


@pytest.mark.parametrize("variant", ["crlf", "cr", "bom", "bom+crlf", "no-final-newline"])
def test_line_endings_or_a_bom_alone_are_not_an_edit(store, variant):
    canonical = store.projection_path("memory").read_bytes()
    data = {"crlf": canonical.replace(b"\n", b"\r\n"), "cr": canonical.replace(b"\n", b"\r"),
            "bom": b"\xef\xbb\xbf" + canonical, "bom+crlf": b"\xef\xbb\xbf" + canonical.replace(b"\n", b"\r\n"),
            "no-final-newline": canonical.rstrip(b"\n")}[variant]
    truth = store.memories_path.read_bytes()
    hand_edit(store, "MEMORY.md", data)
    report = store.projections.repair()
    assert report.hand_edits["MEMORY.md"]["status"] == "format"
    assert (report.repaired, report.preserved) == (["MEMORY.md"], {})
    assert store.memories_path.read_bytes() == truth
    assert store.projection_path("memory").read_bytes() == canonical
    assert not store.edits_dir.exists()


def test_a_crlf_edit_is_imported_by_its_content(store):
    hand_edit(store, "MEMORY.md", b"\xef\xbb\xbfalpha\r\n\xc2\xa7\r\nbeta\r\n\xc2\xa7\r\ngamma\r\n\xc2\xa7\r\nnew\r\n")
    result = store.projections.repair().hand_edits["MEMORY.md"]
    assert (result["added"], result["removed"], result["replaced"]) == (["new"], [], [])


# ================================================================= crash leftovers (defect 11)


def test_empty_projection_is_rebuilt_not_imported(store):
    truth = store.memories_path.read_bytes()
    hand_edit(store, "MEMORY.md", b"")
    report = store.projections.repair()
    assert (report.repaired, report.preserved, report.hand_edits) == (["MEMORY.md"], {}, {})
    assert store.memories_path.read_bytes() == truth


def test_zero_filled_projection_after_a_power_loss_is_a_leftover(store):
    truth = store.memories_path.read_bytes()
    size = store.projection_path("memory").stat().st_size
    hand_edit(store, "MEMORY.md", b"alpha\n\xc2\xa7\n" + b"\x00" * size)
    result = store.projections.repair().hand_edits["MEMORY.md"]
    assert (result["status"], result["reason"]) == (
        "leftover", "holds NUL bytes (a write cut short by a crash or a power loss)")
    assert store.memories_path.read_bytes() == truth


def test_projection_of_an_earlier_committed_state_is_a_leftover_even_when_newer(store):
    truth = store.memories_path.read_bytes()
    earlier = ("alpha" + SEP + "beta\n").encode()  # MEMORY.md before gamma was added
    hand_edit(store, "MEMORY.md", earlier)
    result = store.projections.repair().hand_edits["MEMORY.md"]
    assert (result["status"], result["reason"]) == ("leftover", "equals the projection of an earlier committed state")
    assert "not imported" in result["message"] and "from your edit" not in result["message"]
    assert store.memories_path.read_bytes() == truth
    assert edits(store) == [earlier]  # kept anyway: nothing is silently dropped


def test_projection_not_newer_than_the_last_commit_is_a_leftover(store):
    truth = store.memories_path.read_bytes()
    memory = store.projection_path("memory")
    memory.write_bytes(b"alpha\n\xc2\xa7\nsomething never committed\n")
    then = store.memories_path.stat().st_mtime_ns - 1_000_000
    os.utime(memory, ns=(then, then))
    result = store.projections.repair().hand_edits["MEMORY.md"]
    assert result["status"] == "leftover" and "not newer than the last commit" in result["reason"]
    assert store.memories_path.read_bytes() == truth


def test_projection_of_an_uncommitted_temp_file_is_a_leftover(store):
    """What a power loss between the renames leaves when the rename of MEMORY.md reached the disk (the
    commit's memories.json temp holds the state MEMORY.md shows)."""
    from mnemon_ls.runtime.model import serialize_store

    state = store.read()
    pending = (*state.entries, state.entries[0].__class__("pending", LATER, LATER, "memory"))
    temp = store.runtime_dir / f".memories.json.{2 ** 22 + 7}.1764576000000.0badf00d.tmp"
    temp.write_bytes(serialize_store(pending))
    hand_edit(store, "MEMORY.md", ("alpha" + SEP + "beta" + SEP + "gamma" + SEP + "pending\n").encode())
    result = store.projections.repair().hand_edits["MEMORY.md"]
    assert (result["status"], result["reason"]) == (
        "leftover", "equals the projection of an interrupted commit (its temp file is still there)")
    assert "pending" not in store.memories_path.read_text()
    assert not temp.exists()  # swept


def kill_at(root: Path, breakpoint: str) -> None:
    with procs.writer("add", str(root), "x", "1", "--no-wait", "--pause-at", breakpoint) as writer:
        assert writer.reader.readline() == f"PAUSED {breakpoint.replace(':', ' ')}"
        assert writer.kill() == -9


#: Every step of a commit (writer.py breakpoints, see tests/runtime/test_crash.py) and whether MEMORY.md
#: is left ahead of memories.json there.
COMMIT_STEPS = {"os.fsync:1": False, "_rename_watching:1": False, "os.replace:1": True, "os.replace:2": True,
                "_fsync_dir:1": False}


@pytest.mark.parametrize("breakpoint", list(COMMIT_STEPS))
def test_sigkill_at_each_commit_step_is_never_imported_and_temps_are_cleaned(root, clock, breakpoint):
    store = make_store(root, clock)
    store.mutate(validate_request("add", "memory", "seed"))
    age_commit(store, 2.0)  # the writer's projection is then newer than the commit, as in real life
    kill_at(root, breakpoint)
    truth = store.memories_path.read_bytes()
    left = store.projection_path("memory").read_bytes()
    assert (left != ("seed\n").encode() and b"x-0" not in truth) == COMMIT_STEPS[breakpoint]
    # Even a MEMORY.md that looks newer than memories.json is not taken for an edit.
    if COMMIT_STEPS[breakpoint]:
        age_commit(store)

    report = RuntimeStore(root, lock_timeout=2.0).projections.repair()
    statuses = {name: r["status"] for name, r in report.hand_edits.items()}
    assert statuses == ({"MEMORY.md": "leftover"} if COMMIT_STEPS[breakpoint] else {})
    assert store.memories_path.read_bytes() == truth
    assert store.projection_path("memory").read_bytes() == handedit_projection(truth)
    assert not [n for n in os.listdir(store.runtime_dir) if n.endswith(".tmp")]  # cleaned at start


def handedit_projection(truth: bytes) -> bytes:
    from mnemon_ls.runtime.model import projection_bytes

    return projection_bytes(parse_store(truth), "memory")


def test_cli_start_after_a_kill_between_the_renames_reports_no_hand_edit(root, clock):
    store = make_store(root, clock)
    store.mutate(validate_request("add", "memory", "seed"))
    kill_at(root, "os.replace:1")  # MEMORY.md renamed, memories.json not
    age_commit(store)
    result = run_cli(root, "wake", "--data-dir", str(root))
    assert result.returncode == 0
    assert "from your edit" not in result.stderr and "was edited" not in result.stderr
    assert "interrupted commit" in result.stderr
    assert "x-0" not in result.stdout and "seed" in result.stdout


def run_cli(root: Path, *args: str) -> subprocess.CompletedProcess:
    """``python -m mnemon_ls ARGS`` with HOME and the data dir inside the test's directory."""
    home = root.parent / "home"
    home.mkdir(exist_ok=True)
    result = subprocess.run([*mnemon_command(), *args], cwd=root.parent, capture_output=True,
                            text=True, encoding="utf-8", timeout=procs.WAIT_SECONDS,
                            env=procs.child_env(HOME=str(home), MNEMON_DATA_DIR=str(root.parent / "data")))
    assert "Traceback" not in result.stderr
    return result


# ================================================================= races with another process


def test_edit_racing_a_mutation_from_another_process_loses_and_is_preserved(root, clock):
    """The other writer commits while the edit is on disk and not yet imported: its commit wins the fence,
    saves the edit under edits/ and reports it in its receipt; the import then finds nothing to apply."""
    store = make_store(root, clock)
    store.mutate(validate_request("add", "memory", "seed"))
    edit = hand_edit(store, "MEMORY.md", "seed\n§\nmy edit\n")
    writer = procs.spawn_writer("add", str(root), "w", "1", "--no-wait")
    reader = procs.LineReader(writer)
    try:
        procs.ready_pid(reader.readline(), writer)
        assert reader.readline() == "ACK 1 True Entry added."
        assert reader.readline() == "DONE"
    finally:
        procs.finish(writer)
    report = store.projections.repair()
    assert report.hand_edits == {} and report.repaired == []
    assert [e[1] for e in entries(store)] == ["seed", "w-0"]
    assert edits(store) == [edit]


def test_imported_edit_and_a_later_mutation_from_another_process_both_survive(root, clock):
    store = make_store(root, clock)
    store.mutate(validate_request("add", "memory", "seed"))
    hand_edit(store, "MEMORY.md", "seed\n§\nmy edit\n")
    assert store.projections.repair().hand_edits["MEMORY.md"]["status"] == "imported"
    writer = procs.spawn_writer("add", str(root), "w", "1", "--no-wait")
    reader = procs.LineReader(writer)
    try:
        procs.ready_pid(reader.readline(), writer)
        assert reader.readline() == "ACK 1 True Entry added."
    finally:
        procs.finish(writer)
    assert [e[1] for e in entries(store)] == ["seed", "my edit", "w-0"]


# ================================================================= the pure pieces


def test_split_items_numbers_every_item_between_separators():
    assert handedit.split_items("a\n§\n\n§\nb\nc\n §\t\n") == [(1, "a"), (3, "b\nc")]
    assert handedit.split_items("") == []
    assert handedit.split_items("x §\ny") == [(1, "x §\ny")]


def test_classify_order():
    expected = b"a\n\xc2\xa7\nb\n"
    assert handedit.classify(None, expected, known={}, newer=True)[0] == "missing"
    assert handedit.classify(b" \n", expected, known={}, newer=True)[0] == "empty"
    assert handedit.classify(b"a\r\n\xc2\xa7\r\nb\r\n", expected, known={}, newer=False)[0] == "format"
    assert handedit.classify(b"a\n", expected, known={handedit.digest(b"a\n"): "x"}, newer=True) == (
        "leftover", "equals the projection of x")
    assert handedit.classify(b"a\nc\n", expected, known={}, newer=False)[0] == "leftover"
    assert handedit.classify(b"a\nc\n", expected, known={}, newer=True)[0] == "edit"


# ================================================================= the CLI path


def test_cli_imports_an_edit_before_a_command_and_says_so_on_stderr(root, clock):
    store = make_store(root, clock)
    seed(store)
    hand_edit(store, "MEMORY.md", "alpha\n§\nbeta\n§\ngamma\n§\nadded by hand\n§\nand another\n")
    result = run_cli(root, "runtime", "list", "--data-dir", str(root))
    assert result.returncode == 0
    [line] = result.stderr.splitlines()
    assert line.startswith("mnemon-ls: 2 entries added from your edit of MEMORY.md (")
    assert "added by hand" in result.stdout and "and another" in result.stdout
    assert [e[1] for e in entries(store)][-2:] == ["added by hand", "and another"]


def test_cli_reports_a_rejected_edit_and_still_runs_the_command(root, clock):
    store = make_store(root, clock)
    seed(store)
    edit = hand_edit(store, "USER.md", "Name: Ada [branch: main]\n")
    result = run_cli(root, "runtime", "add", "--content", "from the command", "--data-dir", str(root),
                     "--runtime-user-scope", "storage")  # this root's USER.md is the profile
    assert result.returncode == 0, result.stderr
    [line] = result.stderr.splitlines()
    assert line.startswith(f"mnemon-ls: {store.projection_path('user')}: your edit of USER.md was not applied: "
                           "USER.md item 1 ('Name: Ada [branch: main]'): branches: USER.md entries are never "
                           "branch-scoped (branches apply to target=memory only).")
    assert edits(store) == [edit]
    assert store.projection_path("user").read_bytes() == b"Name: Ada\n"
    assert [e[1] for e in entries(store)] == ["alpha", "beta", "gamma", "Name: Ada", "from the command"]


def test_cli_restore_setting_keeps_the_old_behaviour(root, clock):
    store = make_store(root, clock)
    seed(store)
    truth = store.memories_path.read_bytes()
    hand_edit(store, "MEMORY.md", "alpha\n§\nmine\n")
    result = run_cli(root, "runtime", "list", "--data-dir", str(root), "--hand-edits", "restore")
    assert result.returncode == 0
    assert result.stderr.startswith(f"mnemon-ls: repaired {store.projection_path('memory')} (your edit is saved at ")
    assert store.memories_path.read_bytes() == truth


def test_an_entry_breaking_a_rule_is_untouched_by_a_hand_edit(root, clock):
    """An oversized entry written into memories.json by hand is in no projection: an edit of MEMORY.md
    neither removes it nor pairs it with an item; it stays byte for byte."""
    big = {"content": "b" * 9000, "created_at": NOW, "updated_at": NOW, "target": "memory", "importance": "normal"}
    small = {"content": "small", "created_at": NOW, "updated_at": NOW, "target": "memory", "importance": "low"}
    (root / "runtime").mkdir(parents=True)
    (root / "runtime" / "memories.json").write_text(json.dumps({"version": 1, "entries": [big, small]}, indent=2) + "\n")
    store = make_store(root, clock)
    store.projections.repair()
    assert store.projection_path("memory").read_bytes() == b"small\n"
    clock.set(LATER)
    hand_edit(store, "MEMORY.md", "small, edited\n§\nnew\n")
    result = store.projections.repair().hand_edits["MEMORY.md"]
    assert (result["added"], result["replaced"], result["removed"]) == (
        ["new"], [{"from": "small", "to": "small, edited"}], [])
    saved = json.loads(store.memories_path.read_text())["entries"]
    assert saved[0] == big and [e["content"] for e in saved[1:]] == ["small, edited", "new"]
    assert saved[1]["importance"] == "low"
