"""What ``mnemon-ls pack inspect``/``export`` print is what the pack holds, counted from the content itself
(Runtime entries per target, documents per status, spaces and the items in each), and an import refused
for overflow names the bytes the root really holds now."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from mnemon_ls import packs
from mnemon_ls.errors import RuntimeCapacityError
from mnemon_ls.runtime import ops
from mnemon_ls.runtime.model import used_bytes
from tests.helpers import procs
from tests.helpers.packs import host_on, items_of, seed
from tests.helpers.zygote import mnemon_command


def _cli(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    result = subprocess.run([*mnemon_command(), *args], cwd=tmp_path, capture_output=True, text=True,
                            timeout=procs.WAIT_SECONDS,
                            env=procs.child_env(HOME=str(tmp_path / "home"), MNEMON_SEMANTIC="off"))
    assert "Traceback" not in result.stderr
    return result


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """A seeded root (3 entries: 1 USER.md, 2 MEMORY.md; 1 active + 1 archived document; space Project with
    2 items) plus a second space with 3 items of which one is forgotten, and an empty third space."""
    root = tmp_path / "root"
    seed(root)
    host = host_on(root)
    try:
        other = host.spaces.create_space("Other", "more", active=True).record.id
        ids = [host.spaces.remember(f"other fact {n}", space_id=other).id for n in range(3)]
        host.spaces.forget(other, ids[0])
        host.spaces.create_space("Empty", "nothing yet", active=False)
    finally:
        host.close()
    return root


def test_inspect_and_export_print_the_counts_of_what_the_pack_holds(root: Path, tmp_path: Path) -> None:
    pack = tmp_path / "p.zip"
    common = ("--scope", "custom", "--data-dir", str(root), "--runtime-user-scope", "storage")
    exported = _cli(tmp_path, "pack", "export", "-o", str(pack), "--include-user-profile", *common)
    assert exported.returncode == 0, exported.stderr
    inspected = _cli(tmp_path, "pack", "inspect", str(pack), *common)
    assert inspected.returncode == 0, inspected.stderr

    # the real content of the root the pack came from
    memories = json.loads((root / "runtime" / "memories.json").read_bytes())["entries"]
    per_target = {t: sum(1 for e in memories if e["target"] == t) for t in ("user", "memory")}
    index = json.loads((root / "documents" / "index.json").read_bytes())["documents"]
    active = sum(1 for d in index if d["status"] == "active")
    catalog = json.loads((root / "data" / ".dsh-memory-bodies.json").read_bytes())["bodies"]
    items = {b["id"]: len(items_of(root / "data" / b["id"] / "mnemon.db")) for b in catalog}
    assert (per_target, active, len(index), sorted(items.values())) == ({"user": 1, "memory": 2}, 1, 2, [0, 2, 2])

    expected = [f"  runtime: 3 entries ({per_target['user']} in USER.md, {per_target['memory']} in MEMORY.md),",
                f"  documents: {len(index)} documents ({active} active, {len(index) - active} archived),",
                f"  memory-spaces: {len(catalog)} spaces holding {sum(items.values())} items,"]
    for output in (exported.stdout, inspected.stdout):
        lines = output.splitlines()
        for start in expected:
            assert any(line.startswith(start) for line in lines), (start, output)
    for body in catalog:
        count = items[body["id"]]
        assert any(line.startswith(f"  space {body['id']}") and line.endswith(
            f": {body['name']}, {count} item{'' if count == 1 else 's'}") for line in inspected.stdout.splitlines()), \
            (body, inspected.stdout)

    data = json.loads(_cli(tmp_path, "pack", "inspect", str(pack), "--json", *common).stdout)
    assert {s["id"]: s["items"] for s in data["spaces"]} == items
    assert data["runtime"] == per_target
    # the manifest's summary keeps the reference's meaning (memory-spaces items = spaces)
    assert [row["items"] for row in data["summary"]] == [len(memories), len(index), len(catalog)]


def test_a_refused_overflowing_import_names_the_bytes_held_now(tmp_path: Path) -> None:
    seed(tmp_path / "a")
    root = tmp_path / "b"
    host = host_on(root, runtimeMemory={"memoryLimitBytes": 60})
    try:
        host.runtime.mutate(ops.validate_request("add", "memory", "x" * 40))
        now = used_bytes(host.runtime.read().memory, "memory")
        source = host_on(tmp_path / "a")
        try:
            data = packs.export_pack(source).data
        finally:
            source.close()
        before = procs.tree_snapshot(root)
        with pytest.raises(RuntimeCapacityError) as info:
            host.import_pack(data)
    finally:
        host.close()
    assert now == 40
    error = info.value
    assert (error.data["used"], error.data["limit"]) == (now, 60)
    assert error.data["projected"] > 60
    assert f"after the import (now {now})" in error.message
    assert procs.tree_snapshot(root) == before
    assert os.listdir(root / "runtime")  # untouched, still there
