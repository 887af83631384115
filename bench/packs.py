"""Benchmark of Mnemon Packs: export and import of a root with 10 MiB of documents and a 10,000-item space.

Run::

    python bench/packs.py              # 5 runs each, writes bench/results/packs.md
    python bench/packs.py --runs 3     # fewer runs, prints only with --no-write
    python bench/packs.py --dir /work/tmp   # put the roots on another filesystem

The root (deterministic, seed 13): 40 active documents of ~256 KiB body each (10 MiB of rendered
documents in total; ``documents.activeLimitBytes`` raised to 64 MiB because frontmatter counts), 60
Runtime entries, one native Memory Space of 10,000 items imported through the provider's
``import_items`` (the path ``space merge`` uses). Every store write is real (lock, fsync, SQLite).

Measured (``time.perf_counter``, median of the runs, and the slowest run):

1. ``export``: :func:`mnemon_ls.packs.export_pack` of the full root (WAL checkpoint, read, validate,
   deflate, validate again);
2. ``import (fresh)``: :func:`mnemon_ls.packs.import_pack` merge into an empty root (validate, stage,
   open each store, redaction pass, journal, swap);
3. ``import (merge, all skipped)``: the same pack again into that root (everything already there);
4. ``import (replace)``: the pack replacing the populated root's components (this includes the backup of
   what it replaces: an export of the root into ``state/pack-backups``, :mod:`mnemon_ls.packs.backups`);
   ``import (replace, dry run)``: the same with ``dry_run`` (validate and stage outside the root, no
   backup, no swap);
5. ``import (fresh, secrets allow)``: as 2 with ``secrets: allow`` (no credential scan): the difference
   is the cost of :func:`mnemon_ls.redact.find_secrets` over the imported texts (this corpus has the
   word "token" and CJK text, the scanner's slow paths).

Floors measured in the same run on the same files, to give ratios: ``zip floor`` = writing the same
payload files into a ZIP with ``zipfile`` (deflate level 6) from memory; ``unzip+copy floor`` = reading
that ZIP and writing its files into a new directory with fsync of each file.
"""

from __future__ import annotations

import argparse
import io
import os
import platform
import random
import shutil
import statistics
import sys
import tempfile
import time
import zipfile
from datetime import datetime, timezone
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from mnemon_ls import packs  # noqa: E402
from mnemon_ls.host import WorkspaceHost  # noqa: E402
from mnemon_ls.runtime import ops  # noqa: E402
from mnemon_ls.settings import load_settings  # noqa: E402
from mnemon_ls.spaces.providers.base import ExportItem  # noqa: E402

WORDS = ("rollback threshold staging deploy canary metric latency budget index sqlite fts5 bigram token "
         "gen-itgc v1.2.3 snake_case 数据库 迁移 灰度 阶段 顺序 自动 回滚 阈值 发布 手册").split()


def host_on(root: Path, secrets: str = "redact") -> WorkspaceHost:
    return WorkspaceHost(None, load_settings({"storageScope": "custom", "dataDir": str(root), "runtimeUserScope": "storage",
                                              "secrets": secrets,
                                              "documents": {"activeLimitBytes": 64 * 1024 * 1024,
                                                            "maxBodyBytes": 4 * 1024 * 1024}}))


def text(rng: random.Random, size: int) -> str:
    out, length = [], 0
    while length < size:
        word = rng.choice(WORDS)
        out.append(word)
        length += len(word.encode()) + 1
    return " ".join(out)


def build(root: Path) -> None:
    rng = random.Random(13)
    host = host_on(root)
    try:
        for i in range(60):
            host.runtime.mutate(ops.validate_request("add", "memory", f"fact {i}: {text(rng, 80)}"))
        for i in range(40):
            host.documents.create(f"Document {i}", text(rng, 256 * 1024 - 600))
        view = host.spaces.create_space("Bench", "10,000 items", active=True)
        now = "2026-09-01T08:00:00Z"
        items = [ExportItem(f"src-{i}", f"item {i}: {text(rng, 120)}", "fact", 3, ["bench"], [], "user", now)
                 for i in range(10_000)]
        host.spaces.provider(view.record).import_items(items, [])
    finally:
        host.close()


def timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def zip_floor(payload: dict[str, bytes]) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED, compresslevel=6) as archive:
        for name in sorted(payload):
            archive.writestr(name, payload[name])
    return out.getvalue()


def unzip_floor(data: bytes, target: Path) -> None:
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        for info in archive.infolist():
            path = target / info.filename
            path.parent.mkdir(parents=True, exist_ok=True)
            with open(path, "wb") as handle:
                handle.write(archive.read(info))
                handle.flush()
                os.fsync(handle.fileno())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--dir", help="where the roots go (default: a temporary directory)")
    parser.add_argument("--no-write", action="store_true", help="print only")
    args = parser.parse_args()
    base = Path(tempfile.mkdtemp(prefix="mnemon-bench-packs-", dir=args.dir))
    try:
        source = base / "source"
        started = time.perf_counter()
        build(source)
        built = time.perf_counter() - started
        host = host_on(source)
        exported = packs.export_pack(host)
        host.close()
        data = exported.data
        payload = dict(exported.pack.archive.payload)
        results: dict[str, list[float]] = {k: [] for k in (
            "export", "zip floor", "import (fresh)", "unzip+copy floor", "import (merge, all skipped)", "import (replace)",
            "import (replace, dry run)", "import (fresh, secrets allow)")}
        for run in range(args.runs):
            host = host_on(source)
            results["export"].append(timed(lambda: packs.export_pack(host)))
            host.close()
            results["zip floor"].append(timed(lambda: zip_floor(payload)))
            fresh = base / f"fresh-{run}"
            host = host_on(fresh)
            results["import (fresh)"].append(timed(lambda: host.import_pack(data)))
            results["import (merge, all skipped)"].append(timed(lambda: host.import_pack(data)))
            results["import (replace)"].append(timed(lambda: host.import_pack(data, mode="replace")))
            results["import (replace, dry run)"].append(timed(lambda: host.import_pack(data, mode="replace",
                                                                                       dry_run=True)))
            host.close()
            allow = host_on(base / f"allow-{run}", secrets="allow")
            results["import (fresh, secrets allow)"].append(timed(lambda: allow.import_pack(data)))
            allow.close()
            shutil.rmtree(base / f"allow-{run}")
            results["unzip+copy floor"].append(timed(lambda: unzip_floor(data, base / f"floor-{run}")))
            shutil.rmtree(fresh)
            shutil.rmtree(base / f"floor-{run}")
        docs = sum(len(v) for k, v in payload.items() if k.startswith("payload/documents/"))
        db = sum(len(v) for k, v in payload.items() if k.endswith("mnemon.db"))
        med = {k: statistics.median(v) for k, v in results.items()}
        lines = [
            "# Mnemon Packs benchmark (bench/packs.py)",
            "",
            f"Run {datetime.now(timezone.utc).strftime('%Y-%m-%d %H:%M UTC')} on {platform.platform()}, Python "
            f"{platform.python_version()}, {os.cpu_count()} CPUs; {args.runs} runs; root built in {built:.1f} s.",
            f"Pack: {len(data) / 1048576:.1f} MiB ZIP; payload {len(payload)} files, documents {docs / 1048576:.1f} MiB, "
            f"mnemon.db {db / 1048576:.1f} MiB (10,000 items), 60 Runtime entries.",
            "",
            "| operation | median s | slowest s |",
            "|---|---|---|",
            *(f"| {k} | {med[k]:.3f} | {max(v):.3f} |" for k, v in results.items()),
            "",
            f"Ratios (medians): export / zip floor = {med['export'] / med['zip floor']:.2f}; "
            f"import (fresh) / unzip+copy floor = {med['import (fresh)'] / med['unzip+copy floor']:.2f}; "
            f"import (replace) / unzip+copy floor = {med['import (replace)'] / med['unzip+copy floor']:.2f}; "
            f"import (replace) / export = {med['import (replace)'] / med['export']:.2f} (the backup is one export); "
            f"dry run / import (replace) = {med['import (replace, dry run)'] / med['import (replace)']:.2f}.",
        ]
        report = "\n".join(lines) + "\n"
        print(report)
        if not args.no_write:
            out = Path(__file__).resolve().parent / "results" / "packs.md"
            out.write_text(report, encoding="utf-8")
            print(f"written to {out}")
    finally:
        shutil.rmtree(base, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
