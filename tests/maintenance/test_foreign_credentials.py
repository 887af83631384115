"""MEMORY.md overflow archival with an entry another program stored holding a credential (the entry was written
into ``memories.json`` by hand, so no redaction pass saw it).

Capacity maintenance used to pass its candidates, the store's own entries, through the redaction pass as if an
assistant had written them: the credential entry became a new, redacted entry and the stored one left hot memory
with no destination, so the archive's evidence check refused every add (``maintenance-failed``, ``no-evidence``)
until ``redact --apply``, quoting the credential in its message. Now the entry is kept as stored, or archived (the
space stores it redacted, as any space write does, and the lineage records that copy). Real git repository, real
SQLite store, the host operation every surface calls.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli.test_foreign_runtime_reads import write_by_hand
from tests.cli.test_foreign_secrets import SECRET
from tests.gitrepo import make_repo
from tests.maintenance.test_runtime import add, fact, make_host, space_contents

FOREIGN = f"Deploy token for staging is {SECRET}; rotate it monthly"


@pytest.fixture
def repo_dir(tmp_path: Path) -> Path:
    path = tmp_path / "repo"
    make_repo(path, "main")
    return path


def plant(repo_dir: Path, importance: str, *, space: bool = True):
    """A host with (optionally) an active space and the credential entry written by hand with ``importance``."""
    host = make_host(repo_dir)
    space_id = host.spaces.create_space("Project", "Build facts", active=True).record.id if space else None
    add(host, fact(0))
    write_by_hand(host.root, FOREIGN)
    path = host.root / "runtime" / "memories.json"
    document = json.loads(path.read_text())
    document["entries"][-1]["importance"] = importance
    path.write_text(json.dumps(document, indent=2) + "\n")
    return make_host(repo_dir), space_id


def stored_memory(host) -> list[str]:
    document = json.loads((host.root / "runtime" / "memories.json").read_text())
    return [e["content"] for e in document["entries"] if e["target"] == "memory"]


def test_a_credential_entry_kept_by_the_packing_stays_as_stored_and_every_add_succeeds(repo_dir: Path) -> None:
    host, space_id = plant(repo_dir, "critical")
    receipts = [add(host, fact(n)) for n in range(1, 40)]
    assert sum("maintenance" in r.detail for r in receipts) >= 3  # the archive ran, more than once
    assert FOREIGN in stored_memory(host)  # kept byte for byte: maintenance rewrites no stored entry
    assert not any("[redacted:" in c for c in stored_memory(host))
    assert fact(39) in stored_memory(host)
    assert not any("Deploy token" in c for c in space_contents(host.root, space_id))


def test_a_credential_entry_archived_into_a_space_is_stored_redacted_with_its_lineage(repo_dir: Path) -> None:
    host, space_id = plant(repo_dir, "low")
    receipts = [add(host, fact(n)) for n in range(1, 20)]
    archived = [a for r in receipts if "maintenance" in r.detail for a in r.detail["maintenance"]["archived"]]
    assert not any("Deploy token" in c for c in stored_memory(host))
    stored = [c for c in space_contents(host.root, space_id) if "Deploy token" in c]
    assert stored == ["Deploy token for staging is [redacted:github-token]; rotate it monthly"]
    assert [a["summary"] for a in archived if "Deploy token" in a["summary"]] == stored
    lineage = (host.root / "runtime" / "archived" / "lineage.jsonl").read_text()
    assert SECRET not in lineage and "Deploy token for staging is [redacted:github-token]" in lineage


def test_a_credential_entry_archived_locally_keeps_its_text_in_the_runtime_archive(repo_dir: Path) -> None:
    host, _ = plant(repo_dir, "low", space=False)
    for n in range(1, 20):
        add(host, fact(n))
    assert not any("Deploy token" in c for c in stored_memory(host))
    archive = (host.root / "runtime" / "archived" / "memories.jsonl").read_text()
    assert [json.loads(line)["content"] for line in archive.splitlines() if "Deploy token" in line] == [FOREIGN]


def test_the_receipt_of_an_add_that_archived_shows_the_kept_credential_entry_redacted(repo_dir: Path) -> None:
    from mnemon_ls.ops.execute import call, parse
    from mnemon_ls.ops.registry import operations

    host, _ = plant(repo_dir, "critical")
    operation = operations()["runtime.mutate"]
    receipts = [call(operation, host, parse(operation, {"action": "add", "target": "memory", "content": fact(n)}),
                     surface="mcp", gate_held=True) for n in range(1, 20)]
    archived = [r for r in receipts if "maintenance" in r]
    assert archived and all(SECRET not in json.dumps(r) for r in receipts)
    assert "Deploy token for staging is [redacted:github-token]; rotate it monthly" in archived[0]["kept"]
    assert FOREIGN in stored_memory(host)
