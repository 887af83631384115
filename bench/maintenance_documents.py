"""Benchmark of Documents cold archival: a create that cold-archives one 100 KiB document.

Run::

    python bench/maintenance_documents.py               # 40 samples per arm, prints a markdown table
    python bench/maintenance_documents.py --samples 10  # quicker
    python bench/maintenance_documents.py --space-items 10000 --dir /work/tmp

Two roots, interleaved sample by sample (``time.perf_counter_ns``, median and nearest-rank p95 in ms;
real locks, real fsyncs, real disk, embedded ``mnemon.db``):

- **cold**: ``activeLimitBytes`` holds two 100 KiB documents; every sample is
  :func:`mnemon_ls.maintenance.documents.create_document` of a third 100 KiB document, which
  cold-archives the least recently accessed one (reference lookup by recall, one ``remember``, the
  verifying recall, the archive move, the create). The steady state is always two active documents.
- **plain**: the same create on a root whose limit is 1 GiB (it fits; no archival), as the floor.

Both roots get an active native space pre-filled with ``--space-items`` items (default 1,000) so that
the recall cost is that of a used space. The aim (issue 9) is a cold-archiving create under 100 ms.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))

from mnemon_ls.host import WorkspaceHost  # noqa: E402
from mnemon_ls.maintenance import documents as cold  # noqa: E402
from mnemon_ls.settings import Settings  # noqa: E402

BODY_BYTES = 100 * 1024
WORDS = ("parser", "release", "token", "branch", "index", "cache", "budget", "lineage", "space", "recall",
         "archive", "commit", "fence", "revision", "summary", "document", "overflow", "verify", "scope", "wake")


def body(rng: random.Random) -> str:
    """About 100 KiB of English-like text in paragraphs (a first paragraph makes the summary)."""
    out, size = [], 0
    while size < BODY_BYTES:
        sentence = " ".join(rng.choice(WORDS) for _ in range(12)).capitalize() + ". "
        out.append(sentence + ("\n\n" if rng.random() < 0.1 else ""))
        size += len(sentence)
    return "".join(out)[:BODY_BYTES]


def make_host(base: Path, name: str, limit: int, items: int, rng: random.Random) -> WorkspaceHost:
    workspace = base / f"{name}-ws"
    workspace.mkdir()
    settings = Settings(storageScope="custom", dataDir=str(base / f"{name}-root"), documents={"activeLimitBytes": limit})
    host = WorkspaceHost(workspace, settings, env={})
    space = host.spaces.create_space("Project", "cold references and notes", active=True).record.id
    for i in range(items):
        host.spaces.remember(f"note {i}: " + " ".join(rng.choice(WORDS) for _ in range(10)), space_id=space)
    return host


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[max(0, min(len(ordered) - 1, round(p * len(ordered) + 0.5) - 1))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=40)
    parser.add_argument("--space-items", type=int, default=1000)
    parser.add_argument("--dir", help="create the temporary roots under DIR")
    args = parser.parse_args()
    rng = random.Random(9)
    with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
        base = Path(tmp)
        probe = make_host(base, "probe", 1 << 30, 0, rng)
        size = probe.documents.capacity.plan(title="Document 0000", content=body(rng)).projected
        probe.close()
        limit = 2 * size + size // 2  # two fit, a third does not
        hosts = {"cold": make_host(base, "cold", limit, args.space_items, rng),
                 "plain": make_host(base, "plain", 1 << 30, args.space_items, rng)}
        for name, host in hosts.items():  # warm-up: fill to the steady state
            for i in range(3):
                cold.create_document(host, f"Warm-up {i}", body(rng))
        times: dict[str, list[float]] = {"cold": [], "plain": []}
        archived = 0
        for sample in range(args.samples):
            for name in ("cold", "plain") if sample % 2 == 0 else ("plain", "cold"):
                text = body(rng)
                started = time.perf_counter_ns()
                made = cold.create_document(hosts[name], f"Document {sample:04d}", text)
                times[name].append((time.perf_counter_ns() - started) / 1e6)
                if name == "cold":
                    assert made.maintenance is not None and len(made.maintenance.archived) == 1
                    archived += 1
                else:
                    assert made.maintenance is None
        for host in hosts.values():
            host.close()
    load = os.getloadavg()[0]
    cold_median, plain_median = statistics.median(times["cold"]), statistics.median(times["plain"])
    print(f"# Documents cold archival ({args.samples} samples per arm, {args.space_items} space items, "
          f"load {load:.2f}, {archived} documents cold-archived)\n")
    print("| operation | median ms | p95 ms |")
    print("|---|---|---|")
    print(f"| create + cold-archive one 100 KiB document | {cold_median:.1f} | {percentile(times['cold'], 0.95):.1f} |")
    print(f"| plain create of a 100 KiB document (fits) | {plain_median:.1f} | {percentile(times['plain'], 0.95):.1f} |")
    print(f"\nratio cold / plain (medians): {cold_median / plain_median:.2f}x; aim: cold under 100 ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
