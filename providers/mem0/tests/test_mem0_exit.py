"""A CLI recall whose Mem0 space times out while the engine is still opening exits cleanly: an attack pass
saw ``FATAL: exception not rethrown`` and exit code 134 after the answer was printed (the daemon thread
opening Mem0 was inside gRPC's native code when the interpreter finalised). The process must end with the
federated answer, a note naming the failed provider, exit code 0 and nothing on stderr."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from mnemon_ls.spaces import SpacesService


def test_recall_after_a_provider_timeout_while_mem0_opens_exits_cleanly(tmp_path: Path) -> None:
    data = tmp_path / "data"
    service = SpacesService(data, provider_timeout=300)
    service.create_space("Project", "project decisions", active=True)
    service.remember("We chose SQLite FTS5 for the side index")
    service.thirdparty.enable("mem0", {"dataPath": str(tmp_path / "mem0")})
    team = service.create_space("Team", "team decisions", active=True, provider="mem0").record.id
    service.close()
    env = {k: v for k, v in os.environ.items() if not k.startswith("MNEMON_")}
    # 1200 ms: past the first imports, while Mem0 is importing qdrant_client/gRPC and opening its store
    # (it takes ~2.5 s here), which is where the interpreter's exit aborted the process
    env.update(MNEMON_DATA_DIR=str(data), MNEMON_STORAGE_SCOPE="global", MNEMON_SEMANTIC="off",
               MNEMON_PROVIDER_TIMEOUT_MS="1200")
    done = subprocess.run([sys.executable, "-m", "mnemon_ls", "recall", "side index FTS5"], capture_output=True,
                          text=True, env=env, cwd=tmp_path, timeout=300)
    assert (done.returncode, done.stderr) == (0, ""), done.stderr
    lines = done.stdout.splitlines()
    assert "Project: We chose SQLite FTS5 for the side index" in lines[0], done.stdout
    assert f"note: space Team ({team}) failed: provider mem0 did not answer within 1200 ms (the setting " \
           "providerTimeoutMs; `mnemon-ls provider test mem0` says why it is slow or down)" in lines, done.stdout
