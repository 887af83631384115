#!/usr/bin/env python3
"""A stand-in ``mnemon`` executable for the ``mnemon-cli`` provider tests (the real binary cannot be
installed here). It answers the JSON shapes documented in shared/reference/mnemon-cli.md section 10, keeping
its data in ``<data-dir>/data/<store>/fake-store.json`` (and an empty ``mnemon.db`` marker so the store is
discoverable). It is not the CLI: ranking is a plain "fraction of query words present" score.

Environment controls (all optional):

- ``FAKE_MNEMON_LOG``: append every argv (JSON list, one per line) to this file;
- ``FAKE_MNEMON_RESULTS``: a JSON file printed verbatim for ``recall`` and ``search``;
- ``FAKE_MNEMON_IMPORT``: a JSON file printed verbatim for ``import`` (after recording the draft in the log);
- ``FAKE_MNEMON_SLEEP``: seconds to sleep before answering;
- ``FAKE_MNEMON_FAIL``: exit 1 with this text on stderr;
- ``FAKE_MNEMON_BADJSON``: print this text instead of JSON;
- ``FAKE_MNEMON_REMEMBER``: a JSON file printed verbatim for ``remember`` (nothing is stored);
- ``FAKE_MNEMON_REMEMBER_LIMIT``: ``<counter file>:<N>``: the remembers after the first N fail (exit 1);
- ``FAKE_MNEMON_ON_REMEMBER``: ``<marker file>:<shell command>``: the first ``remember`` (the one that
  creates the marker) runs the command before it answers (another writer acting mid-batch).
"""

from __future__ import annotations

import json
import os
import re
import sys
import time
import uuid
from datetime import datetime, timezone
from pathlib import Path

VERSION = "0.2.9-fake"


def now() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def fail(message: str) -> None:
    sys.stderr.write(f"Usage: mnemon ...\nError: {message}\n")
    sys.exit(1)


def parse_globals(argv: list[str]) -> tuple[dict, list[str]]:
    opts = {"data_dir": os.environ.get("MNEMON_DATA_DIR", os.path.expanduser("~/.mnemon")),
            "store": os.environ.get("MNEMON_STORE", ""), "readonly": False}
    rest: list[str] = []
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg == "--data-dir":
            opts["data_dir"] = argv[i + 1]
            i += 2
        elif arg == "--store":
            opts["store"] = argv[i + 1]
            i += 2
        elif arg == "--readonly":
            opts["readonly"] = True
            i += 1
        else:
            rest = argv[i:]
            break
    return opts, rest


def flags(args: list[str]) -> tuple[dict, list[str]]:
    values: dict[str, str | bool] = {}
    positional: list[str] = []
    i = 0
    while i < len(args):
        arg = args[i]
        if arg == "--":
            positional.extend(args[i + 1:])
            break
        if arg.startswith("--"):
            name = arg[2:]
            if name in ("basic", "no-diff", "brief", "verbose", "dry-run"):
                values[name] = True
                i += 1
            else:
                values[name] = args[i + 1]
                i += 2
        else:
            positional.append(arg)
            i += 1
    return values, positional


class Store:
    def __init__(self, data_dir: str, store: str) -> None:
        self.dir = Path(data_dir) / "data" / store
        self.path = self.dir / "fake-store.json"
        self.data = json.loads(self.path.read_text()) if self.path.exists() else {"insights": [], "edges": []}

    def save(self) -> None:
        self.dir.mkdir(parents=True, exist_ok=True)
        (self.dir / "mnemon.db").touch()
        self.path.write_text(json.dumps(self.data, ensure_ascii=False))

    def active(self) -> list[dict]:
        return [i for i in self.data["insights"] if not i.get("deleted_at")]

    def find(self, ident: str) -> dict | None:
        return next((i for i in self.active() if i["id"] == ident), None)


def insight_json(item: dict) -> dict:
    keys = ("id", "content", "category", "importance", "tags", "entities", "source", "access_count",
            "created_at", "updated_at")
    return {k: item[k] for k in keys}


def score(query: str, content: str) -> float:
    words = [w for w in re.findall(r"\w+", query.lower())]
    if not words:
        return 0.0
    text = content.lower()
    return sum(1 for w in words if w in text) / len(words)


def main() -> None:
    log = os.environ.get("FAKE_MNEMON_LOG")
    if log:
        with open(log, "a", encoding="utf-8") as handle:
            handle.write(json.dumps(sys.argv[1:], ensure_ascii=False) + "\n")
    if os.environ.get("FAKE_MNEMON_SLEEP"):
        time.sleep(float(os.environ["FAKE_MNEMON_SLEEP"]))
    if os.environ.get("FAKE_MNEMON_FAIL"):
        fail(os.environ["FAKE_MNEMON_FAIL"])
    if os.environ.get("FAKE_MNEMON_BADJSON"):
        print(os.environ["FAKE_MNEMON_BADJSON"])
        return
    if sys.argv[1:] == ["--version"]:
        print(f"mnemon version {VERSION}")
        return
    opts, rest = parse_globals(sys.argv[1:])
    if not rest:
        fail("no command")
    command, args = rest[0], rest[1:]
    store_name = opts["store"] or "default"
    values, positional = flags(args)
    out = lambda obj: print(json.dumps(obj, indent=2, ensure_ascii=False))  # noqa: E731
    if command == "store":
        sub, name = positional[0], positional[1] if len(positional) > 1 else ""
        target = Path(opts["data_dir"]) / "data" / name
        if sub == "create":
            if target.exists():
                fail(f"store {name} already exists")
            Store(opts["data_dir"], name).save()
            print(f"Created store {name}")
        elif sub == "set":
            if not target.exists():
                fail(f"store {name} does not exist")
            (Path(opts["data_dir"]) / "active").write_text(name + "\n")
            print(f"Active store: {name}")
        elif sub == "remove":
            if name == store_name:
                fail(f"cannot remove the active store {name}")
            import shutil
            shutil.rmtree(target, ignore_errors=True)
            print(f"Removed store {name}")
        return
    store = Store(opts["data_dir"], store_name)
    writes = command in ("remember", "link", "forget", "import")
    if writes and opts["readonly"]:
        fail(f"{command} is unavailable with --readonly: database writes are disabled")
    if command == "remember" and os.environ.get("FAKE_MNEMON_ON_REMEMBER"):
        marker, _, shell = os.environ["FAKE_MNEMON_ON_REMEMBER"].partition(":")
        try:
            os.close(os.open(marker, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
        except FileExistsError:
            pass
        else:
            import subprocess
            subprocess.run(shell, shell=True, check=True, stdout=sys.stderr)  # keep our stdout JSON
    if command == "remember" and os.environ.get("FAKE_MNEMON_REMEMBER_LIMIT"):
        counter, _, limit = os.environ["FAKE_MNEMON_REMEMBER_LIMIT"].rpartition(":")
        done = int(Path(counter).read_text() or 0) if Path(counter).exists() else 0
        if done >= int(limit):
            fail("simulated provider failure")
        Path(counter).write_text(str(done + 1))
    if command == "remember" and os.environ.get("FAKE_MNEMON_REMEMBER"):
        print(Path(os.environ["FAKE_MNEMON_REMEMBER"]).read_text())
        return
    if command == "remember":
        content = " ".join(positional)
        if not content.strip():
            fail("content is required")
        item = {"id": str(uuid.uuid4()), "content": content, "category": values.get("cat", "general"),
                "importance": int(values.get("imp", 3)),
                "tags": [t for t in str(values.get("tags", "")).split(",") if t],
                "entities": [e for e in str(values.get("entities", "")).split(",") if e],
                "source": values.get("source", "user"), "access_count": 0, "created_at": now(), "updated_at": now()}
        store.data["insights"].append(item)
        store.save()
        out({**insight_json(item), "action": "added", "diff_suggestion": "ADD",
             "edges_created": {"temporal": 0, "entity": 0, "causal": 0, "semantic": 0}, "embedded": False,
             "effective_importance": 0.5, "auto_pruned": 0, "auto_pruned_ids": []})
    elif command in ("recall", "search"):
        canned = os.environ.get("FAKE_MNEMON_RESULTS")
        if canned:
            print(Path(canned).read_text())
            return
        query = " ".join(positional)
        limit = int(values.get("limit", 10))
        if values.get("basic"):
            rows = [i for i in store.active() if query.lower() in i["content"].lower()]
            out([insight_json(i) for i in rows[:limit]])
            return
        scored = sorted(((score(query, i["content"]), i) for i in store.active()), key=lambda p: -p[0])
        rows = [(s, i) for s, i in scored if s > 0][:limit]
        if command == "search":
            out([{"id": i["id"], "content": i["content"], "category": i["category"], "importance": i["importance"],
                  "tags": i["tags"], "score": s} for s, i in rows])
        else:
            out({"results": [{"id": i["id"], "content": i["content"], "category": i["category"],
                              "importance": i["importance"], "matched_via": "keyword", "score": round(s, 3)}
                             for s, i in rows], **({"hint": "sparse_results"} if len(rows) < limit / 2 else {})})
    elif command == "related":
        start = positional[0]
        if store.find(start) is None:
            fail(f"insight {start} not found")
        ids = {e["target_id"] for e in store.data["edges"] if e["source_id"] == start}
        out([{"id": i["id"], "content": i["content"], "category": i["category"], "importance": i["importance"],
              "depth": 1, "via_edge_type": "semantic"} for i in store.active() if i["id"] in ids])
    elif command == "link":
        src, tgt = positional[0], positional[1]
        for key in (src, tgt):
            if store.find(key) is None:
                fail(f"insight {key} not found")
        meta = json.loads(values.get("meta", "{}"))
        meta["created_by"] = "claude"
        for a, b in ((src, tgt), (tgt, src)):
            store.data["edges"].append({"source_id": a, "target_id": b, "edge_type": values.get("type", "semantic")})
        store.save()
        out({"status": "linked", "source_id": src, "target_id": tgt, "edge_type": values.get("type", "semantic"),
             "weight": float(values.get("weight", 0.5)), "metadata": meta})
    elif command == "forget":
        item = store.find(positional[0])
        if item is None:
            fail("insight not found or already deleted")
        item["deleted_at"] = now()
        store.save()
        out({"id": item["id"], "status": "deleted", "message": "Insight soft-deleted successfully"})
    elif command == "status":
        active = store.active()
        by_category: dict[str, int] = {}
        for i in active:
            by_category[i["category"]] = by_category.get(i["category"], 0) + 1
        out({"total_insights": len(active), "deleted_insights": len(store.data["insights"]) - len(active),
             "by_category": by_category, "edge_count": len(store.data["edges"]), "top_entities": [],
             "oplog_count": 0, "db_path": str(store.dir / "mnemon.db"), "db_size_bytes": 0})
    elif command == "import":
        draft_path = positional[0]
        draft = json.loads(Path(draft_path).read_text())
        if log:
            with open(log, "a", encoding="utf-8") as handle:
                handle.write(json.dumps({"draft": draft, "mode": oct(os.stat(draft_path).st_mode & 0o777)},
                                        ensure_ascii=False) + "\n")
        canned = os.environ.get("FAKE_MNEMON_IMPORT")
        if canned:
            print(Path(canned).read_text())
            return
        results = []
        for index, entry in enumerate(draft["insights"]):
            existing = next((i for i in store.active() if i["content"] == entry["content"]), None)
            if existing:
                results.append({"index": index, "id": existing["id"], "content": entry["content"], "action": "skipped"})
                continue
            item = {"id": str(uuid.uuid4()), "content": entry["content"], "category": entry.get("category", "general"),
                    "importance": entry.get("importance", 3), "tags": entry.get("tags", []),
                    "entities": entry.get("entities", []), "source": entry.get("source", "import"), "access_count": 0,
                    "created_at": entry.get("created_at") or now(), "updated_at": now()}
            store.data["insights"].append(item)
            results.append({"index": index, "id": item["id"], "content": item["content"], "action": "added"})
        store.save()
        out({"imported": sum(r["action"] == "added" for r in results), "updated": 0,
             "skipped": sum(r["action"] == "skipped" for r in results), "errors": 0, "edges_inserted": 0,
             "auto_pruned": 0, "auto_pruned_ids": [], "results": results})
    else:
        fail(f"unknown command {command}")


if __name__ == "__main__":
    main()
