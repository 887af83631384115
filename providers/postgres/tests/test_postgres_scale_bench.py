"""bench/postgres_scale.py (issue 25 item 7) runs end to end at a small size: it loads a version 3 database by
COPY, the provider migrates it to 4 (the postings backfill), recall is timed on every store, and eight writers on
each store lose and duplicate nothing. Times are not asserted (bench/results/postgres_scale.md has them)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[3] / "bench" / "postgres_scale.py"


def test_the_scale_bench_runs_and_its_writers_lose_nothing(tmp_path: Path, pg_server) -> None:
    done = subprocess.run([sys.executable, str(BENCH), "--label", "smoke", "--sizes", "300,900", "--requests", "12",
                           "--out", str(tmp_path)], capture_output=True, text=True, timeout=600, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    run = json.loads((tmp_path / "postgres_scale.json").read_text())["smoke"]
    assert set(run["recall"]) == {"native-100k", "postgres-300", "postgres-900"}
    assert 0 < run["setup"]["postgres-300"]["postings"] < run["setup"]["postgres-900"]["postings"]
    for store in ("postgres", "native"):
        check = run["writers"][store]["check"]
        assert check == {"distinct_written": 730, "stored": 730, "lost": 0, "duplicated": 0, "added": 730, "ok": True}
    assert run["agreement"]["queries"] > 0 and 0.0 <= run["agreement"]["mean"] <= 1.0
    assert "| smoke |" in (tmp_path / "postgres_scale.md").read_text()
