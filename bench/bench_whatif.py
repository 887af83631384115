"""What-if micro-benchmarks: the cheaper alternatives suggested in bench/results/runtime.md, timed against
the current code on the same full store, each checked to give the *same result* first.

Run: ``python bench/bench_whatif.py [--quick]``

Nothing here changes ``mnemon_ls``; the alternatives are local sketches (not drop-in patches):

- a parse cache keyed by the exact ``memories.json`` bytes (read + compare instead of parse + revision);
- a hand-built ``memories.json`` encoder giving byte-identical output to ``serialize_store`` (whose
  ``indent=2`` forces CPython's pure-Python JSON encoder), falling back when an entry has ``extra`` keys;
- a fast path for ``normalize_text`` (already-normal text is returned without the regex substitution);
- fsync variants for the 3-file commit: sequential (current), concurrent (3 threads), and without
  fsyncing the last-good copy (a durability trade-off, shown only to size it).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from json.encoder import encode_basestring as _enc  # the ensure_ascii=False string encoder (C)
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import bench_runtime as B  # noqa: E402
from mnemon_ls.host import WorkspaceHost  # noqa: E402
from mnemon_ls.runtime.model import (  # noqa: E402
    normalize_text,
    parse_store,
    projection_bytes,
    revision_of,
    serialize_store,
)
from mnemon_ls.settings import load_settings  # noqa: E402


def fast_serialize(entries) -> bytes | None:
    """``serialize_store`` bytes built with the C string encoder; ``None`` when an entry has extra keys."""
    parts = []
    for e in entries:
        if e.extra:
            return None
        fields = [f'      "content": {_enc(e.content)}', f'      "created_at": {_enc(e.created_at)}',
                  f'      "updated_at": {_enc(e.updated_at)}', f'      "target": {_enc(e.target)}',
                  f'      "importance": {_enc(e.importance)}']
        if e.target == "memory" and e.branches:
            fields.append('      "branches": [\n' + ",\n".join("        " + _enc(b) for b in e.branches) + "\n      ]")
        parts.append("    {\n" + ",\n".join(fields) + "\n    }")
    entries_json = "[\n" + ",\n".join(parts) + "\n  ]" if parts else "[]"
    return ('{\n  "version": 1,\n  "entries": ' + entries_json + "\n}\n").encode("utf-8")


def fast_normalize(text: str) -> str:
    """``normalize_text`` with a fast path: every JS whitespace character but U+0020 is non-printable
    for ``str.isprintable`` (categories Zs/Zl/Zp/Cc/Cf), so printable text without double, leading or
    trailing spaces is already normal."""
    if text.isprintable() and "  " not in text and text[:1] != " " and text[-1:] != " ":
        return text
    return normalize_text(text)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    n = 100 if args.quick else 500

    def row(name: str, fn, count: int = n) -> float:
        s = sorted(B.sample(fn, count, 30))
        med = statistics.median(s) / 1000
        print(f"{name:<62} median {med:8.1f} us  p95 {B.pct(s, 0.95) / 1000:8.1f} us")
        return med

    with tempfile.TemporaryDirectory(prefix="bench-whatif-") as tmp_name:
        tmp = Path(tmp_name)
        workspace, root = B.build_workspace(tmp)
        host = WorkspaceHost(workspace, load_settings({"storageScope": "custom", "dataDir": str(root),
                                                       "runtimeUserScope": "storage"}))
        B.fill_store(host)
        store = host.runtime.memory_store
        data = store.memories_path.read_bytes()
        entries = parse_store(data)
        print(f"store: memories.json {len(data)} bytes, {len(entries)} entries\n")

        # 1. parse cache
        cache = (data, (tuple(entries), revision_of(entries)))
        print("== read path (every wake does it twice, every mutation once)")
        row("current: parse_store + revision_of", lambda: (parse_store(data), revision_of(entries)))
        row("cache hit: read bytes + compare to the cached bytes",
            lambda: cache[1] if store.memories_path.read_bytes() == cache[0] else None)

        # 2. normalize fast path
        contents = [e.content for e in entries]
        edge = ["a\u00a0b", "a\u3000b", "a\ufeffb", " a", "a ", "a  b", "a\tb", "a\nb", "a\u2028b", "a\u205fb",
                "a\u1680b", "a\u2005b", "a\u200bb", "\u00e9t\u00e9", "x"]
        assert all(fast_normalize(t) == normalize_text(t) for t in contents + edge)
        print("\n== normalize_text over all stored contents (part of parse_store)")
        row("current: normalize_text (regex sub)", lambda: [normalize_text(t) for t in contents])
        row("fast path: isprintable + no double/edge spaces", lambda: [fast_normalize(t) for t in contents])

        # 3. serializer
        assert fast_serialize(entries) == serialize_store(entries) == data
        assert fast_serialize([]) == serialize_store([])
        print("\n== memories.json encoding (once per commit)")
        row("current: serialize_store (json.dumps indent=2, pure Python)", lambda: serialize_store(entries))
        row("hand-built with C string encoder (byte-identical)", lambda: fast_serialize(entries))

        # 4. fsync variants
        d = tmp / "fs"
        d.mkdir()
        payloads = [(d / "MEMORY.md", projection_bytes(entries, "memory")), (d / ".last-good.json", data),
                    (d / "memories.json", data)]

        def commit(sync_mask=(True, True, True), concurrent=False, pool=ThreadPoolExecutor(3)) -> None:
            opened = []
            for path, body in payloads:
                tmp_path = path.with_name(f".{path.name}.tmp")
                fd = os.open(tmp_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
                os.write(fd, body)
                opened.append((tmp_path, fd, path))
            fds = [fd for (_, fd, _), sync in zip(opened, sync_mask) if sync]
            if concurrent:
                list(pool.map(os.fsync, fds))
            else:
                for fd in fds:
                    os.fsync(fd)
            for tmp_path, fd, path in opened:
                os.close(fd)
                os.replace(tmp_path, path)
            dfd = os.open(d, os.O_RDONLY)
            try:
                os.fsync(dfd)
            finally:
                os.close(dfd)

        m = n if args.quick else 300
        print("\n== durable 3-file commit (write temp, fsync, rename, dir fsync)")
        row("current: 3 sequential fsyncs + dir fsync", commit, m)
        row("3 concurrent fsyncs (threads) + dir fsync", lambda: commit(concurrent=True), m)
        row("trade-off: last-good copy not fsynced (2 fsyncs + dir)", lambda: commit((True, False, True)), m)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
