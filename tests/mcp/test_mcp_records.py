"""``mnemon_records_propose`` and ``mnemon_records_search`` through the official SDK client over stdio."""

from __future__ import annotations

import json
from pathlib import Path

from mnemon_ls.records import RecordsSource
from tests.mcp.conftest import mcp_session, server_env
from tests.mcp.test_mcp_server import args_for, call


async def test_propose_then_search_and_a_person_verifies(workspace: Path, data_dir: Path, tmp_path: Path) -> None:
    dsh = tmp_path / "dsh"
    env = server_env(DSH_HOME=str(dsh), DSH_USER_ID="ana")
    async with mcp_session(args_for(workspace, data_dir), env=env) as session:
        error, message = await call(session, "mnemon_records_propose", {
            "title": "Test command", "content": "Run the tests with pytest -n 2", "type": "convention",
            "source_refs": [{"kind": "file", "id": "pyproject.toml"}]})
        assert not error and message.startswith("Proposal recorded: Test command (id: memory:agent:convention:")
        record_id = message.split("(id: ")[1].split(",")[0]
        error, found = await call(session, "mnemon_records_search", {"query": "pytest"})
        assert not error
        assert found == (f"- [project convention; proposal] Test command (id: {record_id})\n"
                         "  Run the tests with pytest -n 2\n1 record(s)")
        error, message = await call(session, "mnemon_records_search", {"query": "nothing like it"})
        assert (error, message) == (False, "No records found.")
        # bad input: a clear tool error, nothing written
        before = (workspace / ".dsh" / "workspace-memory" / "records.jsonl").read_bytes()
        error, message = await call(session, "mnemon_records_propose", {"title": " ", "content": "x"})
        assert error and message.endswith("invalid-input: title: must not be empty")
        error, message = await call(session, "mnemon_records_propose", {"title": "t", "content": "x",
                                                                         "record_scope": "shared-project"})
        assert error and "record_scope" in message
        assert (workspace / ".dsh" / "workspace-memory" / "records.jsonl").read_bytes() == before
        # a person verifies it from the CLI's Source: the search shows the new state
        person = RecordsSource(workspace, user_id="ana", env={"DSH_HOME": str(dsh)})
        person.verify(record_id)
        error, found = await call(session, "mnemon_records_search", {"proposals_only": True})
        assert (error, found) == (False, "No records found.")
        error, found = await call(session, "mnemon_records_search", {"verification": "verified"})
        assert f"[project convention; verified] Test command (id: {record_id})" in found
    line = json.loads((workspace / ".dsh" / "workspace-memory" / "records.jsonl").read_text().splitlines()[0])
    assert line["provenance"]["kind"] == "agent" and line["provenance"]["sessionId"].startswith("mcp-")
    assert line["governance"]["sourceRefs"] == [{"kind": "file", "id": "pyproject.toml"}]
