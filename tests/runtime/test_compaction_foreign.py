"""USER.md overflow when another program stored a credential in an entry (written into ``memories.json`` by hand,
so no redaction pass saw it): the capacity error's plan shows the entry redacted (an error never quotes a
credential), an assistant that sends it back unchanged as its own source keeps the stored entry (the credential is
neither lost nor replaced by its placeholder), a merge of it is kept word for word in the local archive, and the
compaction's receipt (the ``runtime.compact`` operation every surface calls) shows it redacted. ``secrets: allow``
shows it as stored. Real stores under tmp_path.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mnemon_ls.errors import RuntimeCapacityError
from mnemon_ls.roots import resolve_root
from mnemon_ls.runtime.ops import validate_request
from mnemon_ls.runtime.source import RuntimeSource
from mnemon_ls.settings import Settings

from tests.cli.test_foreign_secrets import SECRET

FOREIGN = f"deploys with token {SECRET}"
SHOWN = "deploys with token [redacted:github-token]"
OTHERS = ["prefers tabs over spaces in Go files, and gofmt before every commit",
          "never force-push to main, ever; rebase feature branches instead"]
PENDING = "works in UTC+2 hours"


def source_with_foreign(tmp_path: Path, secrets: str = "redact") -> RuntimeSource:
    workspace = tmp_path / "ws"
    workspace.mkdir(exist_ok=True)
    settings = Settings(storageScope="workspace", runtimeMemory={"userLimitBytes": 205}, secrets=secrets)
    source = RuntimeSource(resolve_root(workspace, settings, {}), settings)
    for content in OTHERS:
        source.mutate(validate_request("add", "user", content))
    path = source.user_store.runtime_dir / "memories.json"
    document = json.loads(path.read_text())
    entry = dict(next(e for e in document["entries"] if e["target"] == "user"))
    entry["content"] = FOREIGN
    document["entries"].append(entry)
    path.write_text(json.dumps(document, indent=2) + "\n")
    return RuntimeSource(resolve_root(workspace, settings, {}), settings)


def compact(source: RuntimeSource, plan: dict, entries: list) -> dict:
    """The ``runtime.compact`` operation on a host over ``source``'s workspace (what every surface calls)."""
    from mnemon_ls.host import WorkspaceHost
    from mnemon_ls.ops.execute import call, parse
    from mnemon_ls.ops.registry import operations

    host = WorkspaceHost(source.resolution.workspace, source.settings)
    try:
        operation = operations()["runtime.compact"]
        params = parse(operation, {"target": "user", "revision": plan["revision"], "entries": entries,
                                   "pending": plan["pending"]})
        return call(operation, host, params, surface="mcp", gate_held=True)
    finally:
        host.close()


def overflow(source: RuntimeSource) -> RuntimeCapacityError:
    with pytest.raises(RuntimeCapacityError) as info:
        source.mutate(validate_request("add", "user", PENDING))
    return info.value


def stored(source: RuntimeSource) -> list[str]:
    document = json.loads((source.user_store.runtime_dir / "memories.json").read_text())
    return [e["content"] for e in document["entries"] if e["target"] == "user"]


def test_the_plan_shows_the_stored_credential_redacted(tmp_path: Path) -> None:
    error = overflow(source_with_foreign(tmp_path))
    plan = error.data["maintenance"]
    assert [e["content"] for e in plan["entries"]] == [*OTHERS, SHOWN]
    assert SECRET not in json.dumps(error.data) and SECRET not in error.message


def test_sent_back_unchanged_the_entry_stays_as_stored_and_the_receipt_shows_it_redacted(tmp_path: Path) -> None:
    source = source_with_foreign(tmp_path)
    plan = overflow(source).data["maintenance"]
    entries = [{"content": "tabs in Go; never force-push main", "importance": "normal", "sourceIndexes": [1, 2]},
               {"content": SHOWN, "importance": "normal", "sourceIndexes": [3]}]
    receipt = compact(source, plan, entries)
    assert stored(source) == ["tabs in Go; never force-push main", FOREIGN, PENDING]
    assert SECRET not in json.dumps(receipt)
    assert [e["content"] for e in receipt["maintenance"]["entries"]] == [
        "tabs in Go; never force-push main", SHOWN]


def test_merged_the_stored_text_is_kept_in_the_local_archive(tmp_path: Path) -> None:
    source = source_with_foreign(tmp_path)
    plan = overflow(source).data["maintenance"]
    merged = f"tabs; {SHOWN}"
    entries = [{"content": merged, "importance": "normal", "sourceIndexes": [1, 3]},
               {"content": OTHERS[1], "importance": "normal", "sourceIndexes": [2]}]
    receipt = compact(source, plan, entries)
    assert stored(source) == [merged, OTHERS[1], PENDING]
    archive = (source.user_store.archive_dir / "memories.jsonl").read_text()
    assert FOREIGN in [json.loads(line)["content"] for line in archive.splitlines()]
    assert [a["summary"] for a in receipt["maintenance"]["archived"]] == [OTHERS[0], SHOWN]
    assert SECRET not in json.dumps(receipt)


def test_under_secrets_allow_the_plan_shows_it_as_stored(tmp_path: Path) -> None:
    plan = overflow(source_with_foreign(tmp_path, "allow")).data["maintenance"]
    assert [e["content"] for e in plan["entries"]] == [*OTHERS, FOREIGN]
