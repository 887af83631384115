"""What the two Runtime mutation benches share (``bench_runtime.py`` section 0 and ``runtime_mutation.py``): the
entry texts and the full store they fill, the plans of add / replace / remove that leave a store as it was, the
TypeScript reference (installed with npm, driven through ``ts_runtime_driver.mjs``) and an fsync counter.

``mnemon_ls`` is imported inside the functions that need it, never at import: ``runtime_mutation.py --repo``
puts another checkout first on ``sys.path`` before it calls them.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
#: The reference's npm packages (``dsh-mnemon``: the runtime package's peer dependency).
TS_PACKAGES = ("dsh-mnemon-source-runtime@0.5.8", "dsh-mnemon@0.5.13")


def content(i: int, size: int = 96) -> str:
    """Entry text number ``i``, exactly ``size`` characters (ASCII, so also bytes) of realistic words."""
    base = (f"Entry {i:03d}: the service in pkg/module_{i % 13} needs `make check` before a push; "
            f"owner team-{i % 7}; see docs/adr/{i:04d}.md")
    base = (base + " padding words to reach the size" * 4)[:size]
    return base.rstrip() + "x" * (size - len(base.rstrip()))


def fill(store: Any, memory_entries: int = 100, user_entries: int = 40) -> Any:
    """Fill a ``RuntimeStore`` (or anything with its ``mutate``) with ``memory_entries`` MEMORY.md entries of 96
    characters (every 10th branch-scoped, importances rotating; ~10 KB at 100) and ``user_entries`` USER.md
    entries of 98 (~4 KB at 40); returns ``store``."""
    from mnemon_ls.runtime import ops

    importances = ("normal", "normal", "critical", "low")
    for i in range(memory_entries):
        branches = [("main", "feature/x")[i % 2]] if i % 10 == 0 else None
        store.mutate(ops.validate_request("add", "memory", content(i), importance=importances[i % 4],
                                          branches=branches))
    for i in range(user_entries):
        store.mutate(ops.validate_request("add", "user", "User " + content(1000 + i, 93)))
    return store


def plans(last: Any) -> dict[str, list[tuple[dict[str, Any], bool]]]:
    """op (``add``, ``replace``, ``remove``) -> its steps ``(request as the reference takes it, timed?)``; each op's
    steps leave the store as it was. ``last``: the store's last MEMORY.md entry (removed, then added back)."""
    extra, other, victim = content(900), content(901), content(50)
    plain = {"action": "add", "target": "memory"}
    return {
        "add": [(dict(plain, content=extra), True), ({"action": "remove", "target": "memory", "oldText": extra}, False)],
        "replace": [({"action": "replace", "target": "memory", "content": other, "oldText": victim}, True),
                    ({"action": "replace", "target": "memory", "content": victim, "oldText": other}, True)],
        "remove": [({"action": "remove", "target": "memory", "oldText": last.content}, True),
                   (dict(plain, content=last.content, importance=last.importance), False)],
    }


def validated(raw: dict[str, Any]) -> Any:
    """A step of :func:`plans` as a ``MutationRequest`` of the code under measurement."""
    from mnemon_ls.runtime import ops

    return ops.validate_request(raw["action"], raw["target"], raw.get("content"), raw.get("oldText"),
                                raw.get("importance"), raw.get("branches"))


def ensure_reference(tsref: Path) -> Path | None:
    """``<tsref>/node_modules`` holding the TypeScript reference, installed with npm when missing; ``None`` (with a
    printed reason) when node or npm is not there or the install fails."""
    modules = tsref / "node_modules"
    if not shutil.which("node"):
        print("reference: node not found; skipped")
        return None
    if not (modules / "dsh-mnemon-source-runtime" / "lib" / "index.js").exists():
        if not shutil.which("npm"):
            print("reference: npm not found; skipped")
            return None
        tsref.mkdir(parents=True, exist_ok=True)
        print(f"reference: npm install {' '.join(TS_PACKAGES)} into {tsref}")
        proc = subprocess.run(["npm", "install", "--no-audit", "--no-fund", "--legacy-peer-deps", "--prefix",
                               str(tsref), *TS_PACKAGES], capture_output=True, text=True)
        if proc.returncode != 0:
            print(f"reference: npm install failed; skipped\n{proc.stderr[-2000:]}")
            return None
    return modules


class TsDriver:
    """The node process of ``ts_runtime_driver.mjs`` on one root (``prefix``: a command to run node under, such
    as ``strace``); :meth:`mutate` returns ``(wall ns, CPU ns)`` of the reference's own ``mutate``."""

    def __init__(self, modules: Path, root: Path, prefix: list[str] | None = None) -> None:
        self.proc = subprocess.Popen([*(prefix or []), "node", str(HERE / "ts_runtime_driver.mjs"), str(modules),
                                      str(root)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)

    def mutate(self, request: dict[str, Any]) -> tuple[int, int]:
        """Run one request (the reference's shape: ``action``, ``target``, ``content``, ``oldText``...); raises
        ``RuntimeError`` with the reference's error."""
        assert self.proc.stdin and self.proc.stdout
        self.proc.stdin.write(json.dumps({"op": "mutate", "request": request}) + "\n")
        reply = json.loads(self.proc.stdout.readline())
        if "error" in reply:
            raise RuntimeError(f"reference: {reply['error']}")
        assert not reply["message"].startswith("Entry already"), reply
        return int(reply["ns"]), int(reply["cpuNs"])

    def close(self) -> None:
        """Ask the driver to quit and wait for it (60 s at most)."""
        assert self.proc.stdin
        self.proc.stdin.write(json.dumps({"op": "quit"}) + "\n")
        self.proc.stdin.flush()
        self.proc.wait(timeout=60)


class FsyncCounter:
    """Calls the real ``os.fsync`` and counts the calls (install it as ``os.fsync`` around durable samples)."""

    def __init__(self) -> None:
        self.real = os.fsync
        self.calls = 0

    def __call__(self, fd: int) -> None:
        self.calls += 1
        self.real(fd)
