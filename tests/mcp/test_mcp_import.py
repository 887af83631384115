"""``mnemon_import_propose`` through the official SDK client over stdio: the plan's items become record
proposals (a person reviews them), no memory is written, a second call proposes nothing again, and an item
whose proposal a person rejected is not imported by ``mnemon-ls import``."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

from mnemon_ls.records import RecordsSource
from tests.helpers.zygote import mnemon_command
from tests.mcp.conftest import mcp_session, server_env
from tests.mcp.test_mcp_server import args_for, call

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "imports"


async def test_import_propose_files_proposals_and_writes_no_memory(workspace: Path, data_dir: Path,
                                                                   tmp_path: Path) -> None:
    shutil.copytree(FIXTURES / "agents-md", workspace, dirs_exist_ok=True)
    env = server_env(DSH_HOME=str(tmp_path / "dsh"), HOME=str(tmp_path))
    async with mcp_session(args_for(workspace, data_dir), env=env) as session:
        error, message = await call(session, "mnemon_import_propose", {"source": "agents-md"})
        assert not error, message
        assert message.startswith("Filed 4 import proposal(s) from agents-md for review (0 were proposed before")
        assert "Nothing was written to memory." in message
        error, again = await call(session, "mnemon_import_propose", {"source": "agents-md"})
        assert not error and again.startswith("Filed 0 import proposal(s) from agents-md for review (4 were proposed")
        error, bad = await call(session, "mnemon_import_propose", {"source": "emacs"})
        assert error and "invalid-input: source" in bad
    records = [json.loads(line) for line in
               (workspace / ".dsh" / "workspace-memory" / "records.jsonl").read_text().splitlines()]
    assert len(records) == 4
    assert all(r["governance"]["origin"] == "model-suggested" and r["governance"]["verification"] == "unverified"
               and r["governance"]["sourceRefs"] == [{"kind": "file", "id": str(workspace / "AGENTS.md")}]
               and "import" in r["tags"] and "import-agents-md" in r["tags"] for r in records)
    assert sorted(t for r in records for t in r["tags"] if t.startswith("to-")) == [
        "to-document", "to-memory", "to-memory", "to-user"]
    # no memory was written: runtime memory is empty, there is no document and no ledger
    for name in ("USER.md", "MEMORY.md"):
        path = data_dir / "runtime" / name
        assert not path.exists() or path.read_text() == ""
    assert not (data_dir / "state" / "imports.jsonl").exists()
    assert not (data_dir / "documents" / "index.json").exists() or \
        json.loads((data_dir / "documents" / "index.json").read_text()).get("documents") in ([], None)
    # a person rejects the USER.md proposal; the import then skips it and writes the rest
    person = RecordsSource(workspace, env={"DSH_HOME": str(tmp_path / "dsh")})
    user_one = next(r for r in records if "to-user" in r["tags"])
    person.reject(user_one["id"])
    result = subprocess.run(mnemon_command("import", "agents-md", "--json", *args_for(workspace, data_dir)),
                            capture_output=True, text=True, env=env, cwd=workspace, timeout=120)
    assert result.returncode == 0, result.stderr
    done = json.loads(result.stdout)
    assert (done["counts"]["rejected"], done["counts"]["written"]) == (1, 3)
    assert [a["destination"] for a in done["applied"]].count("user") == 0
    assert "Use `pnpm` for the web client" in (data_dir / "runtime" / "MEMORY.md").read_text()


async def test_import_propose_with_no_file_of_the_source_says_so_and_points_to_no_next_step(
        workspace: Path, data_dir: Path, tmp_path: Path) -> None:
    """It answered "Filed 0 import proposal(s) ... A person reviews them ... and imports with `mnemon-ls import
    agents-md --dry-run`": an assistant passed on a next step for a file that is not there (found by a new
    user). Now it says which file it looked for, as the dry run does, and files nothing."""
    env = server_env(DSH_HOME=str(tmp_path / "dsh"), HOME=str(tmp_path))
    (tmp_path / "no-bank").mkdir()  # a directory without the format's files
    async with mcp_session(args_for(workspace, data_dir), env=env) as session:
        error, message = await call(session, "mnemon_import_propose", {"source": "agents-md"})
        assert not error, message
        assert message == "Found no agents-md file to read (looked for AGENTS.md): nothing to propose."
        # A directory given as the path and holding none of the source's files is refused, naming it (h-small49).
        error, message = await call(session, "mnemon_import_propose",
                                    {"source": "cline", "path": str(tmp_path / "no-bank")})
        assert error
        assert message.endswith(f"invalid-input: path: {tmp_path / 'no-bank'} holds no file cline reads: looked "
                                "for memory-bank/*.md, *.md in it")
    assert not (workspace / ".dsh" / "workspace-memory" / "records.jsonl").exists()


async def test_import_propose_lists_home_imports_for_approval_and_reads_them_only_when_allowed(
        workspace: Path, data_dir: Path, tmp_path: Path) -> None:
    home = tmp_path / "home-with-notes"
    (home / ".aws").mkdir(parents=True)
    (home / "notes.md").write_text("- Deploys go through staging first.\n", encoding="utf-8")
    (home / ".aws" / "credentials").write_text("- aws_secret_access_key never-shown\n", encoding="utf-8")
    (workspace / "CLAUDE.md").write_text("- Notes: @~/notes.md and @~/.aws/credentials\n- Build with make.\n",
                                         encoding="utf-8")
    env = server_env(DSH_HOME=str(tmp_path / "dsh"), HOME=str(home))
    async with mcp_session(args_for(workspace, data_dir), env=env) as session:
        error, message = await call(session, "mnemon_import_propose", {"source": "claude-code"})
        assert not error, message
        assert message.startswith("Filed 2 import proposal(s) from claude-code")
        assert f"needs approval {home / 'notes.md'} (imported by {workspace / 'CLAUDE.md'} (@~/notes.md))" in message
        assert f"refused {home / '.aws' / 'credentials'}: is imported by" in message
        assert "Deploys go through staging" not in message and "never-shown" not in message
        error, allowed = await call(session, "mnemon_import_propose", {"source": "claude-code",
                                                                       "allow_outside": True})
        assert not error
        assert allowed.startswith("Filed 1 import proposal(s) from claude-code for review (2 were proposed before")
        assert "needs approval" not in allowed and "credential location (.aws holds AWS credentials)" in allowed
        assert "never-shown" not in allowed
