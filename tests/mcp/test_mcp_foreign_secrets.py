"""``mnemon_wake`` and ``mnemon_recall`` over the real ``mnemon-ls mcp`` send a credential another program stored
redacted under ``secrets: redact`` and leave the files as they are: a ``memories.json`` entry written by hand, an
item the Mnemon CLI inserted into ``mnemon.db`` (tests/cli/test_foreign_secrets.py has the command line's side)."""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests.cli.test_foreign_secrets import SECRET, cli_remember, write_by_hand
from tests.helpers.zygote import mnemon_command
from tests.mcp.conftest import answer, mcp_session, server_env


async def test_wake_and_recall_send_what_another_program_stored_redacted(workspace: Path, data_dir: Path) -> None:
    args = ["--workspace", str(workspace), "--scope", "custom", "--data-dir", str(data_dir)]
    env = server_env(MNEMON_SEMANTIC="off", MNEMON_RUNTIME_USER_SCOPE="storage")

    def cli(*argv: str) -> None:
        done = subprocess.run([*mnemon_command(), *argv, *args], capture_output=True, text=True, env=env,
                              cwd=workspace, timeout=60)
        assert done.returncode == 0, done.stderr

    cli("runtime", "add", "--target", "memory", "--content", "the suite runs with pytest -n 2")
    cli("space", "create", "--name", "Project", "--description", "facts", "--active")
    cli("remember", "the staging deploy runs make release")
    written = write_by_hand(data_dir, f"deploy token is {SECRET} for the staging box")
    db_path = data_dir / "data" / "default" / "mnemon.db"
    cli_remember(db_path, "c0ffee00-0000-4000-8000-000000000002", f"the staging deploy token is {SECRET}")
    async with mcp_session(args, env=env) as session:
        wake = await answer(session, "mnemon_wake", {})
        recall = await answer(session, "mnemon_recall", {"query": "staging deploy token"})
    assert SECRET not in wake and SECRET not in recall
    assert "deploy token is [redacted:github-token] for the staging box" in wake
    assert "MEMORY.md entry 2 holds what looks like a credential (github-token) that another program wrote" in wake
    assert "the staging deploy token is [redacted:github-token]" in recall
    assert "item c0ffee00-0000-4000-8000-000000000002 holds what looks like a credential (github-token)" in recall
    assert (data_dir / "runtime" / "memories.json").read_bytes() == written
    assert SECRET.encode() in written
