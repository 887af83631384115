"""SIGKILL of a Runtime writer at random points, including inside a commit (DESIGN.md invariants 2 and 3).

One storage root is reused across all runs, so the store grows. Each run starts a writer process
(``tests/helpers/writer.py add ... --no-wait``) that adds ``r<run>n-<i>`` entries one by one and prints
``ACK <n>`` (flushed) after each ``mutate`` returns. The test reads a random number of ACKs (seeded RNG),
then waits a random 0-4 ms (this picks the kill moment; it synchronises nothing) and sends SIGKILL. The
writer is almost always inside its next ``mutate`` then: taking the lock, writing and fsyncing the temp
files, renaming MEMORY.md, the last-good copy and memories.json (last, the commit marker).

After every kill:

- ``memories.json`` parses and holds exactly the earlier entries plus the first ``n`` or ``n + 1`` of this
  run (``n`` = ACKs printed: every acknowledged entry is there, at most the one in flight besides);
- MEMORY.md / the last-good copy are either current or exactly one entry ahead (renamed before the commit
  marker), never anything else;
- a lock marker left behind names the dead writer (or is the empty file of a writer killed between creating
  and filling it, which by the shared 30 s protocol only age breaks: the test then ages it by 31 s);
- ``RuntimeStore(root).projections.repair()`` makes USER.md / MEMORY.md equal the projections, and the next add
  succeeds within 2 s (the dead writer's lock is broken).

The counts of each crash state are printed, to show how often a kill landed mid-commit.
"""

from __future__ import annotations

import os
import random
import re
import time
from collections import Counter
from pathlib import Path

import pytest
from filelock._soft import parse_lock_holder

from mnemon_ls.runtime import ops
from mnemon_ls.runtime.model import parse_store, projection_bytes, serialize_store
from mnemon_ls.runtime.store import RuntimeStore
from mnemon_ls.settings import RuntimeMemorySettings



from tests.helpers import procs  # noqa: E402  (shared subprocess and file-tree helpers)

SEED = 20261130
RUNS = 50
MAX_ACKS = 8
MAX_DELAY_SECONDS = 0.004
LIMITS = RuntimeMemorySettings(memory_limit_bytes=1_048_576)
#: ``.<basename>.<pid>.<epochMs>.<8 hex>.tmp`` (the plugin's temp naming, reference 3.5)
TEMP_NAME = re.compile(r"\.(?:MEMORY\.md|USER\.md|memories\.json|\.memories\.last-good\.json)\.(\d+)\.\d+\.[0-9a-f]{8}\.tmp")


def add(content: str):
    return ops.validate_request("add", "memory", content)


def joined(contents: list[str]) -> bytes:
    """MEMORY.md bytes for ``contents`` (reference 3.3), written out independently of the model module."""
    return ("\n\u00a7\n".join(contents) + "\n").encode("utf-8") if contents else b""


def temp_files(runtime: Path) -> set[str]:
    return {name for name in os.listdir(runtime) if name.endswith(".tmp")}


def test_entry_names_of_every_run_differ_as_the_store_compares_them():
    """A run's writer may get far ahead of the ACKs the test reads (a loaded machine): run 2 wrote ``r2-10``, and run
    21's first entry ``r21-0`` then came back "differs only in case, whitespace or punctuation" instead of "Entry
    added.". The names used now stay distinct under the store's comparison for any count a run can reach."""
    names = [f"r{run}n-{i}" for run in range(RUNS) for i in range(1000)] + [f"r{run}n-probe" for run in range(RUNS)]
    assert len({ops.similarity_key(n) for n in names}) == len(names)
    assert ops.similarity_key("r21-0") == ops.similarity_key("r2-10")  # the names used before collided


def test_sigkill_at_random_points_never_loses_an_acknowledged_entry(tmp_path, capsys):
    rng = random.Random(SEED)
    root = tmp_path / "root"
    runtime = root / "runtime"
    lock = runtime / ".memories.lock"
    RuntimeStore(root, LIMITS).mutate(add("seed"))
    expected = ["seed"]
    stats: Counter[str] = Counter()
    started = time.monotonic()

    for run in range(RUNS):
        wanted = rng.randint(0, MAX_ACKS)
        delay = rng.uniform(0.0, MAX_DELAY_SECONDS)
        temps_before = temp_files(runtime)
        assert temps_before == set()
        name = f"r{run}n"  # "r21n-0" and "r2n-10" differ even with punctuation ignored ("r21-0" and "r2-10" did not)
        with procs.writer("add", str(root), name, "100000", "--no-wait") as writer:
            for n in range(1, wanted + 1):
                assert writer.reader.readline() == f"ACK {n} True Entry added."
            time.sleep(delay)  # chooses the kill moment at random; no ordering depends on it
            assert writer.kill() == -9
            late = writer.reader.rest()
        pid = writer.pid
        assert late == [f"ACK {n} True Entry added." for n in range(wanted + 1, wanted + 1 + len(late))]
        acked = wanted + len(late)
        in_flight = f"{name}-{acked}"
        ours = [f"{name}-{i}" for i in range(acked)]

        # -- the state the kill left, before anything repairs it
        entries = parse_store((runtime / "memories.json").read_bytes())
        contents = [e.content for e in entries]
        assert contents in (expected + ours, expected + ours + [in_flight])
        committed_unacked = contents == expected + ours + [in_flight]
        ahead = contents + [in_flight]
        memory_md = (runtime / "MEMORY.md").read_bytes()
        assert memory_md in (joined(contents), joined(ahead))
        projection_ahead = memory_md != joined(contents)
        last_good = [e.content for e in parse_store((runtime / ".memories.last-good.json").read_bytes())]
        assert last_good in (contents, ahead)
        last_good_ahead = last_good != contents
        assert (runtime / "USER.md").read_bytes() == b""
        new_temps = temp_files(runtime) - temps_before
        assert {name: bool(TEMP_NAME.fullmatch(name)) for name in new_temps} == dict.fromkeys(new_temps, True)
        assert {TEMP_NAME.fullmatch(name).group(1) for name in new_temps} <= {str(pid)}
        lock_state = "none"
        if lock.exists():
            marker = lock.read_text()
            if marker == "":
                lock_state = "empty"
                aged = time.time() - 31
                os.utime(lock, (aged, aged))  # the only way an ownerless marker goes: the 30 s rule
            else:
                holder = parse_lock_holder(marker)
                assert holder is not None and holder.pid == pid
                lock_state = "dead-owner"

        stats["runs"] += 1
        stats[f"lock left: {lock_state}"] += 1
        stats["temp files left"] += bool(new_temps)
        stats["MEMORY.md ahead of memories.json"] += projection_ahead
        stats["last-good ahead of memories.json"] += last_good_ahead
        stats["committed but not acknowledged"] += committed_unacked
        stats["mid-commit (temps left or a file renamed ahead of the commit marker)"] += bool(
            new_temps or projection_ahead or last_good_ahead
        )

        # -- repair, then the next writer gets in at once
        report = RuntimeStore(root, LIMITS, lock_timeout=2.0).projections.repair()
        assert report.skipped is None
        assert report.repaired == (["MEMORY.md"] if projection_ahead else [])
        # A projection ahead of the commit marker is a crash leftover, never imported as a hand edit.
        assert {n: r["status"] for n, r in report.hand_edits.items()} == (
            {"MEMORY.md": "leftover"} if projection_ahead else {})
        assert not temp_files(runtime)  # the dead writer's temp files are gone
        if projection_ahead:
            assert Path(report.preserved["MEMORY.md"]).read_bytes() == memory_md
        assert (runtime / "MEMORY.md").read_bytes() == projection_bytes(entries, "memory") == joined(contents)
        assert (runtime / "USER.md").read_bytes() == projection_bytes(entries, "user") == b""

        probe = f"{name}-probe"
        receipt = RuntimeStore(root, LIMITS, lock_timeout=2.0).mutate(add(probe))
        assert (receipt.changed, receipt.message, receipt.entry_count) == (True, "Entry added.", len(contents) + 1)
        expected = contents + [probe]
        data = (runtime / "memories.json").read_bytes()
        after = parse_store(data)
        assert [e.content for e in after] == expected
        assert data == serialize_store(after)
        assert (runtime / ".memories.last-good.json").read_bytes() == data
        assert (runtime / "MEMORY.md").read_bytes() == joined(expected)
        assert not lock.exists()

    elapsed = time.monotonic() - started
    with capsys.disabled():
        print(f"\n[crash] {RUNS} SIGKILL runs in {elapsed:.1f} s (seed {SEED}); final store {len(expected)} entries")
        for key in sorted(stats):
            print(f"[crash]   {key}: {stats[key]}")
    assert stats["runs"] == RUNS
    # The point of the test: some kills must land inside a commit (otherwise it proves little).
    assert stats["mid-commit (temps left or a file renamed ahead of the commit marker)"] >= 1


# ------------------------------------------------------------------ deterministic kill points inside a commit


def kill_at(root: Path, breakpoint: str) -> int:
    """Start a writer adding ``x-0``, stop it at ``breakpoint`` (``NAME:N``, see writer.py) and SIGKILL it
    there; returns its pid. It never gets to acknowledge the add."""
    with procs.writer("add", str(root), "x", "1", "--no-wait", "--pause-at", breakpoint) as writer:
        assert writer.reader.readline() == f"PAUSED {breakpoint.replace(':', ' ')}"
        assert writer.kill() == -9
        assert writer.reader.rest() == []
    return writer.pid


# breakpoint -> (memories.json, MEMORY.md, last-good copy) contents left by the kill, and the temp files left
# (by target basename). The commit writes MEMORY.md, last-good and memories.json temps (fsyncing only the
# memories.json one), then renames them in that order (memories.json last), then fsyncs the directory.
KILL_POINTS = {
    "os.fsync:1": (["seed"], ["seed"], ["seed"], ["MEMORY.md", ".memories.last-good.json", "memories.json"]),
    # MEMORY.md is swapped in by fsio._rename_watching (a save made since the commit read it is kept), then
    # the last-good copy and memories.json are renamed with os.replace
    "_rename_watching:1": (["seed"], ["seed"], ["seed"], ["MEMORY.md", ".memories.last-good.json", "memories.json"]),
    "os.replace:1": (["seed"], ["seed", "x-0"], ["seed"], [".memories.last-good.json", "memories.json"]),
    "os.replace:2": (["seed"], ["seed", "x-0"], ["seed", "x-0"], ["memories.json"]),
    "_fsync_dir:1": (["seed", "x-0"], ["seed", "x-0"], ["seed", "x-0"], []),
}


@pytest.mark.parametrize("breakpoint", list(KILL_POINTS))
def test_kill_at_each_commit_step_leaves_a_recoverable_store(tmp_path, breakpoint):
    root = tmp_path / "root"
    runtime = root / "runtime"
    lock = runtime / ".memories.lock"
    RuntimeStore(root, LIMITS).mutate(add("seed"))
    pid = kill_at(root, breakpoint)

    truth, memory_md, last_good, temps = KILL_POINTS[breakpoint]
    entries = parse_store((runtime / "memories.json").read_bytes())
    assert [e.content for e in entries] == truth
    assert (runtime / "MEMORY.md").read_bytes() == joined(memory_md)
    assert [e.content for e in parse_store((runtime / ".memories.last-good.json").read_bytes())] == last_good
    left = temp_files(runtime)
    assert sorted(TEMP_NAME.fullmatch(name).group(0).split(f".{pid}.")[0][1:] for name in left) == sorted(temps)
    holder = parse_lock_holder(lock.read_text())
    assert holder is not None and holder.pid == pid  # the dead writer's marker

    report = RuntimeStore(root, LIMITS, lock_timeout=1.0).projections.repair()
    ahead = memory_md != truth
    assert (report.repaired, report.skipped) == ((["MEMORY.md"] if ahead else []), None)
    assert (runtime / "MEMORY.md").read_bytes() == joined(truth)
    assert (runtime / "USER.md").read_bytes() == b""

    receipt = RuntimeStore(root, LIMITS, lock_timeout=1.0).mutate(add("next"))
    assert (receipt.changed, receipt.message) == (True, "Entry added.")
    data = (runtime / "memories.json").read_bytes()
    after = parse_store(data)
    assert [e.content for e in after] == truth + ["next"]
    assert data == serialize_store(after) == (runtime / ".memories.last-good.json").read_bytes()
    assert (runtime / "MEMORY.md").read_bytes() == joined(truth + ["next"])
    assert not lock.exists()


def test_next_mutation_after_a_killed_commit_removes_its_temp_files(tmp_path):
    """With no repair in between: the dead writer's marker makes the next lock contended, and a commit under a
    contended lock sweeps the temp files (an uncontended one lists no directory)."""
    root = tmp_path / "root"
    runtime = root / "runtime"
    RuntimeStore(root, LIMITS).mutate(add("seed"))
    kill_at(root, "_rename_watching:1")
    assert len(temp_files(runtime)) == 3
    receipt = RuntimeStore(root, LIMITS, lock_timeout=1.0).mutate(add("next"))
    assert (receipt.changed, receipt.message) == (True, "Entry added.")
    assert temp_files(runtime) == set()
    assert [e.content for e in parse_store((runtime / "memories.json").read_bytes())] == ["seed", "next"]
    assert not (runtime / ".memories.lock").exists()


def test_temp_files_without_a_marker_wait_for_the_next_repair(tmp_path):
    """A killed writer whose marker was then deleted by hand (what StoreBusy's message suggests) leaves temp files
    an uncontended commit does not look for; the next repair removes them, and neither imports them."""
    root = tmp_path / "root"
    runtime = root / "runtime"
    RuntimeStore(root, LIMITS).mutate(add("seed"))
    kill_at(root, "_rename_watching:1")
    (runtime / ".memories.lock").unlink()
    left = temp_files(runtime)
    assert len(left) == 3
    RuntimeStore(root, LIMITS, lock_timeout=1.0).mutate(add("next"))
    assert temp_files(runtime) == left
    report = RuntimeStore(root, LIMITS).projections.repair()
    assert (report.repaired, report.hand_edits) == ([], {})
    assert temp_files(runtime) == set()
    assert [e.content for e in parse_store((runtime / "memories.json").read_bytes())] == ["seed", "next"]


def test_writer_killed_while_publishing_its_lock_marker_does_not_block_the_next_writer(tmp_path):
    root = tmp_path / "root"
    RuntimeStore(root, LIMITS).mutate(add("seed"))
    kill_at(root, "_write_lock_info:1")  # marker created, record not yet written
    receipt = RuntimeStore(root, LIMITS, lock_timeout=2.0).mutate(add("next"))
    assert (receipt.changed, receipt.message, receipt.entry_count) == (True, "Entry added.", 2)
    assert [e.content for e in parse_store((root / "runtime" / "memories.json").read_bytes())] == ["seed", "next"]
    assert not (root / "runtime" / ".memories.lock").exists()
