"""Cost of hand-edit support on the Runtime paths, each against its own floor in the same run (ratios).

Run: ``python bench/bench_handedits.py [--samples N] [--dir DIR]``

- ``repair, nothing differs`` (every wake, every watcher event): :meth:`ProjectionRepair.repair` vs its floor,
  the three reads of the projection comparison alone (``_projections_differ``); the difference is the
  directory listing that notices temp files a killed writer left.
- ``durable add``: :meth:`RuntimeStore.mutate` vs the same with the projection-history write turned
  into a no-op (patched inside this process only), interleaved: the price of ``.projections-history.json``;
  ``history write alone`` times that write by itself against the durable add (its share of a commit).
- ``import of a 1-item edit`` on a full MEMORY.md (~10 KiB, 60 entries): the whole repair (settle
  check, classification, pairing, one durable commit) vs a durable replace of one entry (the floor: the
  same commit without the hand-edit work).

Medians and nearest-rank p95 in milliseconds (``time.perf_counter_ns``), warm-up excluded. The machine is
shared: compare the ratios, not the absolute numbers.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from mnemon_ls.runtime import handedit  # noqa: E402
from mnemon_ls.runtime.ops import validate_request  # noqa: E402
from mnemon_ls.runtime.store import RuntimeStore  # noqa: E402
from mnemon_ls.settings import RuntimeMemorySettings  # noqa: E402


def timed(fn, samples: int, setup=None) -> list[float]:
    out = []
    for i in range(samples + 5):
        if setup:
            setup(i)
        start = time.perf_counter_ns()
        fn()
        elapsed = (time.perf_counter_ns() - start) / 1e6
        if i >= 5:
            out.append(elapsed)
    return out


def stats(values: list[float]) -> tuple[float, float]:
    ordered = sorted(values)
    return statistics.median(ordered), ordered[max(0, int(len(ordered) * 0.95 + 0.5) - 1)]


def row(name: str, ours: list[float], floor: list[float], floor_name: str) -> str:
    (m1, p1), (m2, p2) = stats(ours), stats(floor)
    return f"| {name} | {m1:.3f} / {p1:.3f} | {floor_name} {m2:.3f} / {p2:.3f} | {m1 / m2:.2f}x |"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=200)
    parser.add_argument("--dir", default=None)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
        store = RuntimeStore(Path(tmp) / "root", RuntimeMemorySettings(memoryLimitBytes=1_048_576))
        store.settle_seconds = 0.0
        for i in range(60):
            store.mutate(validate_request("add", "memory", f"entry {i:02d} " + "x" * 150))
        entries = store.read().entries
        lines = [f"load before: {os.getloadavg()[0]:.2f}", "",
                 "| path | ours median / p95 ms | floor median / p95 ms | ratio |", "|---|---|---|---|"]

        repair = timed(store.projections.repair, args.samples * 5)
        differ = timed(lambda: store.projections._projections_differ(store.read().entries), args.samples * 5)
        lines.append(row("repair, nothing differs", repair, differ, "projection reads"))

        # Interleaved, so both variants see the same disk and load.
        original = handedit.record_history
        with_history, without = [], []
        for i in range(args.samples + 5):
            for variant, sink in ((original, with_history), (lambda *a, **k: None, without)):
                handedit.record_history = variant
                request = validate_request("add", "memory", f"sample {i} {len(sink)} {id(sink)}")
                start = time.perf_counter_ns()
                store.mutate(request)
                if i >= 5:
                    sink.append((time.perf_counter_ns() - start) / 1e6)
        handedit.record_history = original
        lines.append(row("durable add", with_history, without, "without history"))
        history_path = Path(tmp) / "history-alone.json"
        few, more = entries[:30], entries[:31]
        alone = timed(lambda: original(history_path, few, more), args.samples * 5)
        lines.append(row("history write alone", alone, without, "durable add"))

        # Back to 60 entries; each sample edits one item by hand and imports it (or replaces it: the floor).
        store.maintenance.compact_target(store.read().revision, "memory",
                             [{"content": e.content} for e in entries], max_bytes=1_048_576)
        memory = store.projection_path("memory")
        state = {"n": 0}

        def hand_edit(_i: int) -> None:
            state["n"] += 1
            text = memory.read_text(encoding="utf-8").replace("entry 30", f"entry 30 edit {state['n']}", 1)
            memory.write_text(text, encoding="utf-8")
            then = memory.stat().st_mtime_ns - 1_000_000_000
            os.utime(store.memories_path, ns=(then, then))  # the commit came before the edit

        imports = timed(store.projections.repair, args.samples, setup=hand_edit)
        assert store.read().entries[30].content.startswith("entry 30 edit")
        replaces = []
        for i in range(args.samples + 5):
            old = store.read().entries[30].content
            request = validate_request("replace", "memory", f"entry 30 replaced {i}", old)
            start = time.perf_counter_ns()
            store.mutate(request)
            if i >= 5:
                replaces.append((time.perf_counter_ns() - start) / 1e6)
        lines.append(row("import of a 1-item edit", imports, replaces, "durable replace"))
        lines.append("")
        lines.append(f"load after: {os.getloadavg()[0]:.2f}; samples {args.samples} (x5 for the repair row)")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
