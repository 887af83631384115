"""A writer process of test_postgres_shared.py: reads one JSON line ``{"service", "spaceKey", "writer",
"count", "shared"}`` on stdin, opens the provider, prints ``ready``, waits for a ``go`` line, then remembers
``count`` texts -- the first ``shared`` of them the same for every writer, the others its own -- and prints
one JSON line: ``[[text, id, action], ...]``."""

from __future__ import annotations

import json
import sys

from mnemon_ls_provider_postgres.engine import PostgresEngine


def main() -> None:
    job = json.loads(sys.stdin.readline())
    engine = PostgresEngine.open(job["service"])
    space = engine.space({"spaceKey": job["spaceKey"]}, space_id="postgres-shared")
    print("ready", flush=True)
    if sys.stdin.readline().strip() != "go":
        return
    out = []
    for i in range(job["count"]):
        text = f"shared decision {i}" if i < job["shared"] else f"writer {job['writer']} note {i}"
        receipt = space.remember(text, category="decision", importance=3, tags=[], entities=[], source="agent")
        out.append([text, receipt["id"], receipt["action"]])
    engine.close()
    print(json.dumps(out), flush=True)


if __name__ == "__main__":
    main()
